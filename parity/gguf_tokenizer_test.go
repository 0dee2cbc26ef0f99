package parity

import (
	"encoding/json"
	"fmt"

	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ragen-go/ragen/tokenizer"
	"github.com/ragen-go/ragen/tokenizer/tokenizertest"
)

// The GGUF tokenizer comparisons hold tokenizer.FromGGUF to llama.cpp's
// own tokenizer (llama-cpp-python, scripts/parity/llamacpp_tokenizer_ref.py)
// on the golden texts: tokenize(text, add_bos=False, special=True) against
// Encode, and with add_bos=True against EncodeSpecial. Equality is exact.

// ggufVocabJSON is GGUFVocab as llamacpp_tokenizer_ref.py reads and
// writes it.
type ggufVocabJSON struct {
	Model        string   `json:"model"`
	Pre          string   `json:"pre"`
	Tokens       []string `json:"tokens"`
	TokenTypes   []int32  `json:"token_types"`
	Merges       []string `json:"merges"`
	BOS          int      `json:"bos"`
	EOS          int      `json:"eos"`
	Pad          int      `json:"pad"`
	Unk          int      `json:"unk"`
	AddBOS       *bool    `json:"add_bos"`
	ChatTemplate string   `json:"chat_template"`
}

func (j ggufVocabJSON) vocab(source string) tokenizer.GGUFVocab {
	v := tokenizer.GGUFVocab{Source: source, Model: j.Model, Pre: j.Pre, Tokens: j.Tokens, TokenTypes: j.TokenTypes,
		Merges: j.Merges, BOS: j.BOS, EOS: j.EOS, Pad: j.Pad, Unk: j.Unk, ChatTemplate: j.ChatTemplate,
		AddBOS: tokenizer.GGUFDefaultAddBOS(j.Pre)}
	if j.AddBOS != nil {
		v.AddBOS = *j.AddBOS
	}
	return v
}

func vocabJSON(v tokenizer.GGUFVocab) ggufVocabJSON {
	return ggufVocabJSON{Model: v.Model, Pre: v.Pre, Tokens: v.Tokens, TokenTypes: v.TokenTypes, Merges: v.Merges,
		BOS: v.BOS, EOS: v.EOS, Pad: v.Pad, Unk: v.Unk, AddBOS: &v.AddBOS, ChatTemplate: v.ChatTemplate}
}

