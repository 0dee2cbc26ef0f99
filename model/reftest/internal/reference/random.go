package reference

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"path/filepath"

	"github.com/ragen-go/ragen/model/safetensors"
)

// TinyConfig is a small Qwen2 for tests: vocabulary 64, width 32, 2 layers,
// 4 query heads and 2 key/value heads of width 8 (GQA with 2 query heads per
// KV head), SwiGLU width 48, and Qwen2.5's rope_theta and eps.
func TinyConfig() Config {
	bos, eos := 0, 1
	return Config{
		ModelType:             "qwen2",
		Architectures:         []string{"Qwen2ForCausalLM"},
		HiddenSize:            32,
		IntermediateSize:      48,
		NumHiddenLayers:       2,
		NumAttentionHeads:     4,
		NumKeyValueHeads:      2,
		RopeTheta:             1e6,
		RMSNormEps:            1e-6,
		VocabSize:             64,
		MaxPositionEmbeddings: 128,
		TorchDtype:            "float32",
		BOSTokenID:            &bos,
		EOSTokenID:            eos,
		HiddenAct:             "silu",
	}
}

// Scales of the random weights. They are larger than HF's initialisation
// (normal·0.02) on purpose: with every matrix ~ N(0, 1/fan_in), attention
// scores and logits are of order one, so a wrong mask, rotation or head
// mapping in the model under test moves the logits far beyond the
// tolerance instead of hiding in near-uniform attention.
const (
	biasScale = 0.2 // q/k/v biases ~ N(0, 0.2²)
	normScale = 0.2 // RMSNorm weights ~ 1 + N(0, 0.2²)
)

// RandomCheckpoint writes a deterministic random Qwen2ForCausalLM checkpoint
// for cfg into dir, in HF layout: config.json (cfg with model_type qwen2,
// architectures [Qwen2ForCausalLM], torch_dtype float32 and
// tie_word_embeddings = tied), generation_config.json, and F32 weights
// under their HF names (without lm_head.weight when tied), in
// model.safetensors or, when shardBytes > 0 and they exceed it,
// model-0000i-of-0000N.safetensors shards with model.safetensors.index.json.
//
// Each tensor is drawn from its own stream, seeded by seed and its name, so
// the tied and untied checkpoints of one seed share every common tensor.
// The values do not depend on the Go version.
func RandomCheckpoint(dir string, cfg Config, seed uint64, tied bool, shardBytes int64) error {
	switch cfg.ModelType {
	case "", "qwen2":
		cfg.ModelType, cfg.Architectures = "qwen2", []string{"Qwen2ForCausalLM"}
	case "llama":
		cfg.Architectures = []string{"LlamaForCausalLM"}
	}
	cfg.TorchDtype = "float32"
	cfg.TieWordEmbeddings = tied
	if cfg.HiddenAct == "" {
		cfg.HiddenAct = "silu"
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("random checkpoint %s: %w", dir, err)
	}
	if cfg.MaxPositionEmbeddings <= 0 { // unused here, required by transformers and package model
		return fmt.Errorf("random checkpoint %s: max_position_embeddings must be positive, got %d", dir, cfg.MaxPositionEmbeddings)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("random checkpoint: %w", err)
	}
	if err := writeJSON(filepath.Join(dir, "config.json"), cfg); err != nil {
		return err
	}
	gen := map[string]any{"_from_model_config": true}
	if cfg.BOSTokenID != nil {
		gen["bos_token_id"] = *cfg.BOSTokenID
	}
	if cfg.EOSTokenID != nil {
		gen["eos_token_id"] = cfg.EOSTokenID
	}
	if err := writeJSON(filepath.Join(dir, "generation_config.json"), gen); err != nil {
		return err
	}
	return safetensors.WriteSharded(dir, randomTensors(cfg, seed), shardBytes, map[string]string{"format": "pt"})
}

