package parity

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/ragen-go/ragen/tokenizer"
	"github.com/ragen-go/ragen/tokenizer/tokenizertest"
)

// The tokenizer comparisons run package tokenizer and HuggingFace's
// tokenizers (the Rust library, from Python) on three real tokenizer.json
// files: Qwen's (TestTokenizer), Llama 3.2's (TestTokenizerLlama32) and
// SmolLM2's, rebuilt from its GGUF (TestTokenizerSmolLM2). Each compares the
// ids of the golden texts (tokenizer/testdata/texts.json) and of 10 MB of
// generated text (textgen_test.go, with the file's own added tokens
// sprinkled in), encoded without and with special tokens (Encode and
// EncodeSpecial), and the decoding of those ids and of random id sequences,
// with and without skip_special_tokens. Equality is exact. Each logs both
// sides' throughput, one core each.

// TestTokenizer compares Qwen's tokenizer.json.
func TestTokenizer(t *testing.T) {
	py := python(t)
	path := tokenizertest.Path(t)
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		path = filepath.Join(path, "tokenizer.json")
	}
	compareTokenizer(t, py, path, compareOptions{probesDiffer: true})
}

// TestTokenizerLlama32 compares Llama 3.2's tokenizer.json (its Split
// pattern with a (?i:...) group, ignore_merges, a TemplateProcessing
// post-processor adding <|begin_of_text|>), and checks that transformers,
// which reads clean_up_tokenization_spaces: true from its
// tokenizer_config.json, decodes as Decode does.
func TestTokenizerLlama32(t *testing.T) {
	py := python(t)
	dir := tokenizertest.LlamaPath(t)
	compareTokenizer(t, py, filepath.Join(dir, "tokenizer.json"), compareOptions{transformersN: 400})
}

// tokSmolLM2GGUF is SmolLM2-135M-Instruct's GGUF, relative to the
// repository root.
const tokSmolLM2GGUF = ".cache/models/SmolLM2-135M-Instruct.Q4_1.gguf"

// smolLM2GGUFPath returns the GGUF's path, skipping the test without it.
func smolLM2GGUFPath(t *testing.T) string {
	t.Helper()
	p := filepath.Join(filepath.Dir(script(t, "x")), "..", "..", tokSmolLM2GGUF)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("%s is missing: SmolLM2's GGUF is needed to build its tokenizer", tokSmolLM2GGUF)
	}
	return p
}

// TestTokenizerSmolLM2 compares SmolLM2's tokenizer.json (pre-tokenizer
// Sequence[Digits, ByteLevel], no ignore_merges, 21 bytes without a token),
// which scripts/parity/gguf_tokenizer_json.py rebuilds from the GGUF.
func TestTokenizerSmolLM2(t *testing.T) {
	py := python(t)
	dir := t.TempDir()
	cmd := exec.Command(py, script(t, "gguf_tokenizer_json.py"), smolLM2GGUFPath(t), dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gguf_tokenizer_json.py: %v\n%s", err, out)
	}
	compareTokenizer(t, py, filepath.Join(dir, "tokenizer.json"), compareOptions{})
}

// cleanupText has the spaces before punctuation that transformers'
// clean_up_tokenization would delete.
const cleanupText = "Hello , world ! I don 't know . They 're here ? It 's 5 , isn 't it ? I 'm sure , we 've seen ' it ' ."

// compareOptions are what differs between the tokenizers compared.
type compareOptions struct {
	// transformersN > 0 also compares the decoding of the first
	// transformersN id lists with transformers'.
	transformersN int
	// probesDiffer: the probe texts of the code points whose Unicode
	// tables differ must encode differently. They do with Qwen's
	// vocabulary and NFC; whether they do with another vocabulary depends
	// on its merges, so there the check is that the tables differ at all.
	probesDiffer bool
}

