package tokenizer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ragen-go/ragen/tokenizer/tokenizertest"
)

// tinyFile is a small byte-level BPE tokenizer.json: the 256 byte tokens
// (ids 0-255, in byte order), the merges h+e -> "he" (256), l+l -> "ll"
// (257), he+ll -> "hell" (258), an added special token <|end|> (259) and a
// non-special one <x> (260).
func tinyFile() map[string]any {
	vocab := map[string]any{}
	for b := 0; b < 256; b++ {
		vocab[string(byteToRune[b])] = b
	}
	vocab["he"], vocab["ll"], vocab["hell"] = 256, 257, 258
	added := func(id int, content string, special bool) map[string]any {
		return map[string]any{"id": id, "content": content, "single_word": false, "lstrip": false,
			"rstrip": false, "normalized": false, "special": special}
	}
	return map[string]any{
		"version":      "1.0",
		"added_tokens": []any{added(259, "<|end|>", true), added(260, "<x>", false)},
		"normalizer":   map[string]any{"type": "NFC"},
		"pre_tokenizer": map[string]any{"type": "Sequence", "pretokenizers": []any{
			map[string]any{"type": "Split", "pattern": map[string]any{"Regex": qwen2Pattern},
				"behavior": "Isolated", "invert": false},
			map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": false},
		}},
		"post_processor": map[string]any{"type": "ByteLevel"},
		"decoder":        map[string]any{"type": "ByteLevel"},
		"model": map[string]any{
			"type": "BPE", "dropout": nil, "unk_token": nil, "continuing_subword_prefix": "",
			"end_of_word_suffix": "", "fuse_unk": false, "byte_fallback": false, "ignore_merges": false,
			"vocab":  vocab,
			"merges": []any{[]any{"h", "e"}, []any{"l", "l"}, []any{"he", "ll"}},
		},
	}
}

