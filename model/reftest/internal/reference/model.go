// Package reference is a slow, plain-Go float32 Qwen2 and Llama forward
// pass, written from the architecture (HF modeling_qwen2.py and
// modeling_llama.py as the numerical specification) and independent of any torch code. Tests use it to check
// the gotch model: two independent implementations must agree.
//
// Every product is accumulated in float64 and stored as float32. Nothing
// here is meant to be fast. It imports neither gotch nor package model.
package reference

import (
	"fmt"
	"slices"

	"github.com/ragen-go/ragen/model/safetensors"
)

// Model is a Qwen2ForCausalLM or LlamaForCausalLM with its weights as
// float32 slices.
type Model struct {
	cfg     Config
	embed   linear // [V, d]: row t is token t's embedding
	layers  []layer
	norm    []float32 // [d]
	lmHead  linear    // [V, d]; shares embed's weights when tied
	invFreq []float64 // rotary inverse frequencies [hd/2], scaled as the config says
}

// layer is a Qwen2DecoderLayer or LlamaDecoderLayer.
type layer struct {
	inputNorm, postNorm []float32 // [d]
	q, k, v, o          linear    // q [nH·hd, d], k/v [nKV·hd, d], o [d, nH·hd]; biases as the architecture says
	gate, up, down      linear    // gate/up [I, d], down [d, I]
}

// Config is the configuration the model was loaded with.
func (m *Model) Config() Config { return m.cfg }

// Load binds the tensors of ck by their HuggingFace names, strictly: a
// missing tensor, an extra one or a wrong shape is an error naming it. With
// tie_word_embeddings the lm_head reuses model.embed_tokens.weight and
// lm_head.weight must be absent. Weights may be stored as BF16, F16 or F32.
func Load(cfg Config, ck *safetensors.Checkpoint) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("reference model: %w", err)
	}
	b := &binder{ck: ck, used: map[string]bool{}}
	d, hd, v, inter := cfg.HiddenSize, cfg.HeadDimension(), cfg.VocabSize, cfg.IntermediateSize
	qd, kvd := cfg.NumAttentionHeads*hd, cfg.NumKeyValueHeads*hd
	m := &Model{cfg: cfg, invFreq: inverseFrequencies(cfg)}
	qkvBias, oBias, mlpBias := cfg.biases()
	bias := func(name string, has bool) string {
		if has {
			return name
		}
		return ""
	}
	m.embed = b.linear("model.embed_tokens.weight", "", v, d)
	for i := range cfg.NumHiddenLayers {
		p := fmt.Sprintf("model.layers.%d.", i)
		proj := func(name string, has bool, out, in int) linear {
			return b.linear(p+name+".weight", bias(p+name+".bias", has), out, in)
		}
		m.layers = append(m.layers, layer{
			inputNorm: b.vector(p+"input_layernorm.weight", d),
			q:         proj("self_attn.q_proj", qkvBias, qd, d),
			k:         proj("self_attn.k_proj", qkvBias, kvd, d),
			v:         proj("self_attn.v_proj", qkvBias, kvd, d),
			o:         proj("self_attn.o_proj", oBias, d, qd),
			postNorm:  b.vector(p+"post_attention_layernorm.weight", d),
			gate:      proj("mlp.gate_proj", mlpBias, inter, d),
			up:        proj("mlp.up_proj", mlpBias, inter, d),
			down:      proj("mlp.down_proj", mlpBias, d, inter),
		})
	}
	m.norm = b.vector("model.norm.weight", d)
	if cfg.TieWordEmbeddings {
		m.lmHead = m.embed
	} else {
		m.lmHead = b.linear("lm_head.weight", "", v, d)
	}
	if b.err == nil {
		for _, name := range ck.Names() {
			if !b.used[name] {
				b.err = fmt.Errorf("unexpected tensor %q", name)
				if name == "lm_head.weight" {
					b.err = fmt.Errorf("unexpected tensor %q: tie_word_embeddings is true", name)
				}
				break
			}
		}
	}
	if b.err != nil {
		return nil, fmt.Errorf("reference model: checkpoint %s: %w", ck.Dir(), b.err)
	}
	return m, nil
}

// binder reads named tensors, remembering the first error and which names
// were used.
type binder struct {
	ck   *safetensors.Checkpoint
	used map[string]bool
	err  error
}

// tensor reads name as float32, requiring the given shape.
func (b *binder) tensor(name string, shape ...int64) []float32 {
	if b.err != nil {
		return nil
	}
	b.used[name] = true
	info, err := b.ck.Info(name)
	if err != nil {
		b.err = fmt.Errorf("missing tensor %q (shape %v)", name, shape)
		return nil
	}
	if !slices.Equal(info.Shape, shape) {
		b.err = fmt.Errorf("tensor %q has shape %v, want %v", name, info.Shape, shape)
		return nil
	}
	v, err := b.ck.Float32(name)
	if err != nil {
		b.err = err
	}
	return v
}

// vector reads a [n] tensor.
func (b *binder) vector(name string, n int) []float32 { return b.tensor(name, int64(n)) }

// linear reads a [out, in] weight and, when bias is not "", a [out] bias.
func (b *binder) linear(weight, bias string, out, in int) linear {
	l := linear{out: out, in: in, w: b.tensor(weight, int64(out), int64(in))}
	if bias != "" {
		l.b = b.vector(bias, out)
	}
	return l
}
