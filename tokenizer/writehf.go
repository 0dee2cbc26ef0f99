package tokenizer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// WriteHF writes t as HuggingFace tokenizer files into dir (made if
// needed): tokenizer.json, which the tokenizers library loads to the same
// ids as t, and tokenizer_config.json with the bos, eos, pad and unk
// tokens, the chat template and add_bos_token. For a tokenizer from
// FromGGUF, those ids are llama.cpp's: the pre-tokenizer is written as
// llama.cpp runs it, ignore_merges as llama.cpp sets it, the control and
// unknown tokens as special added tokens and the user-defined ones as
// non-special added tokens, and add_bos_token as a TemplateProcessing
// post-processor (transformers 5 takes the post-processor, not
// add_bos_token, when there is a tokenizer.json).
//
// It refuses a FromGGUF tokenizer whose added tokens overlap in part (the
// end of one is the start of another), where llama.cpp and HuggingFace cut
// text differently. One difference cannot be written: a byte without a
// token of its own (SmolLM2 has none for 21 bytes, control characters and
// bytes of unassigned planes) is left out before merging by HuggingFace
// and is a barrier to merging in llama.cpp, so a piece holding one may
// encode differently.
func (t *Tokenizer) WriteHF(dir string) error {
	if m, ok := t.rawAdded.(longestFirst); ok {
		texts := make([]string, len(m))
		for i, e := range m {
			texts[i] = e.text
		}
		a, b, _ := partialOverlap(texts)
		return fmt.Errorf("%s: added tokens %q and %q overlap, and HuggingFace's tokenizers would cut text "+
			"holding both differently from llama.cpp", t.path, a, b)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write tokenizer: %w", err)
	}
	file, err := t.hfFile()
	if err != nil {
		return err
	}
	for name, v := range map[string]any{"tokenizer.json": file, "tokenizer_config.json": t.hfConfig()} {
		if err := writeJSONFile(filepath.Join(dir, name), v); err != nil {
			return fmt.Errorf("write tokenizer: %w", err)
		}
	}
	return nil
}

// hfTokenizer is the layout of tokenizer.json that WriteHF writes.
type hfTokenizer struct {
	Version       string           `json:"version"`
	Truncation    any              `json:"truncation"`
	Padding       any              `json:"padding"`
	AddedTokens   []addedTokenJSON `json:"added_tokens"`
	Normalizer    json.RawMessage  `json:"normalizer"`
	PreTokenizer  any              `json:"pre_tokenizer"`
	PostProcessor any              `json:"post_processor"`
	Decoder       any              `json:"decoder"`
	Model         hfModel          `json:"model"`
}

type hfModel struct {
	Type                    string          `json:"type"`
	Dropout                 any             `json:"dropout"`
	UnkToken                any             `json:"unk_token"`
	ContinuingSubwordPrefix any             `json:"continuing_subword_prefix"`
	EndOfWordSuffix         any             `json:"end_of_word_suffix"`
	FuseUnk                 bool            `json:"fuse_unk"`
	ByteFallback            bool            `json:"byte_fallback"`
	IgnoreMerges            bool            `json:"ignore_merges"`
	Vocab                   json.RawMessage `json:"vocab"`
	Merges                  json.RawMessage `json:"merges"`
}

type obj = map[string]any

