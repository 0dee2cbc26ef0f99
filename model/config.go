package model

import (
	"bytes"
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
	if err := c.readV5Names(); err != nil {
		return Config{}, err
	}
	return c, c.Validate()
}

// ropeParameters is transformers 5's rope_parameters object, which replaces
// rope_theta and rope_scaling in the config.json it saves.
type ropeParameters struct {
	RopeType  string   `json:"rope_type"`
	RopeTheta *float64 `json:"rope_theta"`
}

// readV5Names reads the keys under which transformers ≥ 5 saves what 4.x
// called torch_dtype, rope_theta and rope_scaling (dtype, rope_parameters)
// and its per-layer attention kinds (layer_types). A key under both names
// must agree; anything beyond plain full attention with default rotary
// embeddings is rejected, as rope_scaling and sliding windows are.
func (c *Config) readV5Names() error {
	if raw, ok := c.raw["dtype"]; ok && string(raw) != "null" {
		var d string
		if err := json.Unmarshal(raw, &d); err != nil {
			return fmt.Errorf("dtype %s is not a string", raw)
		}
		if c.TorchDtype != "" && c.TorchDtype != d {
			return fmt.Errorf("dtype %q and torch_dtype %q disagree", d, c.TorchDtype)
		}
		c.TorchDtype = d
	}
	if raw, ok := c.raw["rope_parameters"]; ok && string(raw) != "null" {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		var rp ropeParameters
		if err := dec.Decode(&rp); err != nil {
			return fmt.Errorf("rope_parameters %s: only rope_type \"default\" and rope_theta are supported: %v", raw, err)
		}
		if rp.RopeType != "" && rp.RopeType != "default" {
			return fmt.Errorf("rope_parameters rope_type %q is not supported: only plain rotary embeddings are implemented", rp.RopeType)
		}
		if rp.RopeTheta != nil {
			if _, both := c.raw["rope_theta"]; both && c.RopeTheta != *rp.RopeTheta {
				return fmt.Errorf("rope_parameters rope_theta %g and rope_theta %g disagree", *rp.RopeTheta, c.RopeTheta)
			}
			c.RopeTheta = *rp.RopeTheta
		}
	}
	if raw, ok := c.raw["layer_types"]; ok && string(raw) != "null" {
		var kinds []string
		if err := json.Unmarshal(raw, &kinds); err != nil {
			return fmt.Errorf("layer_types %s is not a list of strings", raw)
		}
		if len(kinds) != c.NumHiddenLayers {
			return fmt.Errorf("layer_types has %d entries for num_hidden_layers %d", len(kinds), c.NumHiddenLayers)
		}
		for i, k := range kinds {
			if k != "full_attention" {
				return fmt.Errorf("layer_types[%d] %q is not supported: only full_attention is implemented", i, k)
			}
		}
	}
	return nil
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
	// transformers 5's names for the same values follow the struct's, so an
	// export whose dtype changed does not carry the source's under "dtype".
	if _, ok := out["dtype"]; ok {
		out["dtype"] = fields["torch_dtype"]
	}
	if raw, ok := out["rope_parameters"]; ok && string(raw) != "null" {
		var rp map[string]any
		if err := json.Unmarshal(raw, &rp); err != nil {
			return nil, fmt.Errorf("rope_parameters: %w", err)
		}
		rp["rope_theta"] = c.RopeTheta
		if out["rope_parameters"], err = json.Marshal(rp); err != nil {
			return nil, err
		}
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
