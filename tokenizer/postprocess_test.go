package tokenizer

import (
	"slices"
	"strings"
	"testing"
)

// templateProcessing is a TemplateProcessing post-processor of the tiny
// file whose single template is items, over its special tokens <|end|>
// (259) and <x> (260).
func templateProcessing(items ...any) map[string]any {
	return map[string]any{"type": "TemplateProcessing", "single": items,
		"pair": []any{seqItem("A"), seqItem("B")},
		"special_tokens": map[string]any{
			"<|end|>": map[string]any{"id": "<|end|>", "ids": []int{259}, "tokens": []string{"<|end|>"}},
			"<x>":     map[string]any{"id": "<x>", "ids": []int{260}, "tokens": []string{"<x>"}},
		}}
}

func seqItem(id string) map[string]any {
	return map[string]any{"Sequence": map[string]any{"id": id, "type_id": 0}}
}

func specialItem(id string) map[string]any {
	return map[string]any{"SpecialToken": map[string]any{"id": id, "type_id": 0}}
}

func TestTemplateProcessing(t *testing.T) {
	for _, c := range []struct {
		name    string
		post    any
		cfg     map[string]any
		want    []int // EncodeSpecial("he")
		addsBOS bool
	}{
		{"none", nil, nil, []int{256}, false},
		{"byte level", map[string]any{"type": "ByteLevel"}, nil, []int{256}, false},
		{"prefix", templateProcessing(specialItem("<|end|>"), seqItem("A")), nil, []int{259, 256}, false},
		{"prefix is bos", templateProcessing(specialItem("<|end|>"), seqItem("A")),
			map[string]any{"bos_token": "<|end|>"}, []int{259, 256}, true},
		{"around", templateProcessing(specialItem("<x>"), seqItem("A"), specialItem("<|end|>")), nil, []int{260, 256, 259}, false},
		{"sequence of processors", map[string]any{"type": "Sequence", "processors": []any{
			map[string]any{"type": "ByteLevel"},
			templateProcessing(specialItem("<|end|>"), seqItem("A")),
		}}, map[string]any{"bos_token": "<|end|>"}, []int{259, 256}, true},
	} {
		dir := writeTiny(t, func(f map[string]any) { f["post_processor"] = c.post }, c.cfg)
		tk, err := Load(dir)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := tk.EncodeSpecial("he"); !slices.Equal(got, c.want) {
			t.Errorf("%s: EncodeSpecial = %v, want %v", c.name, got, c.want)
		}
		if got := tk.Encode("he"); !slices.Equal(got, []int{256}) {
			t.Errorf("%s: Encode = %v, want [256]: Encode adds no special tokens", c.name, got)
		}
		if tk.AddsBOS() != c.addsBOS {
			t.Errorf("%s: AddsBOS = %v, want %v", c.name, tk.AddsBOS(), c.addsBOS)
		}
	}
}

func TestTemplateProcessingErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		post any
		want string
	}{
		{"pair only", templateProcessing(seqItem("A"), seqItem("B")), `sequence "B", which only a pair of texts has`},
		{"no sequence", templateProcessing(specialItem("<x>")), "no sequence A"},
		{"twice", templateProcessing(seqItem("A"), seqItem("A")), "repeats sequence A"},
		{"unknown special", templateProcessing(specialItem("<s>"), seqItem("A")), `"<s>" is not in special_tokens`},
		{"no single", map[string]any{"type": "TemplateProcessing"}, "no single template"},
		{"two templates", map[string]any{"type": "Sequence", "processors": []any{
			templateProcessing(seqItem("A")), templateProcessing(seqItem("A"))}}, "two TemplateProcessing"},
	} {
		dir := writeTiny(t, func(f map[string]any) { f["post_processor"] = c.post }, nil)
		_, err := Load(dir)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "tokenizer.json: post_processor") {
			t.Errorf("%s: Load error %v, want one naming tokenizer.json's post_processor and containing %q", c.name, err, c.want)
		}
	}
}

// clean_up_tokenization_spaces: true (Llama 3.2 sets it) loads and changes
// nothing, as in transformers 5, which ignores it for BPE tokenizers.
func TestCleanUpTokenizationSpacesAccepted(t *testing.T) {
	dir := writeTiny(t, nil, map[string]any{"clean_up_tokenization_spaces": true})
	tk, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	const text = "he , ll ! o 's"
	if got, err := tk.Decode(tk.Encode(text)); err != nil || got != text {
		t.Errorf("Decode(Encode(%q)) = %q, %v", text, got, err)
	}
}
