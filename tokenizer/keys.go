package tokenizer

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Unknown keys in the parts of tokenizer.json this package reads are
// errors: encoding/json would skip a misspelt "specicl" and leave the
// added token it was meant for non-special. The key lists are what
// HuggingFace tokenizers serialises for each part (checked against the
// Qwen2.5, Qwen3, Llama 3.2 and SmolLM2 files); keys it writes that change
// no token id (truncation, trim_offsets, fuse_unk, a template's pair) are
// accepted and have no effect.
var (
	fileKeys  = []string{"version", "truncation", "padding", "added_tokens", "normalizer", "pre_tokenizer", "post_processor", "decoder", "model"}
	modelKeys = []string{"type", "dropout", "unk_token", "continuing_subword_prefix", "end_of_word_suffix", "fuse_unk", "byte_fallback", "ignore_merges", "vocab", "merges"}
	addedKeys = []string{"id", "content", "single_word", "lstrip", "rstrip", "normalized", "special"}
)

// byteLevelKeys are the ByteLevel pre-tokenizer's, post-processor's and
// decoder's (one struct in tokenizers).
var byteLevelKeys = []string{"type", "add_prefix_space", "trim_offsets", "use_regex"}

// componentKeys are the keys of each supported component, by its place in
// tokenizer.json and its type. A type not listed is refused by its parser.
var componentKeys = map[string]map[string][]string{
	"normalizer": {
		"NFC": {"type"}, "NFD": {"type"}, "NFKC": {"type"}, "NFKD": {"type"},
		"Sequence": {"type", "normalizers"},
	},
	"pre_tokenizer": {
		"Sequence":  {"type", "pretokenizers"},
		"Split":     {"type", "pattern", "behavior", "invert"},
		"Digits":    {"type", "individual_digits"},
		"ByteLevel": byteLevelKeys,
	},
	"post_processor": {
		"Sequence":           {"type", "processors"},
		"ByteLevel":          byteLevelKeys,
		"TemplateProcessing": {"type", "single", "pair", "special_tokens"},
	},
	"decoder": {"ByteLevel": byteLevelKeys},
}

// unknownKey returns the first key, in sorted order, of the JSON object raw
// that allowed lacks; "" when there is none, or raw is no object (the
// decoder reports that).
func unknownKey(raw []byte, allowed []string) string {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return ""
	}
	var bad []string
	for k := range obj {
		if !slices.Contains(allowed, k) {
			bad = append(bad, k)
		}
	}
	if len(bad) == 0 {
		return ""
	}
	sort.Strings(bad)
	return bad[0]
}

// keyError is the sentence for key found in what, which takes allowed.
func keyError(what, key string, allowed []string) error {
	known := slices.Clone(allowed)
	sort.Strings(known)
	return fmt.Errorf("%s has unknown key %q (its keys are %s)", what, key, strings.Join(known, ", "))
}

// checkFileKeys checks the top level, model and added_tokens of
// tokenizer.json; blanked is the file with vocab and merges cut out, which
// has already decoded into a fileJSON.
func checkFileKeys(blanked []byte) error {
	if k := unknownKey(blanked, fileKeys); k != "" {
		return keyError("the top level", k, fileKeys)
	}
	var parts struct {
		Model       json.RawMessage   `json:"model"`
		AddedTokens []json.RawMessage `json:"added_tokens"`
	}
	if err := json.Unmarshal(blanked, &parts); err != nil {
		return err
	}
	if k := unknownKey(parts.Model, modelKeys); k != "" {
		return keyError("model", k, modelKeys)
	}
	for i, a := range parts.AddedTokens {
		if err := checkAddedKeys(fmt.Sprintf("added_tokens[%d]", i), a); err != nil {
			return err
		}
	}
	return nil
}

// checkAddedKeys checks one added token object; where says which.
func checkAddedKeys(where string, raw json.RawMessage) error {
	k := unknownKey(raw, addedKeys)
	if k == "" {
		return nil
	}
	var a struct {
		Content string `json:"content"`
	}
	if json.Unmarshal(raw, &a) == nil && a.Content != "" {
		where += fmt.Sprintf(" (%q)", a.Content)
	}
	return keyError(where, k, addedKeys)
}

// checkConfigKeys checks the added_tokens_decoder entries of
// tokenizer_config.json, whose other keys are transformers' settings of
// every kind and stay free.
func checkConfigKeys(data []byte) error {
	var cfg struct {
		Decoder map[string]json.RawMessage `json:"added_tokens_decoder"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		return err
	}
	ids := make([]string, 0, len(cfg.Decoder))
	for id := range cfg.Decoder {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if err := checkAddedKeys(fmt.Sprintf("added_tokens_decoder[%q]", id), cfg.Decoder[id]); err != nil {
			return err
		}
	}
	return nil
}

// checkComponent checks the keys of a component of a supported type at
// place (normalizer, pre_tokenizer, post_processor or decoder).
func checkComponent(place, typ string, raw json.RawMessage) error {
	allowed, ok := componentKeys[place][typ]
	if !ok {
		return nil
	}
	if k := unknownKey(raw, allowed); k != "" {
		return keyError(typ, k, allowed)
	}
	switch {
	case place == "pre_tokenizer" && typ == "Split":
		var sp struct {
			Pattern json.RawMessage `json:"pattern"`
		}
		if json.Unmarshal(raw, &sp) == nil {
			if k := unknownKey(sp.Pattern, patternKeys); k != "" {
				return keyError("Split pattern", k, patternKeys)
			}
		}
	case place == "post_processor" && typ == "TemplateProcessing":
		return checkTemplateKeys(raw)
	}
	return nil
}

// Keys of the objects inside a Split's pattern and a TemplateProcessing.
var (
	patternKeys       = []string{"Regex", "String"}
	templateItemKeys  = []string{"SpecialToken", "Sequence"}
	templateInnerKeys = []string{"id", "type_id"}
	specialTokenKeys  = []string{"id", "ids", "tokens"}
)

// checkTemplateKeys checks a TemplateProcessing's single items and
// special_tokens entries.
func checkTemplateKeys(raw json.RawMessage) error {
	var tp struct {
		Single        []json.RawMessage          `json:"single"`
		SpecialTokens map[string]json.RawMessage `json:"special_tokens"`
	}
	if err := json.Unmarshal(raw, &tp); err != nil {
		return err
	}
	for i, item := range tp.Single {
		if k := unknownKey(item, templateItemKeys); k != "" {
			return keyError(fmt.Sprintf("TemplateProcessing single[%d]", i), k, templateItemKeys)
		}
		var inner map[string]json.RawMessage
		if json.Unmarshal(item, &inner) != nil {
			continue
		}
		for _, name := range templateItemKeys {
			if k := unknownKey(inner[name], templateInnerKeys); k != "" {
				return keyError(fmt.Sprintf("TemplateProcessing single[%d] %s", i, name), k, templateInnerKeys)
			}
		}
	}
	names := make([]string, 0, len(tp.SpecialTokens))
	for n := range tp.SpecialTokens {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if k := unknownKey(tp.SpecialTokens[n], specialTokenKeys); k != "" {
			return keyError(fmt.Sprintf("TemplateProcessing special_tokens[%q]", n), k, specialTokenKeys)
		}
	}
	return nil
}
