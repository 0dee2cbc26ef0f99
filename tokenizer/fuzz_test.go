package tokenizer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// The fuzz targets of the files a checkpoint's tokenizer is read from:
// tokenizer.json (with the scanner that cuts out its vocabulary and
// merges), tokenizer_config.json and vocab_map.json. Bad bytes must give an
// error, never a panic, a hang or an allocation out of proportion to them.

// fuzzText exercises added tokens, merges, normalisation and bytes outside
// ASCII in a tokenizer the fuzzer built.
const fuzzText = "hello <|end|> he<x>ll e\u0301 12 日本"

// seedJSON marshals v for a seed.
func seedJSON(tb testing.TB, v any) []byte {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// readSeed reads a file of testdata/reduced: the tokenizer files of the
// tiny model that ragen bench --preset tiny writes.
func readSeed(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "reduced", name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// FuzzLoad: no tokenizer.json and tokenizer_config.json make Load's
// parsing panic, and a tokenizer it accepts encodes text to ids of its
// vocabulary that decode without error.
func FuzzLoad(f *testing.F) {
	tiny := seedJSON(f, tinyFile())
	cfg := seedJSON(f, map[string]any{
		"eos_token": "<|end|>", "pad_token": map[string]any{"content": "<x>"}, "bos_token": nil,
		"added_tokens_decoder": map[string]any{"259": map[string]any{"content": "<|end|>", "special": true,
			"lstrip": false, "rstrip": false, "normalized": false, "single_word": false}},
		"chat_template":                "{% for m in messages %}{{ m.content }}<|end|>{% endfor %}",
		"clean_up_tokenization_spaces": false, "model_max_length": 32768,
	})
	f.Add(tiny, []byte{})
	f.Add(tiny, cfg)
	// String merges "a b", a named chat template, Digits and TemplateProcessing.
	other := tinyFile()
	model(other)["merges"] = []any{"h e", "l l", "he ll"}
	other["pre_tokenizer"] = map[string]any{"type": "Sequence", "pretokenizers": []any{
		map[string]any{"type": "Digits", "individual_digits": true},
		map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
	}}
	other["post_processor"] = map[string]any{"type": "TemplateProcessing",
		"single":         []any{map[string]any{"SpecialToken": map[string]any{"id": "<|end|>", "type_id": 0}}, map[string]any{"Sequence": map[string]any{"id": "A", "type_id": 0}}},
		"pair":           []any{},
		"special_tokens": map[string]any{"<|end|>": map[string]any{"id": "<|end|>", "ids": []any{259}, "tokens": []any{"<|end|>"}}},
	}
	f.Add(seedJSON(f, other), seedJSON(f, map[string]any{"chat_template": []any{
		map[string]any{"name": "default", "template": "{{ messages[0].content }}"}}}))
	// Qwen2.5's own tokenizer_config.json, whose tokens the tiny file lacks.
	if qwenCfg, err := os.ReadFile(filepath.Join("..", filepath.Dir(filepath.FromSlash(DefaultQwenPath)), "tokenizer_config.json")); err == nil {
		f.Add(tiny, qwenCfg)
	}
	// ragen bench --preset tiny's reduced vocabulary (618 tokens), as written.
	f.Add(readSeed(f, "tokenizer.json"), readSeed(f, "tokenizer_config.json"))
	f.Add([]byte(`{"model":{"type":"BPE","vocab":{"a":2000000000},"merges":[]}}`), []byte{})
	f.Fuzz(func(t *testing.T, tok, cfgData []byte) {
		src, err := parseSource("tokenizer.json", tok)
		if err != nil {
			return
		}
		var cfg *configJSON
		if len(cfgData) > 0 {
			if cfg, err = parseConfig("tokenizer_config.json", cfgData); err != nil {
				return
			}
		}
		tk, err := build(src, cfg, "tokenizer_config.json")
		if err != nil {
			return
		}
		for _, special := range []bool{false, true} {
			ids := tk.Encode(fuzzText)
			if special {
				ids = tk.EncodeSpecial(fuzzText)
			}
			for _, id := range ids {
				if id < 0 || id >= tk.VocabSize() {
					t.Fatalf("Encode gave id %d of a %d-token vocabulary", id, tk.VocabSize())
				}
			}
			if _, err := tk.Decode(ids); err != nil {
				t.Fatalf("Decode of its own encoding %v: %v", ids, err)
			}
		}
	})
}

// FuzzScanString: the scanner's strings decode as encoding/json decodes
// them, and it accepts exactly the strings encoding/json accepts (of valid
// UTF-8: encoding/json replaces invalid bytes, which the scanner keeps for
// the byte-level check to refuse).
func FuzzScanString(f *testing.F) {
	for _, s := range []string{`"hello"`, `"\u0120the"`, `"\ud83d\ude00"`, `"\ud800x"`, `"\udc00\ud800\udc00"`,
		`"a\"b\\c\/\b\f\n\r\t"`, `"\u00zz"`, `"unterminated`, "\"tab\there\"", `"\x"`, `"ĠĠ"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s := &scanner{data: data}
		got, err := s.str(nil)
		if err == nil {
			data = data[:s.pos] // the string the scanner read, without what follows
		}
		var want string
		jerr := json.Unmarshal(data, &want)
		if !utf8.Valid(data) {
			return
		}
		switch {
		case err == nil && jerr != nil:
			t.Fatalf("scanner accepts %q, encoding/json does not: %v", data, jerr)
		case err != nil && jerr == nil && strings.HasPrefix(strings.TrimLeft(string(data), " \t\r\n"), `"`):
			t.Fatalf("encoding/json accepts %q, the scanner does not: %v", data, err)
		case err == nil && string(got) != want:
			t.Fatalf("%q: scanner %q, encoding/json %q", data, got, want)
		}
	})
}