// compareTokenizer runs the comparison on path, a tokenizer.json.
func compareTokenizer(t *testing.T, py, path string, opt compareOptions) {
	transformersN := opt.transformersN
	tok, err := tokenizer.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var golden []struct{ Name, Text string }
	data, err := os.ReadFile(filepath.Join(filepath.Dir(script(t, "x")), "..", "..", "tokenizer", "testdata", "texts.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &golden); err != nil {
		t.Fatal(err)
	}
	names, texts := []string{"cleanup"}, []string{cleanupText}
	for _, g := range golden {
		names, texts = append(names, "golden "+g.Name), append(texts, g.Text)
	}
	nGolden := len(texts)
	unicodeDiffs := probeUnicodeTables(t, py, path)
	specials := specialTexts(t, tok)
	generated := sprinkle(newRand(9, 2), generateTexts(newRand(9, 0), 10<<20), specials)
	for i, s := range generated {
		generated[i] = strings.Map(func(r rune) rune {
			if unicodeDiffs[r] != "" {
				return -1
			}
			return r
		}, s)
	}
	for i, s := range generated {
		names, texts = append(names, fmt.Sprintf("generated #%d", i)), append(texts, s)
	}
	// Texts with the code points whose tables differ, expected to differ.
	nCompared := len(texts)
	var probeRunes []rune
	for c := range unicodeDiffs {
		probeRunes = append(probeRunes, c)
	}
	slices.Sort(probeRunes)
	for i := 0; i < len(probeRunes); i += max(1, len(probeRunes)/200) {
		c := string(probeRunes[i])
		names, texts = append(names, fmt.Sprintf("probe %U", probeRunes[i])), append(texts, "x"+c+"! a"+c+"\u0334")
	}
	size := 0
	for _, s := range generated {
		size += len(s)
	}

	// Ours, on one goroutine.
	start := time.Now()
	ours := make([][]int, len(texts))
	for i, s := range texts {
		ours[i] = tok.Encode(s)
	}
	oursEncode := time.Since(start)

	// Id lists to decode: our encodings, then random sequences over the
	// whole vocabulary with added tokens often, which split characters.
	decode := append([][]int(nil), ours...)
	var specialIDs []int
	for _, s := range specials {
		id, _ := tok.TokenID(s)
		specialIDs = append(specialIDs, id)
	}
	r := newRand(9, 1)
	for range 5000 {
		ids := make([]int, 1+r.IntN(40))
		for j := range ids {
			if r.IntN(8) == 0 && len(specialIDs) > 0 {
				ids[j] = specialIDs[r.IntN(len(specialIDs))]
			} else {
				ids[j] = r.IntN(tok.VocabSize())
			}
		}
		decode = append(decode, ids)
	}
	// The tokenizers of other models leave some ids unassigned (Qwen's
	// file stops short of its embedding size): those are Decode errors.
	decode = slices.DeleteFunc(decode, func(ids []int) bool {
		_, err := tok.Decode(ids)
		return err != nil
	})

	var hf struct {
		Version             string
		IDs                 [][]int `json:"ids"`
		IDsSpecial          [][]int `json:"ids_special"`
		Decoded             []string
		DecodedSkipSpecial  []string `json:"decoded_skip_special"`
		EncodeSeconds       float64  `json:"encode_seconds"`
		DecodeSeconds       float64  `json:"decode_seconds"`
		TransformersVersion string   `json:"transformers_version"`
		TransformersDecoded []string `json:"transformers_decoded"`
	}
	// With special tokens, the golden texts and the thousand short
	// generated ones: the post-processor only adds around the text.
	nSpecial := nGolden + 1000
	runTokenizers(t, py, "encode", map[string]any{"tokenizer": path, "texts": texts, "decode": decode,
		"transformers": transformersN, "special": nSpecial}, &hf)
	if len(hf.IDs) != len(texts) || len(hf.IDsSpecial) != nSpecial || len(hf.Decoded) != len(decode) ||
		len(hf.DecodedSkipSpecial) != len(decode) || len(hf.TransformersDecoded) != min(transformersN, len(decode)) {
		t.Fatalf("tokenizers_ref.py answered %d/%d encodings and %d/%d/%d decodings for %d texts and %d id lists",
			len(hf.IDs), len(hf.IDsSpecial), len(hf.Decoded), len(hf.DecodedSkipSpecial), len(hf.TransformersDecoded), len(texts), len(decode))
	}

	// Encoding, without and with special tokens.
	badEncode, badSpecial, tokens := 0, 0, 0
	for i := range texts[:nCompared] {
		tokens += len(hf.IDs[i])
		if !slices.Equal(ours[i], hf.IDs[i]) {
			if badEncode++; badEncode <= 5 {
				t.Errorf("%s: ids differ at token %d\n%s", names[i], firstDiff(ours[i], hf.IDs[i]), around(tok, texts[i], ours[i], hf.IDs[i]))
			}
		}
		if i >= nSpecial {
			continue
		}
		tokens += len(hf.IDsSpecial[i])
		if special := tok.EncodeSpecial(texts[i]); !slices.Equal(special, hf.IDsSpecial[i]) {
			if badSpecial++; badSpecial <= 5 {
				t.Errorf("%s: with special tokens, ids differ at token %d\n%s", names[i], firstDiff(special, hf.IDsSpecial[i]),
					around(tok, texts[i], special, hf.IDsSpecial[i]))
			}
		}
	}
	if badEncode+badSpecial > 0 {
		t.Errorf("encoding: %d of %d texts differ, %d with special tokens", badEncode, nCompared, badSpecial)
	}
	differing := 0
	for i := nCompared; i < len(texts); i++ {
		if !slices.Equal(ours[i], hf.IDs[i]) {
			differing++
		}
	}
	t.Logf("Unicode tables: %d of %d probe texts with those code points encode differently", differing, len(texts)-nCompared)
	if differing == 0 && len(texts) > nCompared && opt.probesDiffer {
		t.Errorf("no probe text with the code points whose Unicode tables differ encodes differently: the tables agree now, drop the exclusion")
	}

	// Decoding.
	start = time.Now()
	var decodedOurs []string
	for _, ids := range decode {
		s, err := tok.Decode(ids)
		if err != nil {
			t.Fatal(err)
		}
		decodedOurs = append(decodedOurs, s)
	}
	oursDecode := time.Since(start)
	bad := 0
	for i, ids := range decode {
		skip, err := tok.DecodeSkipSpecial(ids)
		if err != nil {
			t.Fatal(err)
		}
		checks := []struct {
			what      string
			got, want string
		}{{"decode", decodedOurs[i], hf.Decoded[i]}, {"decode skip_special_tokens", skip, hf.DecodedSkipSpecial[i]}}
		if i < len(hf.TransformersDecoded) {
			checks = append(checks, struct{ what, got, want string }{"transformers decode", decodedOurs[i], hf.TransformersDecoded[i]})
		}
		for _, c := range checks {
			if c.got != c.want {
				if bad++; bad <= 5 {
					t.Errorf("%s of id list %d %v:\n ours %q\n hf   %q", c.what, i, clip(ids), clip([]rune(c.got)), clip([]rune(c.want)))
				}
			}
		}
	}
	if bad > 0 {
		t.Errorf("decoding: %d of %d differ", bad, 2*len(decode)+len(hf.TransformersDecoded))
	}

	mb := float64(size+goldenBytes(texts[:nGolden])) / (1 << 20)
	t.Logf("%s: tokenizers %s; %d texts (%d also with special tokens), %.1f MiB, %d tokens compared, "+
		"%d+%d mismatching texts; %d id lists decoded, %d mismatches",
		path, hf.Version, nCompared, nSpecial, mb, tokens, badEncode, badSpecial, len(decode), bad)
	if transformersN > 0 {
		t.Logf("transformers %s decoded the first %d id lists as Decode does (clean_up_tokenization_spaces has no effect on BPE there)",
			hf.TransformersVersion, len(hf.TransformersDecoded))
	}
	t.Logf("encode: ours %.2f MiB/s, tokenizers %.2f MiB/s (one core each; tokenizers' time is encode_batch inside Python, without special tokens)",
		mb/oursEncode.Seconds(), mb/hf.EncodeSeconds)
	t.Logf("decode: ours %.0f ms, tokenizers %.0f ms for %d id lists", 1e3*oursDecode.Seconds(), 1e3*hf.DecodeSeconds, len(decode))
}

// specialTexts returns the text of tok's special tokens, in id order.
func specialTexts(t *testing.T, tok *tokenizer.Tokenizer) []string {
	t.Helper()
	var out []string
	for id := range tok.VocabSize() {
		if !tok.IsSpecial(id) {
			continue
		}
		s, err := tok.Decode([]int{id})
		if err != nil {
			continue
		}
		if got, ok := tok.TokenID(s); ok && got == id {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		t.Fatal("the tokenizer has no special tokens")
	}
	return out
}

// sprinkle puts the tokenizer's own special tokens into a quarter of the
// documents, at random character boundaries, since the generator writes
// Qwen's.
func sprinkle(r *rand.Rand, docs, specials []string) []string {
	for i, d := range docs {
		if r.IntN(4) != 0 {
			continue
		}
		for range 1 + r.IntN(3) {
			at := r.IntN(len(d) + 1)
			for at < len(d) && !utf8.RuneStart(d[at]) {
				at++
			}
			d = d[:at] + specials[r.IntN(len(specials))] + d[at:]
		}
		docs[i] = d
	}
	return docs
}

// runTokenizers runs tokenizers_ref.py in mode on req through files (the
// texts are megabytes) and decodes its answer into ans.
func runTokenizers(t *testing.T, py, mode string, req, ans any) {
	t.Helper()
	dir := t.TempDir()
	data, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	reqPath, ansPath := filepath.Join(dir, "request.json"), filepath.Join(dir, "answer.json")
	if err := os.WriteFile(reqPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, script(t, "tokenizers_ref.py"), mode, reqPath, ansPath)
	cmd.Env = append(os.Environ(), "RAYON_NUM_THREADS=1", "TOKENIZERS_PARALLELISM=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tokenizers_ref.py %s: %v\n%s", mode, err, out)
	}
	if data, err = os.ReadFile(ansPath); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, ans); err != nil {
		t.Fatalf("tokenizers_ref.py %s: %v", mode, err)
	}
}

