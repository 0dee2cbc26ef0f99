package reference

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Config is the part of a HuggingFace Qwen2 or Llama config.json that the
// forward pass reads, under transformers' names. The reference parses config.json
// itself rather than importing package model, so that the model's own tests
// can import it without an import cycle, and so that config reading is
// checked independently too. A model.Config converts through JSON:
// json.Marshal it and pass the bytes to ParseConfig.
type Config struct {
	ModelType             string       `json:"model_type"`               // "qwen2" or "llama"
	Architectures         []string     `json:"architectures"`            // ["Qwen2ForCausalLM"] or ["LlamaForCausalLM"]
	HiddenSize            int          `json:"hidden_size"`              // model width d
	IntermediateSize      int          `json:"intermediate_size"`        // SwiGLU inner width I
	NumHiddenLayers       int          `json:"num_hidden_layers"`        // decoder layers
	NumAttentionHeads     int          `json:"num_attention_heads"`      // query heads nH
	NumKeyValueHeads      int          `json:"num_key_value_heads"`      // key/value heads nKV
	HeadDim               int          `json:"head_dim,omitempty"`       // per-head width; d/nH when 0
	RopeTheta             float64      `json:"rope_theta"`               // rotary base
	RMSNormEps            float64      `json:"rms_norm_eps"`             // RMSNorm epsilon
	VocabSize             int          `json:"vocab_size"`               // rows of the embedding V
	MaxPositionEmbeddings int          `json:"max_position_embeddings"`  // longest trained position
	TieWordEmbeddings     bool         `json:"tie_word_embeddings"`      // lm_head reuses embed_tokens
	TorchDtype            string       `json:"torch_dtype"`              // dtype of the stored weights
	BOSTokenID            *int         `json:"bos_token_id,omitempty"`   // may be absent
	EOSTokenID            any          `json:"eos_token_id,omitempty"`   // an id, a list of ids, or absent
	HiddenAct             string       `json:"hidden_act"`               // "silu"
	UseSlidingWindow      bool         `json:"use_sliding_window"`       // must be false
	RopeScaling           *RopeScaling `json:"rope_scaling,omitempty"`   // null or llama3's
	AttentionBias         bool         `json:"attention_bias,omitempty"` // llama: q/k/v/o biases
	MLPBias               bool         `json:"mlp_bias,omitempty"`       // llama: MLP biases
	AttentionDropout      float64      `json:"attention_dropout"`        // must be 0
}

// RopeScaling is rope_scaling as Llama 3.1 and 3.2 configure it.
type RopeScaling struct {
	RopeType                      string  `json:"rope_type"` // "llama3"
	Factor                        float64 `json:"factor"`
	LowFreqFactor                 float64 `json:"low_freq_factor"`
	HighFreqFactor                float64 `json:"high_freq_factor"`
	OriginalMaxPositionEmbeddings int     `json:"original_max_position_embeddings"`
}

// LoadConfig reads and validates dir/config.json (or the file at path).
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

// ParseConfig parses and validates config.json contents; keys it does not
// know are ignored, an absent hidden_act is silu (Qwen2Config's default).
func ParseConfig(data []byte) (Config, error) {
	var c Config
	if err := json.Unmarshal(data, &c); err != nil {
		return Config{}, fmt.Errorf("not a valid config.json: %w", err)
	}
	if c.HiddenAct == "" {
		c.HiddenAct = "silu"
	}
	return c, c.Validate()
}

// Validate rejects configurations the reference does not compute.
func (c Config) Validate() error {
	if c.ModelType != "qwen2" && c.ModelType != "llama" {
		return fmt.Errorf("model_type %q is neither qwen2 nor llama", c.ModelType)
	}
	for _, f := range []struct {
		name string
		v    int
	}{
		{"hidden_size", c.HiddenSize}, {"intermediate_size", c.IntermediateSize},
		{"num_hidden_layers", c.NumHiddenLayers}, {"num_attention_heads", c.NumAttentionHeads},
		{"num_key_value_heads", c.NumKeyValueHeads}, {"vocab_size", c.VocabSize},
	} {
		if f.v <= 0 {
			return fmt.Errorf("%s must be positive, got %d", f.name, f.v)
		}
	}
	switch {
	case c.HeadDim == 0 && c.HiddenSize%c.NumAttentionHeads != 0:
		return fmt.Errorf("hidden_size %d is not a multiple of num_attention_heads %d", c.HiddenSize, c.NumAttentionHeads)
	case c.HeadDimension()%2 != 0:
		return fmt.Errorf("head dimension %d is odd: rotary embeddings need pairs", c.HeadDimension())
	case c.NumAttentionHeads%c.NumKeyValueHeads != 0:
		return fmt.Errorf("num_attention_heads %d is not a multiple of num_key_value_heads %d", c.NumAttentionHeads, c.NumKeyValueHeads)
	case c.RopeTheta <= 0:
		return fmt.Errorf("rope_theta must be positive, got %g", c.RopeTheta)
	case c.RMSNormEps <= 0:
		return fmt.Errorf("rms_norm_eps must be positive, got %g", c.RMSNormEps)
	case c.HiddenAct != "silu":
		return fmt.Errorf("hidden_act %q is not silu", c.HiddenAct)
	case c.UseSlidingWindow:
		return errors.New("use_sliding_window is true: sliding-window attention is not implemented")
	case c.RopeScaling != nil && c.RopeScaling.RopeType != "llama3":
		return fmt.Errorf("rope_scaling type %q is not implemented", c.RopeScaling.RopeType)
	case c.ModelType == "qwen2" && (c.AttentionBias || c.MLPBias):
		return errors.New("attention_bias and mlp_bias are llama settings")
	case c.AttentionDropout != 0:
		return fmt.Errorf("attention_dropout %g is not 0", c.AttentionDropout)
	}
	return nil
}

// HeadDimension is the per-head width: head_dim, or d / nH when absent.
func (c Config) HeadDimension() int {
	if c.HeadDim > 0 {
		return c.HeadDim
	}
	return c.HiddenSize / c.NumAttentionHeads
}

// biases says which projections of the architecture carry a bias.
func (c Config) biases() (qkv, o, mlp bool) {
	if c.ModelType == "qwen2" {
		return true, false, false
	}
	return c.AttentionBias, c.AttentionBias, c.MLPBias
}
