package tokenizer

import (
	"path/filepath"
	"testing"
)

// An unknown key in a part of tokenizer.json the tokenizer reads is an
// error naming the file, the part and the key; a misspelt "special" would
// otherwise leave the token non-special without a word.
func TestLoadUnknownKeys(t *testing.T) {
	added0 := func(f map[string]any) map[string]any { return f["added_tokens"].([]any)[0].(map[string]any) }
	pre := func(f map[string]any, i int) map[string]any {
		return f["pre_tokenizer"].(map[string]any)["pretokenizers"].([]any)[i].(map[string]any)
	}
	template := map[string]any{"type": "TemplateProcessing",
		"single":         []any{map[string]any{"SpecialToken": map[string]any{"id": "<|end|>", "type_id": 0}}, map[string]any{"Sequence": map[string]any{"id": "A", "type_id": 0}}},
		"pair":           []any{},
		"special_tokens": map[string]any{"<|end|>": map[string]any{"id": "<|end|>", "ids": []int{259}, "tokens": []string{"<|end|>"}}}}
	withTemplate := func(edit func(tp map[string]any)) func(map[string]any) {
		return func(f map[string]any) {
			tp := deepCopy(template)
			edit(tp)
			f["post_processor"] = map[string]any{"type": "Sequence", "processors": []any{map[string]any{"type": "ByteLevel", "trim_offsets": false}, tp}}
		}
	}
	for _, c := range []struct {
		name string
		edit func(map[string]any)
		cfg  map[string]any
		want string // after "<file>: "
	}{
		{"added token", func(f map[string]any) { delete(added0(f), "special"); added0(f)["specicl"] = true }, nil,
			`added_tokens[0] ("<|end|>") has unknown key "specicl" (its keys are content, id, lstrip, normalized, rstrip, single_word, special)`},
		{"top level", func(f map[string]any) { f["normaliser"] = nil }, nil,
			`the top level has unknown key "normaliser" (its keys are added_tokens, decoder, model, normalizer, padding, post_processor, pre_tokenizer, truncation, version)`},
		{"model", func(f map[string]any) { model(f)["ignore_merge"] = true }, nil,
			`model has unknown key "ignore_merge" (its keys are byte_fallback, continuing_subword_prefix, dropout, end_of_word_suffix, fuse_unk, ignore_merges, merges, type, unk_token, vocab)`},
		{"normalizer", func(f map[string]any) {
			f["normalizer"] = map[string]any{"type": "Sequence", "normalizers": []any{map[string]any{"type": "NFC", "form": "C"}}}
		}, nil,
			`normalizer: NFC has unknown key "form" (its keys are type)`},
		{"split", func(f map[string]any) { pre(f, 0)["invrt"] = false }, nil,
			`pre_tokenizer: Split has unknown key "invrt" (its keys are behavior, invert, pattern, type)`},
		{"split pattern", func(f map[string]any) { pre(f, 0)["pattern"] = map[string]any{"regex": "a"} }, nil,
			`pre_tokenizer: Split pattern has unknown key "regex" (its keys are Regex, String)`},
		{"byte level", func(f map[string]any) { pre(f, 1)["use_regexp"] = false }, nil,
			`pre_tokenizer: ByteLevel has unknown key "use_regexp" (its keys are add_prefix_space, trim_offsets, type, use_regex)`},
		{"sequence", func(f map[string]any) { f["pre_tokenizer"].(map[string]any)["steps"] = []any{} }, nil,
			`pre_tokenizer: Sequence has unknown key "steps" (its keys are pretokenizers, type)`},
		{"template", withTemplate(func(tp map[string]any) { tp["singel"] = tp["single"] }), nil,
			`post_processor: TemplateProcessing has unknown key "singel" (its keys are pair, single, special_tokens, type)`},
		{"template item", withTemplate(func(tp map[string]any) {
			tp["single"].([]any)[0].(map[string]any)["SpecialToken"].(map[string]any)["typeid"] = 0
		}), nil, `post_processor: TemplateProcessing single[0] SpecialToken has unknown key "typeid" (its keys are id, type_id)`},
		{"template special", withTemplate(func(tp map[string]any) {
			tp["special_tokens"].(map[string]any)["<|end|>"].(map[string]any)["idz"] = []int{1}
		}), nil, `post_processor: TemplateProcessing special_tokens["<|end|>"] has unknown key "idz" (its keys are id, ids, tokens)`},
		{"decoder", func(f map[string]any) { f["decoder"].(map[string]any)["trim_offset"] = true }, nil,
			`decoder: ByteLevel has unknown key "trim_offset" (its keys are add_prefix_space, trim_offsets, type, use_regex)`},
		{"config added", nil, map[string]any{"added_tokens_decoder": map[string]any{"259": map[string]any{"content": "<|end|>", "specail": true}}},
			`added_tokens_decoder["259"] ("<|end|>") has unknown key "specail" (its keys are content, id, lstrip, normalized, rstrip, single_word, special)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := writeTiny(t, c.edit, c.cfg)
			file := filepath.Join(dir, "tokenizer.json")
			if c.cfg != nil {
				file = filepath.Join(dir, "tokenizer_config.json")
			}
			want := file + ": " + c.want
			if _, err := Load(dir); err == nil || err.Error() != want {
				t.Errorf("Load = %v\nwant %s", err, want)
			}
		})
	}
	// The keys HuggingFace writes load: the template above, and a
	// tokenizer_config.json with transformers' own settings.
	if _, err := Load(writeTiny(t, withTemplate(func(map[string]any) {}), map[string]any{"model_max_length": 512, "tokenizer_class": "X",
		"added_tokens_decoder": map[string]any{"259": map[string]any{"content": "<|end|>", "lstrip": false, "normalized": false, "rstrip": false, "single_word": false, "special": true}}})); err != nil {
		t.Errorf("a file with every known key: %v", err)
	}
}

// deepCopy copies nested maps and slices of a JSON value.
func deepCopy(v map[string]any) map[string]any {
	var cp func(any) any
	cp = func(x any) any {
		switch x := x.(type) {
		case map[string]any:
			m := make(map[string]any, len(x))
			for k, v := range x {
				m[k] = cp(v)
			}
			return m
		case []any:
			s := make([]any, len(x))
			for i, v := range x {
				s[i] = cp(v)
			}
			return s
		}
		return x
	}
	return cp(v).(map[string]any)
}