// probeUnicodeTables finds the code points where the tokenizers library's
// Unicode tables and Go's (unicode and golang.org/x/text/unicode/norm,
// Unicode 15.0.0) disagree, a documented difference: ragen-go's tokenizer
// uses Go's tables and so follows the Unicode standard of Go's version,
// where tokenizers' pre-tokenizer pattern runs on Oniguruma's tables (newer:
// Unicode 16 letters such as Egyptian Hieroglyphs Extended-A, U+13460…, are
// letters there and unassigned in Go) and its NFC on those of the
// unicode-normalization-alignments crate (older: marks added since, such as
// U+09FE BENGALI SANDHI MARK, ccc 230 since Unicode 10, have ccc 0 there
// and are not reordered). On text without those code points the two must
// agree exactly; the test removes them from the generated text, and checks
// that they still differ, so that this note goes stale loudly. The probes
// are computed from both libraries, not listed by hand.
//
// It returns, per code point that differs, what differs.
func probeUnicodeTables(t *testing.T, py, path string) map[rune]string {
	t.Helper()
	var nfcCandidates []rune
	var probes []string
	for c := rune(0x80); c <= unicode.MaxRune; c++ {
		if !utf8.ValidRune(c) {
			continue
		}
		s := string(c)
		if norm.NFC.PropertiesString(s).CCC() != 0 || !norm.NFC.IsNormalString(s) {
			nfcCandidates = append(nfcCandidates, c)
			probes = append(probes, s, "a"+s+"\u0334") // U+0334 has ccc 1: does c sort after it?
		}
	}
	var hf struct {
		Classes       string
		HasNormalizer bool `json:"has_normalizer"`
		Normalized    []string
	}
	runTokenizers(t, py, "probe", map[string]any{"tokenizer": path, "normalize": probes}, &hf)
	classes := []rune(hf.Classes)
	if len(classes) != unicode.MaxRune+1-0x80 || len(hf.Normalized) != len(probes) {
		t.Fatalf("probe answered %d classes and %d normalisations, want %d and %d", len(classes), len(hf.Normalized), unicode.MaxRune+1-0x80, len(probes))
	}
	diffs := map[rune]string{}
	nClass, nNFC := 0, 0
	var examples []string
	for i, h := range classes {
		c := rune(0x80 + i)
		if h == '?' {
			continue
		}
		if g := goClass(c); g != h {
			diffs[c] = fmt.Sprintf("pattern class %c in tokenizers, %c in Go", h, g)
			nClass++
			if nClass <= 3 {
				examples = append(examples, fmt.Sprintf("%U: %s", c, diffs[c]))
			}
		}
	}
	for i, c := range nfcCandidates {
		if !hf.HasNormalizer {
			break // nothing is normalised: NFC is Qwen's
		}
		for k, p := range probes[2*i : 2*i+2] {
			if got, want := norm.NFC.String(p), hf.Normalized[2*i+k]; got != want && diffs[c] == "" {
				diffs[c] = fmt.Sprintf("NFC(%+q) is %+q in tokenizers, %+q in Go", p, want, got)
				nNFC++
				if nNFC <= 3 {
					examples = append(examples, fmt.Sprintf("%U: %s", c, diffs[c]))
				}
			}
		}
	}
	t.Logf("Unicode tables: %d code points classed differently by the pre-tokenizer pattern, %d normalised differently; e.g.\n  %s",
		nClass, nNFC, strings.Join(examples, "\n  "))
	if len(diffs) > 20000 {
		t.Fatalf("%d code points differ: more than Unicode-version drift", len(diffs))
	}
	return diffs
}