// FuzzFindModelParts: the scanner that cuts model.vocab and model.merges
// out of tokenizer.json never panics, its spans lie inside the data, and
// on a document encoding/json accepts each span is one JSON value; the
// blanked copy is JSON too.
func FuzzFindModelParts(f *testing.F) {
	f.Add(seedJSON(f, tinyFile()))
	f.Add([]byte(`{"model": {"vocab": {"a": 0, "b": 1}, "merges": ["a b"]}, "x": [1, {"y": null}]}`))
	f.Add([]byte(`{"model": {"merges": [["a", "b"]], "vocab": {}}}`))
	f.Add([]byte(`{"model": 3}`))
	f.Add([]byte(`{"x": ` + strings.Repeat("[", 20000)))
	f.Fuzz(func(t *testing.T, data []byte) {
		vocab, merges, err := findModelParts(data)
		if err != nil {
			return
		}
		for _, sp := range []span{vocab, merges} {
			if sp.end == 0 {
				continue
			}
			if sp.start < 0 || sp.start >= sp.end || sp.end > len(data) {
				t.Fatalf("span %+v of %d bytes", sp, len(data))
			}
			if json.Valid(data) && !json.Valid(data[sp.start:sp.end]) {
				t.Fatalf("span %q of a valid document is not one JSON value", data[sp.start:sp.end])
			}
		}
		if json.Valid(data) && !json.Valid(blankOut(data, vocab, merges)) {
			t.Fatalf("blanking %q leaves %q", data, blankOut(data, vocab, merges))
		}
	})
}

// FuzzReduction: no vocab_map.json makes its parser panic, and a map it
// accepts holds ascending ids inside its base vocabulary, as Reduce writes.
func FuzzReduction(f *testing.F) {
	f.Add(readSeed(f, VocabMapFile))
	f.Add([]byte(`{"ids": [0, 1, 2, 151643, 151645], "base_vocab_size": 151665}`))
	f.Add([]byte("{\n \"ids\": [\n  0,\n  5\n ],\n \"base_vocab_size\": 6\n}\n"))
	f.Add([]byte(`{"ids": [3, 2], "base_vocab_size": 4}`))
	f.Add([]byte(`{"ids": [0], "base_vocab_size": 99999999999}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		red, err := parseReduction(VocabMapFile, data)
		if err != nil {
			return
		}
		for r, id := range red.IDs {
			if id < 0 || id >= red.BaseSize || r > 0 && id <= red.IDs[r-1] {
				t.Fatalf("accepted ids %v of a %d-token base", red.IDs, red.BaseSize)
			}
		}
	})
}
