package tokenizer

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"
)

// tinyGGUF is a small GGUF vocabulary: the 256 byte tokens (ids 0-255, in
// byte order), the merges h+e -> "he" (256), l+l -> "ll" (257), he+ll ->
// "hell" (258), a control token <|end|> (259, the eos) and a user-defined
// one <x> (260).
func tinyGGUF() GGUFVocab {
	v := GGUFVocab{Source: "tiny.gguf", Model: "gpt2", Pre: "gpt-2", BOS: -1, EOS: 259, Pad: -1, Unk: -1,
		Merges: []string{"h e", "l l", "he ll"}, ChatTemplate: "{{ messages }}"}
	for b := range 256 {
		v.Tokens = append(v.Tokens, string(byteToRune[b]))
		v.TokenTypes = append(v.TokenTypes, GGUFTokenNormal)
	}
	v.Tokens = append(v.Tokens, "he", "ll", "hell", "<|end|>", "<x>")
	v.TokenTypes = append(v.TokenTypes, GGUFTokenNormal, GGUFTokenNormal, GGUFTokenNormal, GGUFTokenControl, GGUFTokenUserDefined)
	return v
}

func TestFromGGUF(t *testing.T) {
	tk, err := FromGGUF(tinyGGUF())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		text string
		ids  []int
	}{
		{"hello", []int{258, 'o'}},
		{"hello<|end|> <x>", []int{258, 'o', 259, ' ', 260}},
		{"<|end|><|end|>x<x>", []int{259, 259, 'x', 260}},
		{"he's", []int{256, '\'', 's'}},
	} {
		if got := tk.Encode(c.text); !slices.Equal(got, c.ids) {
			t.Errorf("Encode(%q) = %v, want %v", c.text, got, c.ids)
		}
	}
	if tk.EOS() != 259 || tk.BOS() != -1 || tk.AddsBOS() || tk.ChatTemplate() != "{{ messages }}" {
		t.Errorf("EOS, BOS, AddsBOS, ChatTemplate = %d, %d, %v, %q", tk.EOS(), tk.BOS(), tk.AddsBOS(), tk.ChatTemplate())
	}
	if !tk.IsSpecial(259) || tk.IsSpecial(260) {
		t.Error("the control token must be special and the user-defined one not")
	}
	if got, _ := tk.DecodeSkipSpecial([]int{258, 259, 260}); got != "hell<x>" {
		t.Errorf("DecodeSkipSpecial = %q, want hell<x>", got)
	}

	v := tinyGGUF()
	v.AddBOS, v.BOS = true, 260
	tk, err = FromGGUF(v)
	if err != nil {
		t.Fatal(err)
	}
	if got := tk.EncodeSpecial("he"); !slices.Equal(got, []int{260, 256}) || !tk.AddsBOS() {
		t.Errorf("with add_bos_token, EncodeSpecial = %v, AddsBOS %v; want [260 256], true", got, tk.AddsBOS())
	}
}

func TestFromGGUFErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*GGUFVocab)
		want string
	}{
		{"model", func(v *GGUFVocab) { v.Model = "llama" }, `tokenizer.ggml.model "llama" is not supported: only "gpt2"`},
		{"pre", func(v *GGUFVocab) { v.Pre = "nope" }, `tokenizer.ggml.pre "nope" is not supported (supported: "llama-bpe", "llama3", "llama-v3", "qwen2", "smollm", "starcoder", "gpt-2", "default")`},
		{"types", func(v *GGUFVocab) { v.TokenTypes = v.TokenTypes[:3] }, "token_type has 3 entries for 261 tokens"},
		{"alphabet", func(v *GGUFVocab) { v.Tokens[256] = "h e" }, `token 256 "h e" (type 1) is not in the byte-level alphabet`},
		{"empty token", func(v *GGUFVocab) { v.Tokens[256] = "" }, "token 256 is empty"},
		{"duplicate", func(v *GGUFVocab) { v.Tokens[257] = "he" }, `tokens 256 and 257 are both "he"`},
		{"no space", func(v *GGUFVocab) { v.Merges[0] = "he" }, `merge 0 "he" has no space`},
		{"unknown part", func(v *GGUFVocab) { v.Merges[0] = "q! e" }, "uses a token missing"},
		{"not a token", func(v *GGUFVocab) { v.Merges[0] = "e h" }, `makes "eh", which is not a token`},
		{"repeat", func(v *GGUFVocab) { v.Merges = append(v.Merges, "h e") }, `merge 3 "h e" repeats merge 0`},
		{"bos range", func(v *GGUFVocab) { v.BOS = 999 }, "bos_token_id 999 is not a token id"},
		{"add bos", func(v *GGUFVocab) { v.AddBOS = true }, "add_bos_token is true but there is no tokenizer.ggml.bos_token_id"},
	} {
		v := tinyGGUF()
		c.edit(&v)
		_, err := FromGGUF(v)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "tiny.gguf: ") {
			t.Errorf("%s: FromGGUF error %v, want one starting with tiny.gguf and containing %q", c.name, err, c.want)
		}
	}
}