// goClass is the class ragen-go's splitter gives c (qwen2split.go).
func goClass(c rune) rune {
	switch {
	case unicode.IsLetter(c):
		return 'L'
	case unicode.IsNumber(c):
		return 'N'
	case unicode.IsSpace(c):
		return 'S'
	}
	return 'P'
}

func goldenBytes(texts []string) int {
	n := 0
	for _, s := range texts {
		n += len(s)
	}
	return n
}

func firstDiff(a, b []int) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// around shows the tokens near the first difference, decoded, on each side.
func around(tok *tokenizer.Tokenizer, text string, ours, hf []int) string {
	i := firstDiff(ours, hf)
	lo := max(0, i-3)
	show := func(ids []int) string {
		hi := min(len(ids), i+4)
		var parts []string
		for _, id := range ids[lo:hi] {
			s, _ := tok.Decode([]int{id})
			parts = append(parts, fmt.Sprintf("%d:%q", id, s))
		}
		return strings.Join(parts, " ")
	}
	prefix, _ := tok.Decode(ours[:lo]) // NFC may have changed lengths: roughly there
	ctx := strings.ToValidUTF8(text[min(len(prefix), len(text)):], "")
	if len(ctx) > 80 {
		ctx = ctx[:80]
		for !utf8.ValidString(ctx) {
			ctx = ctx[:len(ctx)-1]
		}
	}
	return fmt.Sprintf(" text from there %q\n ours %s\n hf   %s", ctx, show(ours), show(hf))
}

// clip shortens long lists in messages.
func clip[T any](x []T) []T {
	if len(x) > 60 {
		return x[:60]
	}
	return x
}