// llamaCpp runs llamacpp_tokenizer_ref.py with args, exchanging JSON
// through files in dir.
func llamaCpp(t *testing.T, py string, args ...string) {
	t.Helper()
	cmd := exec.Command(py, append([]string{script(t, "llamacpp_tokenizer_ref.py")}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		if strings.Contains(string(out), "No module named 'llama_cpp'") {
			t.Skipf("llama-cpp-python is not installed in %s (pip install llama-cpp-python==0.3.36)", py)
		}
		t.Fatalf("llamacpp_tokenizer_ref.py %s: %v\n%s", args[0], err, out)
	}
}

func readJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func writeJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// ggufVocabOf reads a GGUF file's tokenizer metadata with the gguf package.
func ggufVocabOf(t *testing.T, py, path string) tokenizer.GGUFVocab {
	t.Helper()
	out := filepath.Join(t.TempDir(), "vocab.json")
	llamaCpp(t, py, "vocab", path, out)
	var j ggufVocabJSON
	readJSONFile(t, out, &j)
	return j.vocab(path)
}

// writeVocabGGUF writes v as a vocabulary-only GGUF file for llama.cpp.
func writeVocabGGUF(t *testing.T, py string, v tokenizer.GGUFVocab) string {
	t.Helper()
	dir := t.TempDir()
	in, out := filepath.Join(dir, "vocab.json"), filepath.Join(dir, "vocab.gguf")
	writeJSONFile(t, in, vocabJSON(v))
	llamaCpp(t, py, "write", in, out)
	return out
}

// goldenTexts are tokenizer/testdata/texts.json and cleanupText, with
// their names.
func goldenTexts(t *testing.T) (names, texts []string) {
	t.Helper()
	var golden []struct{ Name, Text string }
	readJSONFile(t, filepath.Join(filepath.Dir(script(t, "x")), "..", "..", "tokenizer", "testdata", "texts.json"), &golden)
	names, texts = []string{"cleanup"}, []string{cleanupText}
	for _, g := range golden {
		names, texts = append(names, "golden "+g.Name), append(texts, g.Text)
	}
	return names, texts
}

// llamaCppIDs tokenizes texts with llama.cpp on the GGUF file at path.
func llamaCppIDs(t *testing.T, py, path string, texts []string) (ids, special [][]int, version string) {
	t.Helper()
	dir := t.TempDir()
	req, ans := filepath.Join(dir, "request.json"), filepath.Join(dir, "answer.json")
	writeJSONFile(t, req, map[string]any{"texts": texts})
	llamaCpp(t, py, "tokenize", path, req, ans)
	var a struct {
		IDs        [][]int `json:"ids"`
		IDsSpecial [][]int `json:"ids_special"`
		Version    string
	}
	readJSONFile(t, ans, &a)
	if len(a.IDs) != len(texts) || len(a.IDsSpecial) != len(texts) {
		t.Fatalf("llamacpp_tokenizer_ref.py answered %d/%d encodings for %d texts", len(a.IDs), len(a.IDsSpecial), len(texts))
	}
	return a.IDs, a.IDsSpecial, a.Version
}

// compareIDs checks encode(text) against want for every text, and
// encodeSpecial against wantSpecial when it is not nil; it returns the
// number of tokens compared.
func compareIDs(t *testing.T, what string, names, texts []string, encode, encodeSpecial func(string) []int, want, wantSpecial [][]int) int {
	t.Helper()
	bad, tokens := 0, 0
	for i, s := range texts {
		for _, c := range []struct {
			how  string
			enc  func(string) []int
			want [][]int
		}{{"", encode, want}, {" with special tokens", encodeSpecial, wantSpecial}} {
			if c.want == nil {
				continue
			}
			tokens += len(c.want[i])
			if got := c.enc(s); !slices.Equal(got, c.want[i]) {
				if bad++; bad <= 5 {
					t.Errorf("%s: %s%s: ids differ at token %d:\n ours %v\n want %v", what, names[i], c.how,
						firstDiff(got, c.want[i]), clip(got), clip(c.want[i]))
				}
			}
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d encodings of %d texts differ", what, bad, len(texts))
	}
	return tokens
}

// TestTokenizerGGUFSmolLM2 compares FromGGUF of SmolLM2's GGUF with
// llama.cpp on the golden texts and 10 MB of generated text, and the
// HuggingFace files WriteHF makes of it, loaded by HuggingFace's
// tokenizers, with llama.cpp on the golden texts. On the generated text the
// files differ from llama.cpp exactly where a byte without a token sits in
// a piece (HuggingFace leaves it out before merging, llama.cpp merges
// around it), which the test pins.
func TestTokenizerGGUFSmolLM2(t *testing.T) {
	py := python(t)
	path := smolLM2GGUFPath(t)
	v := ggufVocabOf(t, py, path)
	tok, err := tokenizer.FromGGUF(v)
	if err != nil {
		t.Fatal(err)
	}
	names, texts := goldenTexts(t)
	nGolden := len(texts)
	for i, s := range sprinkle(newRand(10, 2), generateTexts(newRand(10, 0), 10<<20), specialTexts(t, tok)) {
		names, texts = append(names, fmt.Sprintf("generated #%d", i)), append(texts, s)
	}
	want, wantSpecial, version := llamaCppIDs(t, py, path, texts)
	n := compareIDs(t, "FromGGUF", names, texts, tok.Encode, tok.EncodeSpecial, want, wantSpecial)
	t.Logf("llama-cpp-python %s: FromGGUF on %d texts (%d golden), %d tokens compared", version, len(texts), nGolden, n)

	dir := t.TempDir()
	if err := tok.WriteHF(dir); err != nil {
		t.Fatal(err)
	}
	var hf struct {
		IDs        [][]int `json:"ids"`
		IDsSpecial [][]int `json:"ids_special"`
	}
	runTokenizers(t, py, "encode", map[string]any{"tokenizer": filepath.Join(dir, "tokenizer.json"), "texts": texts,
		"decode": [][]int{}}, &hf)
	at := func(ids [][]int) func(string) []int {
		i := 0
		return func(string) []int { i++; return ids[i-1] }
	}
	n = compareIDs(t, "tokenizers on WriteHF's files", names[:nGolden], texts[:nGolden], at(hf.IDs), at(hf.IDsSpecial), want, wantSpecial)
	missing, nMissing := missingBytes(v.Tokens)
	differ, unexplained := 0, 0
	for i := nGolden; i < len(texts); i++ {
		if slices.Equal(hf.IDs[i], want[i]) {
			continue
		}
		differ++
		if !holdsAny(texts[i], &missing) {
			if unexplained++; unexplained <= 3 {
				t.Errorf("tokenizers on WriteHF's files: %s differs from llama.cpp without a byte lacking a token:\n ours %v\n want %v",
					names[i], clip(hf.IDs[i]), clip(want[i]))
			}
		}
	}
	t.Logf("tokenizers on WriteHF's files: %d golden texts, %d tokens compared; %d of %d generated texts differ from llama.cpp, "+
		"all holding one of the %d bytes without a token", nGolden, n, differ, len(texts)-nGolden, nMissing)
}

// missingBytes marks the bytes that have no token of their own among
// tokens (byte-level text).
func missingBytes(tokens []string) (missing [256]bool, n int) {
	have := map[string]bool{}
	for _, s := range tokens {
		have[s] = true
	}
	next := rune(0x100) // GPT-2's byte-level alphabet
	for b := range 256 {
		r := rune(b)
		if !('!' <= b && b <= '~' || 0xA1 <= b && b <= 0xAC || 0xAE <= b && b <= 0xFF) {
			r = next
			next++
		}
		if !have[string(r)] {
			missing[b] = true
			n++
		}
	}
	return missing, n
}

// holdsAny reports whether s has a byte that set marks.
func holdsAny(s string, set *[256]bool) bool {
	for i := 0; i < len(s); i++ {
		if set[s[i]] {
			return true
		}
	}
	return false
}

// TestTokenizerGGUFPreTokenizers puts SmolLM2's vocabulary before llama.cpp
// under each pre-tokenizer name FromGGUF supports, in vocabulary-only GGUF
// files, with and without add_bos_token.
func TestTokenizerGGUFPreTokenizers(t *testing.T) {
	py := python(t)
	base := ggufVocabOf(t, py, smolLM2GGUFPath(t))
	names, texts := goldenTexts(t)
	for _, c := range []struct {
		pre    string
		addBOS bool
	}{{"smollm", false}, {"gpt-2", true}, {"llama-bpe", true}, {"llama3", false}, {"qwen2", false}, {"default", false}} {
		v := base
		v.Pre, v.AddBOS = c.pre, c.addBOS
		tok, err := tokenizer.FromGGUF(v)
		if err != nil {
			t.Fatal(err)
		}
		want, wantSpecial, _ := llamaCppIDs(t, py, writeVocabGGUF(t, py, v), texts)
		n := compareIDs(t, "pre "+c.pre, names, texts, tok.Encode, tok.EncodeSpecial, want, wantSpecial)
		t.Logf("pre %q, add_bos %v: %d texts, %d tokens compared", c.pre, c.addBOS, len(texts), n)
	}
}

// TestTokenizerGGUFExport exports Llama 3.2's and Qwen's tokenizer.json
// with GGUFVocab, and compares llama.cpp on the exported vocabulary with
// FromGGUF of it, and, where llama.cpp and HuggingFace agree, with the
// tokenizer.json itself.
func TestTokenizerGGUFExport(t *testing.T) {
	py := python(t)
	names, texts := goldenTexts(t)
	for _, c := range []struct {
		name string
		path func(testing.TB) string
	}{{"Llama 3.2", tokenizertest.LlamaPath}, {"Qwen", tokenizertest.Path}} {
		tok, err := tokenizer.Load(c.path(t))
		if err != nil {
			t.Fatal(err)
		}
		v, err := tok.GGUFVocab()
		if err != nil {
			t.Fatal(err)
		}
		fromGGUF, err := tokenizer.FromGGUF(v)
		if err != nil {
			t.Fatal(err)
		}
		want, wantSpecial, _ := llamaCppIDs(t, py, writeVocabGGUF(t, py, v), texts)
		n := compareIDs(t, c.name+" FromGGUF(GGUFVocab())", names, texts, fromGGUF.Encode, fromGGUF.EncodeSpecial, want, wantSpecial)
		same := 0
		for i, s := range texts {
			if slices.Equal(tok.Encode(s), want[i]) && slices.Equal(tok.EncodeSpecial(s), wantSpecial[i]) {
				same++
			}
		}
		t.Logf("%s exported as pre %q, add_bos %v: %d texts, %d tokens compared; the tokenizer.json itself gives llama.cpp's ids on %d of them",
			c.name, v.Pre, v.AddBOS, len(texts), n, same)
		if c.name == "Llama 3.2" && same != len(texts) {
			t.Errorf("Llama 3.2's tokenizer.json differs from llama.cpp on %d golden texts", len(texts)-same)
		}
	}
}