func (t *Tokenizer) hfFile() (*hfTokenizer, error) {
	f := &hfTokenizer{Version: "1.0", AddedTokens: t.added, Normalizer: t.normJSON,
		Decoder: obj{"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true}}
	if f.AddedTokens == nil {
		f.AddedTokens = []addedTokenJSON{}
	}
	var steps []any
	for _, st := range t.preSteps {
		switch st.kind {
		case "Split":
			steps = append(steps, obj{"type": "Split", "pattern": obj{"Regex": st.pattern}, "behavior": "Isolated", "invert": false})
		case "Digits":
			steps = append(steps, obj{"type": "Digits", "individual_digits": st.individual})
		case "ByteLevel":
			steps = append(steps, obj{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": st.useRegex})
		}
	}
	f.PreTokenizer = obj{"type": "Sequence", "pretokenizers": steps}
	byteLevel := obj{"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": false, "use_regex": true}
	f.PostProcessor = byteLevel
	if len(t.post.prefix)+len(t.post.suffix) > 0 {
		f.PostProcessor = obj{"type": "Sequence", "processors": []any{byteLevel, t.hfTemplate()}}
	}
	f.Model = hfModel{Type: "BPE", IgnoreMerges: t.pieces.ignoreMerges}
	var err error
	if f.Model.Vocab, err = t.hfVocab(); err != nil {
		return nil, err
	}
	if f.Model.Merges, err = t.hfMerges(); err != nil {
		return nil, err
	}
	return f, nil
}

// hfTemplate writes the post-processor's tokens as TemplateProcessing,
// each token its own special token; the pair template repeats them around
// the second text, as Llama 3's does.
func (t *Tokenizer) hfTemplate() obj {
	special := obj{}
	item := func(id, typeID int) obj {
		name := t.tokenText(id)
		special[name] = obj{"id": name, "ids": []int{id}, "tokens": []string{name}}
		return obj{"SpecialToken": obj{"id": name, "type_id": typeID}}
	}
	seq := func(typeID int) []any {
		var items []any
		for _, id := range t.post.prefix {
			items = append(items, item(id, typeID))
		}
		items = append(items, obj{"Sequence": obj{"id": string(rune('A' + typeID)), "type_id": typeID}})
		for _, id := range t.post.suffix {
			items = append(items, item(id, typeID))
		}
		return items
	}
	return obj{"type": "TemplateProcessing", "single": seq(0), "pair": append(seq(0), seq(1)...), "special_tokens": special}
}

// hfVocab writes model.vocab, in id order.
func (t *Tokenizer) hfVocab() (json.RawMessage, error) {
	ids := make([]int, 0, len(t.ranks))
	for _, id := range t.ranks {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var b bytes.Buffer
	b.WriteByte('{')
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := writeJSONString(&b, byteLevelEncode(t.tokens[id])); err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, ":%d", id)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// hfMerges writes model.merges as pairs, earliest first.
func (t *Tokenizer) hfMerges() (json.RawMessage, error) {
	var b bytes.Buffer
	b.WriteByte('[')
	for r, pr := range t.merges.pairs {
		if r > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('[')
		if err := writeJSONString(&b, byteLevelEncode(t.tokens[pr[0]])); err != nil {
			return nil, err
		}
		b.WriteByte(',')
		if err := writeJSONString(&b, byteLevelEncode(t.tokens[pr[1]])); err != nil {
			return nil, err
		}
		b.WriteByte(']')
	}
	b.WriteByte(']')
	return b.Bytes(), nil
}

// tokenText is a token as tokenizer files name it: an added token's text,
// or a vocabulary entry in byte-level text.
func (t *Tokenizer) tokenText(id int) string {
	for _, a := range t.added {
		if a.ID == id {
			return a.Content
		}
	}
	return byteLevelEncode(t.tokens[id])
}

// hfConfig is tokenizer_config.json.
func (t *Tokenizer) hfConfig() obj {
	name := func(id int) any {
		if id < 0 {
			return nil
		}
		return t.tokenText(id)
	}
	cfg := obj{
		"bos_token": name(t.bos), "eos_token": name(t.eos), "pad_token": name(t.pad), "unk_token": name(t.unk),
		"add_bos_token": t.AddsBOS(), "add_eos_token": false, "clean_up_tokenization_spaces": false,
		"tokenizer_class": "PreTrainedTokenizerFast",
	}
	if t.chatTempl != "" {
		cfg["chat_template"] = t.chatTempl
	}
	return cfg
}

// writeJSONString writes s as a JSON string without HTML escaping.
func writeJSONString(b *bytes.Buffer, s string) error {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return err
	}
	b.Truncate(b.Len() - 1) // Encode's newline
	return nil
}
