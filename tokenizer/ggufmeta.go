package tokenizer

import (
	"fmt"

	"github.com/ragen-go/ragen/gguf"
)

// LoadGGUF reads the tokenizer of a GGUF file: FromGGUF of its metadata.
func LoadGGUF(path string) (*Tokenizer, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	v, err := ReadGGUFVocab(f)
	if err != nil {
		return nil, err
	}
	return FromGGUF(v)
}

// ReadGGUFVocab reads the tokenizer metadata of a parsed GGUF file.
// Absent ids are -1; an absent add_bos_token is llama.cpp's default for
// the pre-tokenizer.
func ReadGGUFVocab(f *gguf.File) (GGUFVocab, error) {
	v := GGUFVocab{Source: f.Name, BOS: -1, EOS: -1, Pad: -1, Unk: -1}
	var err error
	if v.Model, err = f.String("tokenizer.ggml.model"); err != nil {
		return v, err
	}
	if f.Has("tokenizer.ggml.pre") {
		if v.Pre, err = f.String("tokenizer.ggml.pre"); err != nil {
			return v, err
		}
	}
	if v.Tokens, err = f.Strings("tokenizer.ggml.tokens"); err != nil {
		return v, err
	}
	if f.Has("tokenizer.ggml.token_type") {
		types, err := f.Ints("tokenizer.ggml.token_type")
		if err != nil {
			return v, err
		}
		v.TokenTypes = make([]int32, len(types))
		for i, t := range types {
			if t < 0 || t > GGUFTokenByte {
				return v, fmt.Errorf("gguf %s: tokenizer.ggml.token_type[%d] is %d, not a llama.cpp token type (1 to 6)", f.Name, i, t)
			}
			v.TokenTypes[i] = int32(t)
		}
	}
	if f.Has("tokenizer.ggml.merges") {
		if v.Merges, err = f.Strings("tokenizer.ggml.merges"); err != nil {
			return v, err
		}
	}
	for _, id := range []struct {
		key string
		dst *int
	}{
		{"tokenizer.ggml.bos_token_id", &v.BOS}, {"tokenizer.ggml.eos_token_id", &v.EOS},
		{"tokenizer.ggml.padding_token_id", &v.Pad}, {"tokenizer.ggml.unknown_token_id", &v.Unk},
	} {
		if !f.Has(id.key) {
			continue
		}
		n, err := f.Uint(id.key)
		if err != nil {
			return v, err
		}
		if n >= uint64(len(v.Tokens)) {
			return v, fmt.Errorf("gguf %s: %s is %d, outside the %d tokens", f.Name, id.key, n, len(v.Tokens))
		}
		*id.dst = int(n)
	}
	v.AddBOS = GGUFDefaultAddBOS(v.Pre)
	if f.Has("tokenizer.ggml.add_bos_token") {
		if v.AddBOS, err = f.Bool("tokenizer.ggml.add_bos_token"); err != nil {
			return v, err
		}
	}
	if f.Has("tokenizer.chat_template") {
		if v.ChatTemplate, err = f.String("tokenizer.chat_template"); err != nil {
			return v, err
		}
	}
	return v, nil
}

// Metadata is v as GGUF metadata, in the order and with the value types
// llama.cpp's converter writes.
func (v GGUFVocab) Metadata() []gguf.KV {
	meta := []gguf.KV{
		{Key: "tokenizer.ggml.model", Value: v.Model},
		{Key: "tokenizer.ggml.pre", Value: v.Pre},
		{Key: "tokenizer.ggml.tokens", Value: v.Tokens},
	}
	if v.TokenTypes != nil {
		meta = append(meta, gguf.KV{Key: "tokenizer.ggml.token_type", Value: v.TokenTypes})
	}
	meta = append(meta, gguf.KV{Key: "tokenizer.ggml.merges", Value: v.Merges})
	for _, id := range []struct {
		key string
		v   int
	}{{"tokenizer.ggml.bos_token_id", v.BOS}, {"tokenizer.ggml.eos_token_id", v.EOS},
		{"tokenizer.ggml.unknown_token_id", v.Unk}, {"tokenizer.ggml.padding_token_id", v.Pad}} {
		if id.v >= 0 {
			meta = append(meta, gguf.KV{Key: id.key, Value: uint32(id.v)})
		}
	}
	meta = append(meta, gguf.KV{Key: "tokenizer.ggml.add_bos_token", Value: v.AddBOS})
	if v.ChatTemplate != "" {
		meta = append(meta, gguf.KV{Key: "tokenizer.chat_template", Value: v.ChatTemplate})
	}
	return meta
}

// PadTo extends the token list to n entries with unused "[PAD<id>]"
// tokens, as llama.cpp's converter does for a model whose embedding has
// more rows than its tokenizer has tokens (Qwen2.5's).
func (v *GGUFVocab) PadTo(n int) {
	for id := len(v.Tokens); id < n; id++ {
		v.Tokens = append(v.Tokens, fmt.Sprintf("[PAD%d]", id))
		if v.TokenTypes != nil {
			v.TokenTypes = append(v.TokenTypes, GGUFTokenUnused)
		}
	}
}