// Every supported pre-tokenizer name builds, and GGUFVocab names it back
// (by its first name); Llama 3's and Qwen2's get the fast splitter.
func TestGGUFPreNames(t *testing.T) {
	for _, p := range ggufPres {
		for _, name := range p.names {
			v := tinyGGUF()
			v.Pre = name
			tk, err := FromGGUF(v)
			if err != nil {
				t.Fatalf("%q: %v", name, err)
			}
			if fast := tk.fast != nil; fast != (p.names[0] == "llama-bpe" || p.names[0] == "qwen2") {
				t.Errorf("%q: fast splitter %v", name, fast)
			}
			back, err := tk.GGUFVocab()
			if err != nil {
				t.Fatalf("%q: GGUFVocab: %v", name, err)
			}
			if back.Pre != p.names[0] || back.AddBOS {
				t.Errorf("%q: GGUFVocab gives pre %q, add_bos %v", name, back.Pre, back.AddBOS)
			}
		}
	}
	if !GGUFDefaultAddBOS("llama-bpe") || GGUFDefaultAddBOS("smollm") {
		t.Error("GGUFDefaultAddBOS: llama.cpp adds BOS for Llama 3's pre-tokenizer only")
	}
	// The default pre-tokenizer: punctuation runs, GPT-2's pattern,
	// numbers, then runs of three ASCII digits.
	v := tinyGGUF()
	v.Pre = "default"
	tk, err := FromGGUF(v)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := splitAll(tk.pre, "a...b 12345 x+y"), []string{"a", "...", "b", " ", "123", "45", " x", "+", "y"}; !slices.Equal(got, want) {
		t.Errorf("default pre-tokenizer: pieces %q, want %q", got, want)
	}
}

// llama.cpp cuts control tokens out longest first: of "ab" and "bcd" in
// "abcd" it takes "bcd", where HuggingFace's leftmost-longest takes "ab".
// WriteHF refuses such a vocabulary.
func TestGGUFOverlappingControlTokens(t *testing.T) {
	v := tinyGGUF()
	v.Tokens = append(v.Tokens, "ab", "bcd")
	v.TokenTypes = append(v.TokenTypes, GGUFTokenControl, GGUFTokenControl)
	tk, err := FromGGUF(v)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tk.Encode("abcd ab"), []int{'a', 262, ' ', 261}; !slices.Equal(got, want) {
		t.Errorf("Encode = %v, want %v", got, want)
	}
	if err := tk.WriteHF(t.TempDir()); err == nil || !strings.Contains(err.Error(), `"ab" and "bcd" overlap`) {
		t.Errorf("WriteHF error %v, want one naming the overlapping tokens", err)
	}
}

// A byte without a token is a barrier to merging in llama.cpp.
func TestGGUFMissingByte(t *testing.T) {
	v := tinyGGUF()
	v.Tokens[4], v.TokenTypes[4] = "[UNUSED]", GGUFTokenUnused
	tk, err := FromGGUF(v)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tk.Encode("h\x04ell"), []int{'h', 'e', 257}; !slices.Equal(got, want) {
		t.Errorf("Encode = %v, want %v", got, want)
	}
}

