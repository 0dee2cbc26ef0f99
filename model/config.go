package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Config is a Qwen2 config.json, the fields this implementation reads.
// Values that would change the computation in ways it does not implement
// (sliding-window attention, rope scaling, another architecture) are
// rejected by Validate rather than ignored.
type Config struct {
	ModelType             string          `json:"model_type"`              // must be "qwen2"
	Architectures         []string        `json:"architectures"`           // e.g. ["Qwen2ForCausalLM"]
	HiddenSize            int             `json:"hidden_size"`             // model width d
	IntermediateSize      int             `json:"intermediate_size"`       // SwiGLU inner width
	NumHiddenLayers       int             `json:"num_hidden_layers"`       // decoder layers
	NumAttentionHeads     int             `json:"num_attention_heads"`     // query heads
	NumKeyValueHeads      int             `json:"num_key_value_heads"`     // key/value heads (GQA)
	HeadDim               int             `json:"head_dim,omitempty"`      // optional; d / heads when absent
	RopeTheta             float64         `json:"rope_theta"`              // rotary base
	RMSNormEps            float64         `json:"rms_norm_eps"`            // RMSNorm epsilon
	VocabSize             int             `json:"vocab_size"`              // rows of the embedding
	MaxPositionEmbeddings int             `json:"max_position_embeddings"` // longest position the model was trained for
	TieWordEmbeddings     bool            `json:"tie_word_embeddings"`     // lm_head reuses embed_tokens
	TorchDtype            string          `json:"torch_dtype"`             // dtype of the stored weights
	BOSTokenID            *int            `json:"bos_token_id,omitempty"`  // may be null
	EOSTokenID            *int            `json:"eos_token_id,omitempty"`  // end of text
	HiddenAct             string          `json:"hidden_act"`              // must be "silu"
	UseSlidingWindow      bool            `json:"use_sliding_window"`      // must be false
	SlidingWindow         *int            `json:"sliding_window,omitempty"`
	MaxWindowLayers       *int            `json:"max_window_layers,omitempty"`
	RopeScaling           json.RawMessage `json:"rope_scaling,omitempty"` // must be null
	AttentionDropout      float64         `json:"attention_dropout"`      // must be 0
	InitializerRange      float64         `json:"initializer_range,omitempty"`
	UseCache              bool            `json:"use_cache,omitempty"`
	TransformersVersion   string          `json:"transformers_version,omitempty"`

	// raw is config.json as read, so an export keeps every key the source
	// had (transformers' bookkeeping included).
	raw map[string]json.RawMessage
}

// LoadConfig reads and validates dir/config.json (or a path to the file).
func LoadConfig(path string) (Config, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, "config.json")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("reading model config: %w", err)
	}
	c, err := ParseConfig(data)
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// ParseConfig parses and validates config.json contents.
func ParseConfig(data []byte) (Config, error) {
	// Keys other than these fields are transformers' bookkeeping and are
	// ignored; an absent tie_word_embeddings is false, Qwen2Config's default.
	var c Config
	if err := json.Unmarshal(data, &c); err != nil {
		return Config{}, fmt.Errorf("not a valid config.json: %w", err)
	}
	if err := json.Unmarshal(data, &c.raw); err != nil {
		return Config{}, fmt.Errorf("not a valid config.json: %w", err)
	}
	if c.HiddenAct == "" {
		c.HiddenAct = "silu"
	}
	return c, c.Validate()
}

// Validate checks every field this implementation depends on, naming the
// field at fault.
func (c Config) Validate() error {
	if c.ModelType != "qwen2" {
		return fmt.Errorf("model_type %q is not supported (only qwen2)", c.ModelType)
	}
	pos := []struct {
		name string
		v    int
	}{
		{"hidden_size", c.HiddenSize}, {"intermediate_size", c.IntermediateSize},
		{"num_hidden_layers", c.NumHiddenLayers}, {"num_attention_heads", c.NumAttentionHeads},
		{"num_key_value_heads", c.NumKeyValueHeads}, {"vocab_size", c.VocabSize},
		{"max_position_embeddings", c.MaxPositionEmbeddings},
	}
	for _, p := range pos {
		if p.v <= 0 {
			return fmt.Errorf("%s must be a positive integer, got %d", p.name, p.v)
		}
	}
	if c.HeadDim == 0 && c.HiddenSize%c.NumAttentionHeads != 0 {
		return fmt.Errorf("hidden_size %d is not a multiple of num_attention_heads %d", c.HiddenSize, c.NumAttentionHeads)
	}
	if c.HeadDimension()%2 != 0 {
		return fmt.Errorf("head dimension %d must be even for rotary embeddings", c.HeadDimension())
	}
	if c.NumAttentionHeads%c.NumKeyValueHeads != 0 {
		return fmt.Errorf("num_attention_heads %d is not a multiple of num_key_value_heads %d", c.NumAttentionHeads, c.NumKeyValueHeads)
	}
	if c.RopeTheta <= 0 {
		return fmt.Errorf("rope_theta must be positive, got %g", c.RopeTheta)
	}
	if c.RMSNormEps <= 0 {
		return fmt.Errorf("rms_norm_eps must be positive, got %g", c.RMSNormEps)
	}
	if c.HiddenAct != "silu" {
		return fmt.Errorf("hidden_act %q is not supported (only silu)", c.HiddenAct)
	}
	if c.UseSlidingWindow {
		return errors.New("use_sliding_window true is not supported: sliding-window attention is not implemented")
	}
	if len(c.RopeScaling) > 0 && string(c.RopeScaling) != "null" {
		return fmt.Errorf("rope_scaling %s is not supported: only plain rotary embeddings are implemented", c.RopeScaling)
	}
	if c.AttentionDropout != 0 {
		return fmt.Errorf("attention_dropout %g is not supported (must be 0)", c.AttentionDropout)
	}
	switch c.TorchDtype {
	case "", "bfloat16", "float16", "float32":
	default:
		return fmt.Errorf("torch_dtype %q is not one of bfloat16, float16, float32", c.TorchDtype)
	}
	return nil
}

// HeadDimension is the per-head width.
func (c Config) HeadDimension() int {
	if c.HeadDim > 0 {
		return c.HeadDim
	}
	return c.HiddenSize / c.NumAttentionHeads
}

// JSON renders the config as config.json: the keys it was read with, with
// this struct's values over them.
func (c Config) JSON() ([]byte, error) {
	own, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	out := map[string]json.RawMessage{}
	for k, v := range c.raw {
		out[k] = v
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(own, &fields); err != nil {
		return nil, err
	}
	for k, v := range fields {
		out[k] = v
	}
	return json.MarshalIndent(out, "", "  ")
}

// SetExtra records a key that config.json carries beyond Qwen2's fields
// (e.g. a note on a reduced vocabulary); JSON writes it, and a loaded
// config keeps it.
func (c *Config) SetExtra(key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if c.raw == nil {
		c.raw = map[string]json.RawMessage{}
	}
	c.raw[key] = b
	return nil
}