// randomTensors lists the weights in state-dict (module) order, each
// generated only when the writer asks for it.
func randomTensors(cfg Config, seed uint64) []safetensors.Tensor {
	d, hd, inter := int64(cfg.HiddenSize), int64(cfg.HeadDimension()), int64(cfg.IntermediateSize)
	qd, kvd := int64(cfg.NumAttentionHeads)*hd, int64(cfg.NumKeyValueHeads)*hd
	var ts []safetensors.Tensor
	add := func(name string, shape []int64, draw func(r *rng) float64) {
		n := int64(1)
		for _, s := range shape {
			n *= s
		}
		ts = append(ts, safetensors.Tensor{Name: name, DType: safetensors.F32, Shape: shape,
			Source: func() ([]byte, error) {
				r := newRNG(seed, name)
				v := make([]float32, n)
				for i := range v {
					v[i] = float32(draw(r))
				}
				return safetensors.EncodeFloat32(safetensors.F32, v)
			}})
	}
	matrix := func(name string, out, in int64) {
		std := 1 / math.Sqrt(float64(in))
		add(name, []int64{out, in}, func(r *rng) float64 { return std * r.normal() })
	}
	bias := func(name string, n int64, has bool) {
		if has {
			add(name, []int64{n}, func(r *rng) float64 { return biasScale * r.normal() })
		}
	}
	qkvBias, oBias, mlpBias := cfg.biases()
	norm := func(name string) {
		add(name, []int64{d}, func(r *rng) float64 { return 1 + normScale*r.normal() })
	}
	matrix("model.embed_tokens.weight", int64(cfg.VocabSize), d)
	for i := range cfg.NumHiddenLayers {
		p := fmt.Sprintf("model.layers.%d.", i)
		matrix(p+"self_attn.q_proj.weight", qd, d)
		bias(p+"self_attn.q_proj.bias", qd, qkvBias)
		matrix(p+"self_attn.k_proj.weight", kvd, d)
		bias(p+"self_attn.k_proj.bias", kvd, qkvBias)
		matrix(p+"self_attn.v_proj.weight", kvd, d)
		bias(p+"self_attn.v_proj.bias", kvd, qkvBias)
		matrix(p+"self_attn.o_proj.weight", d, qd)
		bias(p+"self_attn.o_proj.bias", d, oBias)
		matrix(p+"mlp.gate_proj.weight", inter, d)
		bias(p+"mlp.gate_proj.bias", inter, mlpBias)
		matrix(p+"mlp.up_proj.weight", inter, d)
		bias(p+"mlp.up_proj.bias", inter, mlpBias)
		matrix(p+"mlp.down_proj.weight", d, inter)
		bias(p+"mlp.down_proj.bias", d, mlpBias)
		norm(p + "input_layernorm.weight")
		norm(p + "post_attention_layernorm.weight")
	}
	norm("model.norm.weight")
	if !cfg.TieWordEmbeddings {
		matrix("lm_head.weight", int64(cfg.VocabSize), d)
	}
	return ts
}

// writeJSON writes v as transformers writes its JSON files: sorted keys,
// two-space indent, a final newline.
func writeJSON(path string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	var generic map[string]any // re-decoded so that the keys come out sorted
	if err := json.Unmarshal(raw, &generic); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	out, err := json.MarshalIndent(generic, "", "  ")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.WriteFile(path, append(out, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// rng is splitmix64 with Box–Muller normals: a fixed algorithm, so that
// checkpoints are reproducible across Go releases and easy to re-implement.
type rng struct{ state uint64 }

// newRNG seeds a stream from seed and a tensor name.
func newRNG(seed uint64, name string) *rng {
	h := fnv.New64a()
	h.Write([]byte(name))
	r := &rng{state: seed ^ h.Sum64()}
	r.next() // decorrelate nearby seeds
	return r
}

func (r *rng) next() uint64 {
	r.state += 0x9E3779B97F4A7C15
	z := r.state
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	return z ^ z>>31
}

// uniform is in (0, 1), never 0, so that its logarithm is finite.
func (r *rng) uniform() float64 { return (float64(r.next()>>11) + 0.5) / (1 << 53) }

// normal is a standard normal draw (one Box–Muller output per two uniforms).
func (r *rng) normal() float64 {
	u1, u2 := r.uniform(), r.uniform()
	return math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
}