// writeTiny writes tinyFile, changed by edit, into a new folder, with
// tokenizer_config.json when cfg is not nil; it returns the folder.
func writeTiny(t *testing.T, edit func(f map[string]any), cfg map[string]any) string {
	t.Helper()
	f := tinyFile()
	if edit != nil {
		edit(f)
	}
	dir := t.TempDir()
	writeJSON(t, filepath.Join(dir, "tokenizer.json"), f)
	if cfg != nil {
		writeJSON(t, filepath.Join(dir, "tokenizer_config.json"), cfg)
	}
	return dir
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func model(f map[string]any) map[string]any { return f["model"].(map[string]any) }

func TestLoadTiny(t *testing.T) {
	dir := writeTiny(t, nil, map[string]any{"eos_token": "<|end|>", "pad_token": map[string]any{"content": "<x>"}})
	for _, path := range []string{dir, filepath.Join(dir, "tokenizer.json")} {
		tk, err := Load(path)
		if err != nil {
			t.Fatalf("Load(%s): %v", path, err)
		}
		if tk.fast == nil {
			t.Error("Qwen2's pattern did not select the fast splitter")
		}
		for text, want := range map[string][]int{
			"hello":       {258, 'o'},      // h e l l o -> he ll -> hell, o
			"he<|end|>ll": {256, 259, 257}, // the added token cuts the text
			"<x><|end|>":  {260, 259},
			"e\u0301":     {0xC3, 0xA9},                   // NFC composes é
			"<|end|":      {'<', '|', 'e', 'n', 'd', '|'}, // not quite the token
			"hell hello!": {258, ' ', 258, 'o', '!'},      // " hello" is one piece
		} {
			if got := tk.Encode(text); !slices.Equal(got, want) {
				t.Errorf("Encode(%q) = %v, want %v", text, got, want)
			}
		}
		if tk.EOS() != 259 || tk.Pad() != 260 || !tk.IsSpecial(259) || !tk.IsSpecial(260) {
			t.Errorf("EOS %d, Pad %d, special %v %v; want 259, 260, true, true (pad is special through the config)",
				tk.EOS(), tk.Pad(), tk.IsSpecial(259), tk.IsSpecial(260))
		}
	}
}

// Without tokenizer_config.json there is no eos or pad.
func TestLoadWithoutConfig(t *testing.T) {
	tk, err := Load(writeTiny(t, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	if tk.EOS() != -1 || tk.Pad() != -1 || tk.ChatTemplate() != "" {
		t.Errorf("EOS %d, Pad %d, template %q; want -1, -1, empty", tk.EOS(), tk.Pad(), tk.ChatTemplate())
	}
}

// A pattern other than Qwen2's runs through regexp2, gaps between matches
// included.
func TestLoadOtherPattern(t *testing.T) {
	dir := writeTiny(t, func(f map[string]any) {
		steps := f["pre_tokenizer"].(map[string]any)["pretokenizers"].([]any)
		steps[0].(map[string]any)["pattern"] = map[string]any{"Regex": `l+`}
	}, nil)
	tk, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if tk.fast != nil {
		t.Fatal("fast splitter selected for a pattern that is not Qwen2's")
	}
	// Pieces "he", "ll", "o": "hell" cannot form across the cut.
	if got, want := tk.Encode("hello"), []int{256, 257, 'o'}; !slices.Equal(got, want) {
		t.Errorf("Encode = %v, want %v", got, want)
	}
}

func TestLoadErrors(t *testing.T) {
	set := func(path string, v any) func(map[string]any) {
		return func(f map[string]any) {
			keys := strings.Split(path, ".")
			m := f
			for _, k := range keys[:len(keys)-1] {
				m = m[k].(map[string]any)
			}
			m[keys[len(keys)-1]] = v
		}
	}
	for _, c := range []struct {
		name string
		edit func(map[string]any)
		cfg  map[string]any
		want string
	}{
		{"not BPE", set("model.type", "WordPiece"), nil, `model type "WordPiece" is not supported`},
		{"unigram", set("model.type", "Unigram"), nil, `model type "Unigram"`},
		{"merge of unknown token", set("model.merges", []any{"h e", "l l", "he q!"}), nil, "missing from the vocab"},
		{"vocab outside byte alphabet", func(f map[string]any) { model(f)["vocab"].(map[string]any)["a b"] = 300 }, nil, "byte-level alphabet"},
		{"float id", func(f map[string]any) { model(f)["vocab"].(map[string]any)["he"] = 256.5 }, nil, `vocab entry "he": the id is not an integer`},
		{"dropout", set("model.dropout", 0.1), nil, "dropout"},
		{"normalizer", set("normalizer", map[string]any{"type": "Lowercase"}), nil, `normalizer "Lowercase" is not supported`},
		{"pre-tokenizer", set("pre_tokenizer", map[string]any{"type": "Whitespace"}), nil, `pre-tokenizer "Whitespace" is not supported`},
		{"no byte level", set("pre_tokenizer", map[string]any{"type": "Split", "pattern": map[string]any{"Regex": "a"}, "behavior": "Isolated"}), nil, "no ByteLevel"},
		{"split behavior", set("pre_tokenizer", map[string]any{"type": "Split", "pattern": map[string]any{"Regex": "a"}, "behavior": "Removed"}), nil, `behavior "Removed"`},
		{"bad regex", set("pre_tokenizer", map[string]any{"type": "Sequence", "pretokenizers": []any{
			map[string]any{"type": "Split", "pattern": map[string]any{"Regex": "(a"}, "behavior": "Isolated"},
			map[string]any{"type": "ByteLevel", "use_regex": false}}}), nil, "pattern"},
		{"decoder", set("decoder", map[string]any{"type": "WordPiece"}), nil, `decoder "WordPiece"`},
		{"lstrip", func(f map[string]any) { f["added_tokens"].([]any)[0].(map[string]any)["lstrip"] = true }, nil, "lstrip"},
		{"added id clash", func(f map[string]any) { f["added_tokens"].([]any)[0].(map[string]any)["id"] = 256 }, nil, "which the vocab gives to"},
		{"eos unknown", nil, map[string]any{"eos_token": "<|nope|>"}, `tokenizer_config.json: eos_token "<|nope|>" is not a token`},
		{"cleanup for BPE", nil, map[string]any{"clean_up_tokenization_spaces": true,
			"clean_up_tokenization_spaces_for_bpe_even_though_it_will_corrupt_output": true}, "clean_up_tokenization_spaces"},
		{"pair-only template", set("post_processor", map[string]any{"type": "TemplateProcessing",
			"single": []any{map[string]any{"Sequence": map[string]any{"id": "B", "type_id": 0}}}}), nil, `sequence "B", which only a pair`},
		{"template id", set("post_processor", map[string]any{"type": "TemplateProcessing",
			"single":         []any{map[string]any{"SpecialToken": map[string]any{"id": "<s>"}}, map[string]any{"Sequence": map[string]any{"id": "A"}}},
			"special_tokens": map[string]any{"<s>": map[string]any{"id": "<s>", "ids": []int{999}, "tokens": []string{"<s>"}}}}), nil, "adds id 999"},
		{"post-processor", set("post_processor", map[string]any{"type": "RobertaProcessing"}), nil, `post-processor "RobertaProcessing" is not supported`},
		{"huge id", func(f map[string]any) { model(f)["vocab"].(map[string]any)["he"] = 2_000_000_000 }, nil, `vocab entry "he" has id 2000000000, outside 0…4194303`},
		{"huge added id", func(f map[string]any) { f["added_tokens"].([]any)[0].(map[string]any)["id"] = 1 << 40 }, nil, "has id 1099511627776, outside"},
		{"config key not an id", nil, map[string]any{"added_tokens_decoder": map[string]any{"0259": map[string]any{"content": "<|end|>"}}}, `added_tokens_decoder key "0259" is not a token id`},
		{"config decoder clash", nil, map[string]any{"added_tokens_decoder": map[string]any{"259": map[string]any{"content": "<y>"}}}, "added_tokens_decoder gives id 259"},
	} {
		dir := writeTiny(t, c.edit, c.cfg)
		tk, err := Load(dir)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Load = %v, %v; want an error containing %q", c.name, tk != nil, err, c.want)
			continue
		}
		if file := "tokenizer.json"; c.cfg != nil {
			file = "tokenizer_config.json"
			if !strings.Contains(err.Error(), file) {
				t.Errorf("%s: error %q does not name %s", c.name, err, file)
			}
		} else if !strings.Contains(err.Error(), file) {
			t.Errorf("%s: error %q does not name %s", c.name, err, file)
		}
	}
}

func TestLoadFileErrors(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "nope", "tokenizer.json")
	if _, err := Load(missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing file: %v; want an error naming %s", err, missing)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "has no tokenizer.json") {
		t.Errorf("empty folder: %v", err)
	}
	bad := filepath.Join(dir, "tokenizer.json")
	for _, c := range []struct{ body, want string }{
		{"{\n \"model\": {\"vocab\": {\"a\": 1,}}\n}", "tokenizer.json:2:"},
		{"{\"model\": ", "tokenizer.json:1:"},
		{"[]", "tokenizer.json"},
		{"", "tokenizer.json"},
		{"{\"added_tokens\": 3, \"model\": {\"vocab\": {}, \"merges\": []}}", "tokenizer.json:1:"},
		{"{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 01}, \"merges\": []}}", "tokenizer.json:1:"}, // a leading zero
		{"{\"x\": " + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + "}", "tokenizer.json:1:"}, // too deep
	} {
		if err := os.WriteFile(bad, []byte(c.body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(bad); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Load of %q: %v; want an error containing %q", c.body, err, c.want)
		}
	}
	// A malformed tokenizer_config.json is named too.
	good := writeTiny(t, nil, nil)
	if err := os.WriteFile(filepath.Join(good, "tokenizer_config.json"), []byte("{oops"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(good); err == nil || !strings.Contains(err.Error(), "tokenizer_config.json:1:") {
		t.Errorf("malformed config: %v", err)
	}
}

// Loading the 11 MB vocabulary is reported, and bounded loosely so that a
// large regression shows.
func TestLoadTime(t *testing.T) {
	loadVocab(t)
	t.Logf("Load(%s) took %v", qwen3(t).Path(), vocab.loadTime)
	if vocab.loadTime > 10*time.Second {
		t.Errorf("Load took %v", vocab.loadTime)
	}
}

// Added tokens match leftmost-longest, as HuggingFace's Aho-Corasick
// matcher does: of <a> and <a>b at the same place the longer wins, and a
// match that starts earlier wins over a longer one that starts later.
// normalized=true tokens are matched after NFC, against normalised text.
func TestAddedLeftmostLongest(t *testing.T) {
	dir := writeTiny(t, func(f map[string]any) {
		tok := func(id int, content string, normalized bool) map[string]any {
			return map[string]any{"id": id, "content": content, "normalized": normalized, "special": false}
		}
		f["added_tokens"] = []any{tok(259, "<a>", false), tok(260, "<a>b", false), tok(261, "a>bc", false),
			tok(262, "\u00e9!", true)}
	}, nil)
	tk, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for text, want := range map[string][]int{
		"<a>":      {259},
		"<a>b":     {260},
		"<a>bc":    {260, 'c'},
		"x<a>bcd":  {'x', 260, 'c', 'd'},
		"e\u0301!": {262}, // NFC makes é!, then the normalised token matches
		"<a><a>b":  {259, 260},
	} {
		if got := tk.Encode(text); !slices.Equal(got, want) {
			t.Errorf("Encode(%q) = %v, want %v", text, got, want)
		}
	}
}

// A WordPiece file as HuggingFace writes it (no merges) is named for its
// model type, not for what it lacks.
func TestLoadWordPieceFile(t *testing.T) {
	dir := writeTiny(t, func(f map[string]any) {
		f["model"] = map[string]any{"type": "WordPiece", "unk_token": "[UNK]", "vocab": map[string]any{"[UNK]": 0}}
	}, nil)
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), `model type "WordPiece"`) {
		t.Errorf("Load = %v", err)
	}
	dir = writeTiny(t, func(f map[string]any) { delete(model(f), "merges") }, nil)
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "model has no merges") {
		t.Errorf("Load without merges = %v", err)
	}
}

// ByteLevel alone, without a regex, leaves each segment whole; use_regex
// (HuggingFace's default) splits with GPT-2's pattern.
func TestLoadByteLevelOnly(t *testing.T) {
	for _, c := range []struct {
		useRegex any
		text     string
		want     []int
	}{
		{false, "hello hello", []int{258, 'o', ' ', 258, 'o'}},
		{nil, "hello hello", []int{258, 'o', ' ', 258, 'o'}}, // " hello" is one GPT-2 piece too
		{false, "", []int{}},
	} {
		dir := writeTiny(t, func(f map[string]any) {
			bl := map[string]any{"type": "ByteLevel", "add_prefix_space": false}
			if c.useRegex != nil {
				bl["use_regex"] = c.useRegex
			}
			f["pre_tokenizer"] = bl
		}, nil)
		tk, err := Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		if got := tk.Encode(c.text); !slices.Equal(got, c.want) {
			t.Errorf("use_regex %v: Encode(%q) = %v, want %v", c.useRegex, c.text, got, c.want)
		}
	}
}

// The binary's default Qwen tokenizer is the tests' vocabulary.
func TestDefaultQwenPath(t *testing.T) {
	if DefaultQwenPath != tokenizertest.DefaultPath {
		t.Fatalf("tokenizer.DefaultQwenPath %q, tokenizertest.DefaultPath %q", DefaultQwenPath, tokenizertest.DefaultPath)
	}
}
