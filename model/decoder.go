package model

import (
	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"
)

const floatDType = gotch.Float

// DecoderLayer is one pre-norm transformer block:
// h = x + attn(norm₁(x)); out = h + mlp(norm₂(h)).
type DecoderLayer struct {
	InputNorm, PostAttnNorm RMSNorm
	Attn                    Attention
	MLP                     MLP
}

// Forward maps x [B, T, d] to [B, T, d].
func (l *DecoderLayer) Forward(x, cos, sin, bias *ts.Tensor, kv *layerKV, start int64) *ts.Tensor {
	var s scope
	defer s.Drop()
	a := s.Keep(l.Attn.Forward(s.Keep(l.InputNorm.Forward(x)), cos, sin, bias, kv, start))
	h := s.Op(x.Add(a, false))
	m := s.Keep(l.MLP.Forward(s.Keep(l.PostAttnNorm.Forward(h))))
	return must(h.Add(m, false))
}

// Backbone is Qwen2Model: token embeddings, the decoder layers and the
// final norm. It gives hidden states; the heads live in CausalLM and
// ValueModel.
type Backbone struct {
	Cfg    Config
	Embed  *ts.Tensor // model.embed_tokens.weight [V, d]
	Layers []DecoderLayer
	Norm   RMSNorm
	Rotary *Rotary
	DType  gotch.DType
	Device gotch.Device
}

// Inputs is one forward pass's input: T new tokens per sequence.
type Inputs struct {
	IDs       *ts.Tensor // [B, T] int64
	Positions *ts.Tensor // [B, T] int64 rotary positions
	Bias      *ts.Tensor // [B, 1, T, S] additive attention mask, S = cached + T
}

// Forward returns the final hidden states [B, T, d]. With a cache, the new
// keys and values are appended to it.
func (m *Backbone) Forward(in Inputs, cache *Cache) *ts.Tensor {
	var s scope
	defer s.Drop()
	T := size(in.IDs)[1]
	start := int64(0)
	// A static decode step's position lives on the device, and its decoder
	// counts the host side (staticDecoder.step).
	counted := cache != nil && !cache.static()
	if counted {
		check(cache.advance(T))
		start = cache.Len
	}
	x := s.Op(ts.Embedding(m.Embed, in.IDs, -1, false, false)) // [B, T, d]
	cos, sin := m.Rotary.CosSin(in.Positions, m.DType)         // [B, T, 1, hd]
	s.Keep(cos)
	s.Keep(sin)
	for i := range m.Layers {
		x = s.Keep(m.Layers[i].Forward(x, cos, sin, in.Bias, cache.layer(i), start))
	}
	if counted {
		cache.Len += T
	}
	return m.Norm.Forward(x)
}

// Params lists the backbone's weights under HuggingFace's names. A bias
// the architecture lacks is not listed: it exists nowhere (optimiser,
// checkpoints, data-parallel buckets, exports all take this list).
func (m *Backbone) Params() []Param {
	ps := []Param{{"model.embed_tokens.weight", m.Embed}}
	linear := func(name string, l Linear) {
		ps = append(ps, Param{name + ".weight", l.Weight})
		if l.Bias != nil {
			ps = append(ps, Param{name + ".bias", l.Bias})
		}
	}
	for i := range m.Layers {
		l := &m.Layers[i]
		p := layerPrefix(i)
		ps = append(ps, Param{p + "input_layernorm.weight", l.InputNorm.Weight})
		linear(p+"self_attn.q_proj", l.Attn.Q)
		linear(p+"self_attn.k_proj", l.Attn.K)
		linear(p+"self_attn.v_proj", l.Attn.V)
		linear(p+"self_attn.o_proj", l.Attn.O)
		ps = append(ps, Param{p + "post_attention_layernorm.weight", l.PostAttnNorm.Weight})
		linear(p+"mlp.gate_proj", l.MLP.Gate)
		linear(p+"mlp.up_proj", l.MLP.Up)
		linear(p+"mlp.down_proj", l.MLP.Down)
	}
	return append(ps, Param{"model.norm.weight", m.Norm.Weight})
}

// Drop frees the backbone's tensors.
func (m *Backbone) Drop() {
	for _, p := range m.Params() {
		dropAll(p.T)
	}
	dropAll(m.Rotary.InvFreq)
}
