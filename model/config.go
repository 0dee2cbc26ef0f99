package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
)

// Architectures this package implements, by config.json's model_type. Both
// are the same pre-norm block (RMSNorm, rotate-half RoPE, grouped-query
// attention, SwiGLU); they differ in which projections carry a bias and in
// the rotary scalings their configs use.
const (
	ArchQwen2 = "qwen2" // Qwen2ForCausalLM: biases on q/k/v, none elsewhere
	ArchLlama = "llama" // LlamaForCausalLM: attention_bias (q/k/v/o) and mlp_bias, both usually false
)

// Config is a Qwen2 or Llama config.json, the fields this implementation
// reads. Values that would change the computation in ways it does not
// implement (sliding-window attention, a rotary scaling other than
// llama3's, another architecture) are rejected by Validate rather than
// ignored.
type Config struct {
	ModelType             string          `json:"model_type"`               // "qwen2" or "llama"
	Architectures         []string        `json:"architectures"`            // e.g. ["Qwen2ForCausalLM"]
	HiddenSize            int             `json:"hidden_size"`              // model width d
	IntermediateSize      int             `json:"intermediate_size"`        // SwiGLU inner width
	NumHiddenLayers       int             `json:"num_hidden_layers"`        // decoder layers
	NumAttentionHeads     int             `json:"num_attention_heads"`      // query heads
	NumKeyValueHeads      int             `json:"num_key_value_heads"`      // key/value heads (GQA)
	HeadDim               int             `json:"head_dim,omitempty"`       // optional; d / heads when absent
	RopeTheta             float64         `json:"rope_theta"`               // rotary base
	RMSNormEps            float64         `json:"rms_norm_eps"`             // RMSNorm epsilon
	VocabSize             int             `json:"vocab_size"`               // rows of the embedding
	MaxPositionEmbeddings int             `json:"max_position_embeddings"`  // longest position the model was trained for
	TieWordEmbeddings     bool            `json:"tie_word_embeddings"`      // lm_head reuses embed_tokens
	TorchDtype            string          `json:"torch_dtype"`              // dtype of the stored weights
	BOSTokenID            *int            `json:"bos_token_id,omitempty"`   // may be null
	EOSTokenID            TokenIDs        `json:"eos_token_id,omitempty"`   // end of text: one id or several (Llama 3)
	HiddenAct             string          `json:"hidden_act"`               // must be "silu"
	AttentionBias         bool            `json:"attention_bias,omitempty"` // llama: biases on q/k/v/o
	MLPBias               bool            `json:"mlp_bias,omitempty"`       // llama: biases on gate/up/down
	UseSlidingWindow      bool            `json:"use_sliding_window"`       // must be false
	SlidingWindow         *int            `json:"sliding_window,omitempty"`
	MaxWindowLayers       *int            `json:"max_window_layers,omitempty"`
	RopeScaling           json.RawMessage `json:"rope_scaling,omitempty"` // null, or llama3's scaling
	AttentionDropout      float64         `json:"attention_dropout"`      // must be 0
	InitializerRange      float64         `json:"initializer_range,omitempty"`
	UseCache              bool            `json:"use_cache,omitempty"`
	TransformersVersion   string          `json:"transformers_version,omitempty"`

	// Rope is the rotary scaling read from rope_scaling or rope_parameters;
	// its Type is "" for plain rotary embeddings.
	Rope RopeScaling `json:"-"`

	// raw is config.json as read, so an export keeps every key the source
	// had (transformers' bookkeeping included).
	raw map[string]json.RawMessage
}

// RopeScaling is Llama 3.1's rotary scaling (rope_type "llama3"): the
// inverse frequencies of long wavelengths are divided by Factor, short ones
// kept, and those in between interpolated (transformers'
// _compute_llama3_parameters).
type RopeScaling struct {
	Type                          string  // "llama3", or "" for none
	Factor                        float64 // divisor of the low frequencies
	LowFreqFactor                 float64 // wavelengths above original/low are scaled
	HighFreqFactor                float64 // wavelengths below original/high are kept
	OriginalMaxPositionEmbeddings int     // the context length before scaling
}

