package tokenizer

import (
	"slices"
	"testing"
)

// HuggingFace's BPE joins the adjacent pair that comes earliest in the
// merge list, whatever ids the merges make, and reads any order of the
// list. On "hel" with the merges h+e and e+l, the first listed wins.
func TestMergeListOrderIsPriority(t *testing.T) {
	for _, c := range []struct {
		name   string
		merges []any
		want   []int
	}{
		{"h e first", []any{"h e", "e l", "l l", "he ll"}, []int{256, 'l'}}, // he, l
		{"e l first", []any{"e l", "h e", "l l", "he ll"}, []int{'h', 261}}, // h, el
		// Out of id order: hell (258) is listed before he (256) and ll (257).
		{"out of id order", []any{"he ll", "h e", "l l"}, []int{256, 'l'}},
	} {
		dir := writeTiny(t, func(f map[string]any) {
			model(f)["vocab"].(map[string]any)["el"] = 261
			model(f)["merges"] = c.merges
		}, nil)
		tk, err := Load(dir)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := tk.Encode("hel"); !slices.Equal(got, c.want) {
			t.Errorf("%s: Encode(hel) = %v, want %v", c.name, got, c.want)
		}
		if got := tk.Encode("hello"); !slices.Equal(got, []int{258, 'o'}) && c.name == "out of id order" {
			t.Errorf("%s: Encode(hello) = %v, want [258 111]", c.name, got)
		}
	}
}

// With ignore_merges a piece that is a whole vocabulary token is that
// token; without it the piece is merged, which gives a token only if the
// merges make it. "hell" below is in the vocabulary but no merge makes it.
func TestIgnoreMerges(t *testing.T) {
	for _, c := range []struct {
		ignore bool
		want   []int
	}{
		{true, []int{258, 'o'}},
		{false, []int{256, 257, 'o'}}, // he, ll, o
	} {
		dir := writeTiny(t, func(f map[string]any) {
			model(f)["merges"] = []any{"h e", "l l"}
			model(f)["ignore_merges"] = c.ignore
			// A pattern that makes "hell" a piece of its own.
			steps := f["pre_tokenizer"].(map[string]any)["pretokenizers"].([]any)
			steps[0].(map[string]any)["pattern"] = map[string]any{"Regex": `hell`}
		}, nil)
		tk, err := Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		if got := tk.Encode("hello"); !slices.Equal(got, c.want) {
			t.Errorf("ignore_merges %v: Encode(hello) = %v, want %v", c.ignore, got, c.want)
		}
	}
}

// A byte the vocabulary has no token for (SmolLM2 lacks 21) is dropped
// before merging, as HuggingFace drops a character it cannot look up, so
// its neighbours may merge; llama.cpp keeps it as a barrier (FromGGUF).
func TestMissingByteToken(t *testing.T) {
	dir := writeTiny(t, func(f map[string]any) {
		delete(model(f)["vocab"].(map[string]any), string(byteToRune[0x04]))
		steps := f["pre_tokenizer"].(map[string]any)["pretokenizers"].([]any)
		steps[0].(map[string]any)["pattern"] = map[string]any{"Regex": ` `}
	}, nil)
	tk, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tk.Encode("h\x04e l\x04l\x04o"), []int{256, ' ', 257, 'o'}; !slices.Equal(got, want) {
		t.Errorf("Encode = %v, want %v (0x04 dropped, he and ll merged)", got, want)
	}
	tk.pieces.byteBarrier = true
	if got, want := tk.Encode("h\x04e l\x04l\x04o"), []int{'h', 'e', ' ', 'l', 'l', 'o'}; !slices.Equal(got, want) {
		t.Errorf("with byteBarrier, Encode = %v, want %v", got, want)
	}
}

// Llama 3.2's vocabulary has 588 tokens whose bytes merge to something
// else, so its ignore_merges matters: with it (as the file says) such a
// piece is one token, without it several. Ids from HuggingFace's
// tokenizers 0.23.3 on the file, and on the file with ignore_merges false.
func TestIgnoreMergesLlama32(t *testing.T) {
	tk := llama32(t)
	const text = " yönelik Федерации"
	if got, want := tk.Encode(text), []int{110692, 111112}; !slices.Equal(got, want) {
		t.Errorf("Encode(%q) = %v, want %v", text, got, want)
	}
	if n := len(tk.pieces.notWhole); n != 588 {
		t.Errorf("%d tokens do not merge back into themselves, want 588", n)
	}
	tk.pieces.ignoreMerges = false
	defer func() { tk.pieces.ignoreMerges = true }()
	if got, want := tk.Encode(text), []int{98513, 8301, 1609, 126723, 7753, 54686}; !slices.Equal(got, want) {
		t.Errorf("without ignore_merges, Encode(%q) = %v, want %v", text, got, want)
	}
}

// Every token of SmolLM2's vocabulary but its 17 special tokens merges back
// into itself, so its ignore_merges (unset) changes no id there.
func TestSmolLM2TokensMergeToThemselves(t *testing.T) {
	tk := smolLM2(t)
	for tok := range tk.pieces.notWhole {
		if id := tk.ranks[tok]; !tk.IsSpecial(id) {
			t.Errorf("token %d %q does not merge back into itself", id, tok)
		}
	}
	if n := len(tk.pieces.notWhole); n != 17 {
		t.Errorf("%d tokens do not merge back into themselves, want the 17 special ones", n)
	}
}