// FromGGUF, GGUFVocab and WriteHF then Load agree: the vocabulary comes
// back as it went in, and the written files encode as the tokenizer does.
func TestGGUFRoundTrip(t *testing.T) {
	v := tinyGGUF()
	v.AddBOS, v.BOS = true, 260
	tk, err := FromGGUF(v)
	if err != nil {
		t.Fatal(err)
	}
	back, err := tk.GGUFVocab()
	if err != nil {
		t.Fatal(err)
	}
	if d := vocabDiff(back, v); d != "" {
		t.Errorf("GGUFVocab(FromGGUF(v)) differs from v: %s", d)
	}
	dir := t.TempDir()
	if err := tk.WriteHF(dir); err != nil {
		t.Fatal(err)
	}
	hf, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"hello", "hello<|end|> <x>", "he's <|end|><x>x", ""} {
		if got, want := hf.Encode(text), tk.Encode(text); !slices.Equal(got, want) {
			t.Errorf("written files: Encode(%q) = %v, want %v", text, got, want)
		}
		if got, want := hf.EncodeSpecial(text), tk.EncodeSpecial(text); !slices.Equal(got, want) {
			t.Errorf("written files: EncodeSpecial(%q) = %v, want %v", text, got, want)
		}
	}
	if hf.BOS() != 260 || hf.EOS() != 259 || !hf.AddsBOS() || hf.ChatTemplate() != v.ChatTemplate {
		t.Errorf("written files: BOS, EOS, AddsBOS, ChatTemplate = %d, %d, %v, %q", hf.BOS(), hf.EOS(), hf.AddsBOS(), hf.ChatTemplate())
	}
	back, err = hf.GGUFVocab()
	if err != nil {
		t.Fatal(err)
	}
	if d := vocabDiff(back, v); d != "" {
		t.Errorf("GGUFVocab of the written files differs from v: %s", d)
	}
}

func TestGGUFVocabErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(map[string]any)
		want string
	}{
		{"pattern", func(f map[string]any) {
			steps := f["pre_tokenizer"].(map[string]any)["pretokenizers"].([]any)
			steps[0].(map[string]any)["pattern"] = map[string]any{"Regex": `l+`}
		}, "the pre-tokenizer is none of llama.cpp's"},
		{"ignore_merges", func(f map[string]any) {
			model(f)["ignore_merges"] = true
			model(f)["merges"] = []any{"h e", "l l"} // "hell" is made by no merge
		}, `ignore_merges is true, but llama.cpp's "qwen2" pre-tokenizer sets it false, which changes the ids of 1 tokens`},
		{"template", func(f map[string]any) {
			f["post_processor"] = templateProcessing(seqItem("A"), specialItem("<|end|>"))
		}, "GGUF can only say add_bos_token"},
	} {
		tk, err := Load(writeTiny(t, c.edit, nil))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if _, err := tk.GGUFVocab(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: GGUFVocab error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

// Ids of llama.cpp (llama-cpp-python 0.3.36, tokenize(text, add_bos=False,
// special=True)) on SmolLM2-135M-Instruct's GGUF; HuggingFace's tokenizers
// give the same on the tokenizer.json rebuilt from it, except where a byte
// without a token (0x04) sits between two that merge.
func TestSmolLM2GGUFGolden(t *testing.T) {
	tk := smolLM2(t)
	for _, c := range []struct {
		text string
		ids  []int
	}{
		{"Hello world", []int{19556, 905}},
		{"I'm here, they'll SEE 1234567 apples.", []int{57, 5248, 1535, 28, 502, 3060, 334, 8405, 216, 33, 34, 35, 36, 37, 38, 39, 13855, 30}},
		{"x'ſa x'Sa", []int{104, 23, 144, 140, 81, 1792, 23, 38777}},
		{"<|im_start|>user\nHi<|im_end|>\n<repo_name>", []int{1, 4093, 198, 26843, 2, 198, 3}},
		{"数字 2024年 ٣٤٥ ½", []int{18265, 36518, 216, 34, 32, 34, 36, 32090, 129, 216, 164, 113, 164, 114, 164, 115, 216, 16738}},
		{"  \n\n\t tabs", []int{256, 14436, 29416}},
		{"<|im_start|><|im_end|><|endoftext|>", []int{1, 2, 0}},
		{"!\u0004!", []int{17, 17}}, // HuggingFace: [10095] ("!!")
	} {
		if got := tk.Encode(c.text); !slices.Equal(got, c.ids) {
			t.Errorf("Encode(%q) = %v, want %v", c.text, got, c.ids)
		}
	}
	if tk.BOS() != 1 || tk.EOS() != 2 || tk.Pad() != 2 || tk.AddsBOS() || tk.VocabSize() != 49152 {
		t.Errorf("BOS, EOS, Pad, AddsBOS, VocabSize = %d, %d, %d, %v, %d", tk.BOS(), tk.EOS(), tk.Pad(), tk.AddsBOS(), tk.VocabSize())
	}

	dir := t.TempDir()
	if err := tk.WriteHF(dir); err != nil {
		t.Fatal(err)
	}
	hf, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range readTexts(t) {
		if got, want := hf.Encode(c.Text), tk.Encode(c.Text); !slices.Equal(got, want) {
			t.Errorf("%s: the written files encode %v, FromGGUF %v", c.Name, got, want)
		}
	}
	if got := hf.Encode("!\u0004!"); !slices.Equal(got, []int{10095}) {
		t.Errorf(`the written files encode "!\x04!" as %v, want HuggingFace's [10095]`, got)
	}
	v, err := readGGUFVocab(tk.Path())
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range []*Tokenizer{tk, hf} {
		back, err := src.GGUFVocab()
		if err != nil {
			t.Fatal(err)
		}
		if d := vocabDiff(back, v); d != "" {
			t.Errorf("GGUFVocab of %s differs from the GGUF's: %s", src.Path(), d)
		}
	}
}

// Llama 3.2's and Qwen's tokenizer.json export to llama.cpp's "llama-bpe"
// and "qwen2", and FromGGUF of the export encodes as the file does, but
// where llama.cpp differs: "'ſ" is no contraction there, and Qwen's NFC
// is not applied.
func TestGGUFExportOfHFFiles(t *testing.T) {
	for _, c := range []struct {
		tk      func(testing.TB) *Tokenizer
		pre     string
		addBOS  bool
		differs func(string) bool
	}{
		{llama32, "llama-bpe", true, func(s string) bool { return strings.Contains(s, "'ſ") }},
		{qwen3, "qwen2", false, func(s string) bool { return strings.Contains(s, "'ſ") || !norm.NFC.IsNormalString(s) }},
	} {
		tk := c.tk(t)
		v, err := tk.GGUFVocab()
		if err != nil {
			t.Fatal(err)
		}
		if v.Pre != c.pre || v.AddBOS != c.addBOS || v.BOS != tk.BOS() || v.EOS != tk.EOS() {
			t.Errorf("%s: pre %q, add_bos %v, bos %d, eos %d", tk.Path(), v.Pre, v.AddBOS, v.BOS, v.EOS)
		}
		g, err := FromGGUF(v)
		if err != nil {
			t.Fatal(err)
		}
		compared := 0
		for _, text := range readTexts(t) {
			if c.differs(text.Text) {
				continue
			}
			compared++
			if got, want := g.EncodeSpecial(text.Text), tk.EncodeSpecial(text.Text); !slices.Equal(got, want) {
				t.Errorf("%s: %s: FromGGUF of the export encodes %v, the file %v", tk.Path(), text.Name, clipInts(got), clipInts(want))
			}
		}
		if compared < 60 {
			t.Errorf("%s: only %d texts compared", tk.Path(), compared)
		}
	}
}

func clipInts(x []int) []int { return x[:min(len(x), 30)] }

// vocabDiff describes the first difference between two vocabularies but
// their Source, "" when there is none.
func vocabDiff(a, b GGUFVocab) string {
	if len(a.Tokens) != len(b.Tokens) || len(a.TokenTypes) != len(b.TokenTypes) || len(a.Merges) != len(b.Merges) {
		return fmt.Sprintf("%d tokens, %d types and %d merges, not %d, %d and %d",
			len(a.Tokens), len(a.TokenTypes), len(a.Merges), len(b.Tokens), len(b.TokenTypes), len(b.Merges))
	}
	for i := range min(len(a.Tokens), len(b.Tokens)) {
		if a.Tokens[i] != b.Tokens[i] {
			return fmt.Sprintf("token %d is %q, not %q", i, a.Tokens[i], b.Tokens[i])
		}
	}
	for i := range min(len(a.TokenTypes), len(b.TokenTypes)) {
		if a.TokenTypes[i] != b.TokenTypes[i] {
			return fmt.Sprintf("token %d %q has type %d, not %d", i, a.Tokens[i], a.TokenTypes[i], b.TokenTypes[i])
		}
	}
	for i := range min(len(a.Merges), len(b.Merges)) {
		if a.Merges[i] != b.Merges[i] {
			return fmt.Sprintf("merge %d is %q, not %q", i, a.Merges[i], b.Merges[i])
		}
	}
	a.Tokens, a.TokenTypes, a.Merges, a.Source = nil, nil, nil, ""
	b.Tokens, b.TokenTypes, b.Merges, b.Source = nil, nil, nil, ""
	if !reflect.DeepEqual(a, b) {
		return fmt.Sprintf("%+v, not %+v", a, b)
	}
	return ""
}