// TokenIDs is a token-id field that config.json gives as an int, a list of
// ints (Llama 3's eos_token_id) or null.
type TokenIDs []int

// UnmarshalJSON accepts an int, a list of ints or null.
func (t *TokenIDs) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		*t = nil
		return nil
	}
	var one int
	if err := json.Unmarshal(b, &one); err == nil {
		*t = TokenIDs{one}
		return nil
	}
	var many []int
	if err := json.Unmarshal(b, &many); err != nil {
		return &tokenIDsError{string(b)}
	}
	*t = many
	return nil
}

// tokenIDsError is a TokenIDs value of the wrong kind.
type tokenIDsError struct{ raw string }

func (e *tokenIDsError) Error() string {
	return fmt.Sprintf("%s is neither a token id nor a list of them", e.raw)
}

// MarshalJSON writes one id as an int, several as a list, none as null.
func (t TokenIDs) MarshalJSON() ([]byte, error) {
	switch len(t) {
	case 0:
		return []byte("null"), nil
	case 1:
		return json.Marshal(t[0])
	}
	return json.Marshal([]int(t))
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
	// ignored; an absent tie_word_embeddings is false, the default of both
	// Qwen2Config and LlamaConfig.
	var c Config
	if err := json.Unmarshal(data, &c); err != nil {
		var te *json.UnmarshalTypeError
		var tie *tokenIDsError
		if errors.As(err, &tie) {
			return Config{}, fmt.Errorf("eos_token_id %w", err)
		}
		if errors.As(err, &te) && te.Field != "" {
			return Config{}, fmt.Errorf("%s has the wrong type: %s", te.Field, te.Value)
		}
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
	if err := c.readRopeScaling(); err != nil {
		return Config{}, err
	}
	return c, c.Validate()
}

// ropeParameters is transformers 5's rope_parameters object, which replaces
// rope_theta and rope_scaling in the config.json it saves; the llama3
// fields are also rope_scaling's.
type ropeParameters struct {
	RopeType                      string   `json:"rope_type"`
	Type                          string   `json:"type,omitempty"` // transformers 4.3x's name for rope_type
	RopeTheta                     *float64 `json:"rope_theta,omitempty"`
	Factor                        *float64 `json:"factor,omitempty"`
	LowFreqFactor                 *float64 `json:"low_freq_factor,omitempty"`
	HighFreqFactor                *float64 `json:"high_freq_factor,omitempty"`
	OriginalMaxPositionEmbeddings *int     `json:"original_max_position_embeddings,omitempty"`
}

func decodeRope(key string, raw json.RawMessage) (ropeParameters, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var rp ropeParameters
	if err := dec.Decode(&rp); err != nil {
		return rp, fmt.Errorf("%s %s: only rope_type \"default\" or \"llama3\" with their fields are supported: %v", key, raw, err)
	}
	if rp.RopeType == "" {
		rp.RopeType = rp.Type
	}
	if rp.Type != "" && rp.Type != rp.RopeType {
		return rp, fmt.Errorf("%s: type %q and rope_type %q disagree", key, rp.Type, rp.RopeType)
	}
	return rp, nil
}

// readV5Names reads the keys under which transformers ≥ 5 saves what 4.x
// called torch_dtype and rope_theta (dtype, rope_parameters) and its
// per-layer attention kinds (layer_types). A key under both names must
// agree; anything beyond plain full attention is rejected, as sliding
// windows are.
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
		rp, err := decodeRope("rope_parameters", raw)
		if err != nil {
			return err
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

// readRopeScaling fills c.Rope from rope_scaling (transformers 4) or
// rope_parameters (5); where both are given they must agree.
func (c *Config) readRopeScaling() error {
	var found []RopeScaling
	for _, key := range []string{"rope_scaling", "rope_parameters"} {
		raw, ok := c.raw[key]
		if !ok || string(raw) == "null" {
			continue
		}
		rp, err := decodeRope(key, raw)
		if err != nil {
			return err
		}
		r, err := rp.scaling(key, raw)
		if err != nil {
			return err
		}
		found = append(found, r)
	}
	if len(found) == 2 && found[0] != found[1] {
		return fmt.Errorf("rope_scaling and rope_parameters disagree")
	}
	if len(found) > 0 {
		c.Rope = found[0]
	}
	return nil
}

// scaling checks a rope object's type and fields.
func (rp ropeParameters) scaling(key string, raw json.RawMessage) (RopeScaling, error) {
	switch rp.RopeType {
	case "", "default":
		if rp.Factor != nil || rp.LowFreqFactor != nil || rp.HighFreqFactor != nil || rp.OriginalMaxPositionEmbeddings != nil {
			return RopeScaling{}, fmt.Errorf("%s %s: rope_type %q takes no scaling fields", key, raw, rp.RopeType)
		}
		return RopeScaling{}, nil
	case "llama3":
		if rp.Factor == nil || rp.LowFreqFactor == nil || rp.HighFreqFactor == nil || rp.OriginalMaxPositionEmbeddings == nil {
			return RopeScaling{}, fmt.Errorf("%s %s: rope_type llama3 needs factor, low_freq_factor, high_freq_factor and original_max_position_embeddings", key, raw)
		}
		return RopeScaling{Type: "llama3", Factor: *rp.Factor, LowFreqFactor: *rp.LowFreqFactor,
			HighFreqFactor: *rp.HighFreqFactor, OriginalMaxPositionEmbeddings: *rp.OriginalMaxPositionEmbeddings}, nil
	}
	return RopeScaling{}, fmt.Errorf("%s rope_type %q is not supported: only plain rotary embeddings and llama3's scaling are implemented", key, rp.RopeType)
}

// Validate checks every field this implementation depends on, naming the
// field at fault.
func (c Config) Validate() error {
	if c.ModelType != ArchQwen2 && c.ModelType != ArchLlama {
		return fmt.Errorf("model_type %q is not supported (only qwen2 and llama)", c.ModelType)
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
	if err := c.checkBounds(); err != nil {
		return err
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
	if err := c.Rope.validate(); err != nil {
		return err
	}
	if c.AttentionDropout != 0 {
		return fmt.Errorf("attention_dropout %g is not supported (must be 0)", c.AttentionDropout)
	}
	if c.ModelType == ArchQwen2 && (c.AttentionBias || c.MLPBias) {
		return errors.New("attention_bias and mlp_bias are Llama settings; a qwen2 model always has q/k/v biases and no others")
	}
	if err := c.checkLlamaOnly(); err != nil {
		return err
	}
	for _, id := range c.EOSTokenID {
		if id < 0 || id >= c.VocabSize {
			return fmt.Errorf("eos_token_id %d is outside the vocabulary (vocab_size %d)", id, c.VocabSize)
		}
	}
	if c.BOSTokenID != nil && (*c.BOSTokenID < 0 || *c.BOSTokenID >= c.VocabSize) {
		return fmt.Errorf("bos_token_id %d is outside the vocabulary (vocab_size %d)", *c.BOSTokenID, c.VocabSize)
	}
	switch c.TorchDtype {
	case "", "bfloat16", "float16", "float32":
	default:
		return fmt.Errorf("torch_dtype %q is not one of bfloat16, float16, float32", c.TorchDtype)
	}
	return nil
}

// Upper bounds on config.json's sizes, each several times the largest
// open model's. They are checked before anything is built from the config:
// a typo or a hostile file (num_hidden_layers 1000000000) would otherwise
// have the loader list a billion layers' tensors before it looked at one.
const (
	MaxLayers       = 1024    // num_hidden_layers
	MaxHidden       = 1 << 16 // hidden_size
	MaxIntermediate = 1 << 20 // intermediate_size
	MaxHeads        = 1024    // num_attention_heads, num_key_value_heads
	MaxHeadDim      = 4096    // head_dim
	MaxVocab        = 1 << 22 // vocab_size
	MaxPositions    = 1 << 26 // max_position_embeddings, rope_scaling's original_max_position_embeddings
)

// checkBounds holds the sizes to the Max* bounds, and head_dim, when
// config.json gives it, to a positive value (0 or null would otherwise
// read as absent, and d / heads be used instead).
func (c Config) checkBounds() error {
	for _, b := range []struct {
		name   string
		v, max int
	}{
		{"num_hidden_layers", c.NumHiddenLayers, MaxLayers}, {"hidden_size", c.HiddenSize, MaxHidden},
		{"intermediate_size", c.IntermediateSize, MaxIntermediate}, {"num_attention_heads", c.NumAttentionHeads, MaxHeads},
		{"num_key_value_heads", c.NumKeyValueHeads, MaxHeads}, {"head_dim", c.HeadDim, MaxHeadDim},
		{"vocab_size", c.VocabSize, MaxVocab}, {"max_position_embeddings", c.MaxPositionEmbeddings, MaxPositions},
		{"rope_scaling original_max_position_embeddings", c.Rope.OriginalMaxPositionEmbeddings, MaxPositions},
	} {
		if b.v > b.max {
			return fmt.Errorf("%s %d is more than this implementation accepts (at most %d)", b.name, b.v, b.max)
		}
	}
	if raw, given := c.raw["head_dim"]; c.HeadDim < 0 || given && string(raw) != "null" && c.HeadDim == 0 {
		return fmt.Errorf("head_dim must be a positive integer, got %d", c.HeadDim)
	}
	return nil
}

// checkLlamaOnly rejects LlamaConfig settings that change the computation
// in ways this package does not implement.
func (c Config) checkLlamaOnly() error {
	if raw, ok := c.raw["pretraining_tp"]; ok && string(raw) != "null" && string(raw) != "1" {
		return fmt.Errorf("pretraining_tp %s is not supported (must be 1)", raw)
	}
	if raw, ok := c.raw["partial_rotary_factor"]; ok && string(raw) != "null" {
		var f float64
		if json.Unmarshal(raw, &f) != nil || f != 1 {
			return fmt.Errorf("partial_rotary_factor %s is not supported (must be 1)", raw)
		}
	}
	return nil
}

func (r RopeScaling) validate() error {
	if r.Type == "" {
		return nil
	}
	switch {
	case !(r.Factor > 0) || math.IsInf(r.Factor, 0):
		return fmt.Errorf("rope_scaling factor must be positive, got %g", r.Factor)
	case !(r.LowFreqFactor > 0) || !(r.HighFreqFactor > r.LowFreqFactor) || math.IsInf(r.HighFreqFactor, 0):
		return fmt.Errorf("rope_scaling needs 0 < low_freq_factor < high_freq_factor, got %g and %g", r.LowFreqFactor, r.HighFreqFactor)
	case r.OriginalMaxPositionEmbeddings <= 0:
		return fmt.Errorf("rope_scaling original_max_position_embeddings must be positive, got %d", r.OriginalMaxPositionEmbeddings)
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

// Biases says which projections carry a bias: q/k/v, o, and the MLP's.
func (c Config) Biases() (qkv, o, mlp bool) {
	if c.ModelType == ArchQwen2 {
		return true, false, false
	}
	return c.AttentionBias, c.AttentionBias, c.MLPBias
}

// Architecture is the transformers class the checkpoint is saved as.
func (c Config) Architecture() string {
	if len(c.Architectures) > 0 {
		return c.Architectures[0]
	}
	if c.ModelType == ArchLlama {
		return "LlamaForCausalLM"
	}
	return "Qwen2ForCausalLM"
}

// qwen2Only are Qwen2Config's keys that a Llama config.json does not carry.
var qwen2Only = map[string]bool{"use_sliding_window": true, "sliding_window": true, "max_window_layers": true}

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
		if _, had := c.raw[k]; !had && c.ModelType == ArchLlama && qwen2Only[k] {
			continue // LlamaConfig has no sliding-window keys
		}
		out[k] = v
	}
	if _, ok := out["rope_parameters"]; !ok && c.Rope.Type != "" && len(c.RopeScaling) == 0 {
		out["rope_scaling"], err = json.Marshal(map[string]any{
			"rope_type": c.Rope.Type, "factor": c.Rope.Factor, "low_freq_factor": c.Rope.LowFreqFactor,
			"high_freq_factor": c.Rope.HighFreqFactor, "original_max_position_embeddings": c.Rope.OriginalMaxPositionEmbeddings,
		})
		if err != nil {
			return nil, err
		}
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
