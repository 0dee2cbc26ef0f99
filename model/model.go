// Package model is the policy and the critic: HuggingFace's Qwen2
// (modeling_qwen2.py) and Llama, which differ here only in which
// projections have biases. A stack of pre-norm decoder layers, each
// grouped-query attention with rotary positions and a SwiGLU MLP, runs
// between the token embeddings and a final RMSNorm; a language-model head
// (CausalLM, the policy) or a scalar head (ValueModel, the critic) reads the
// hidden states.
//
// model.go is the math. The attention and matrix-vector kernels are in
// kernels.go, rotary positions in rope.go, masks and positions in mask.go,
// the weights' HuggingFace names in params.go, loading in load.go,
// generation in generate.go, the training scorer in trainscore.go. Every
// temporary is held by a scope and dropped on return (torch.go).
package model

import (
	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"

	"github.com/ragen-go/ragen/internal/torchrt"
)

// Linear is y = x·Wᵀ + b, with W [out, in] and an optional bias [out]
// (Qwen2's q/k/v projections have one, o_proj and the MLP do not), plus
// (α/r)·(x·Aᵀ)·Bᵀ when it carries a LoRA adapter (lora.go).
type Linear struct {
	Weight *ts.Tensor // [out, in]
	Bias   *ts.Tensor // [out] or nil
	LoRA   *LoRA      // or nil
}

// Forward maps x [..., in] to [..., out]. A single fp32 row on the CPU
// (batch-1 decoding) takes the matrix-vector kernel (gemv, kernels.go).
// Every path adds the adapter's term, so generation, scoring and training
// all see the same adapted policy.
func (l *Linear) Forward(x *ts.Tensor) *ts.Tensor {
	var y *ts.Tensor
	if isCPURow(x) {
		y = l.gemv(x)
	} else {
		b := l.Bias
		if b == nil {
			b = ts.None
		}
		y = must(ts.Linear(x, l.Weight, b))
	}
	if l.LoRA != nil {
		return l.LoRA.add(x, y)
	}
	return y
}

// RMSNorm is HuggingFace's Qwen2RMSNorm: in fp32, x·rsqrt(mean(x²)+eps),
// cast back to the input dtype, then scaled by the weight.
type RMSNorm struct {
	Weight *ts.Tensor // [d]
	Eps    float64
}

// Forward normalises x [..., d] over its last dimension.
func (n *RMSNorm) Forward(x *ts.Tensor) *ts.Tensor {
	var s scope
	defer s.Drop()
	dt := x.DType()
	xf := x
	if dt != gotch.Float {
		xf = s.Op(x.Totype(gotch.Float, false))
	}
	ms := s.Op(s.Op(xf.Square(false)).MeanDim([]int64{-1}, true, gotch.Float, false)) // [..., 1]
	inv := s.Op(s.Op(ms.AddScalar(ts.FloatScalar(n.Eps), false)).Rsqrt(false))
	y := s.Op(xf.Mul(inv, false))
	if dt != gotch.Float {
		y = s.Op(y.Totype(dt, false))
	}
	return must(y.Mul(n.Weight, false))
}

// MLP is Qwen2's SwiGLU block: down(silu(gate(x)) ⊙ up(x)).
type MLP struct {
	Gate, Up, Down Linear
}

// Forward maps x [B, T, d] to [B, T, d].
func (m *MLP) Forward(x *ts.Tensor) *ts.Tensor {
	var s scope
	defer s.Drop()
	g := s.Op(s.Keep(m.Gate.Forward(x)).Silu(false)) // [B, T, I]
	h := s.Op(g.Mul(s.Keep(m.Up.Forward(x)), false))
	return m.Down.Forward(h)
}

// Attention is grouped-query self-attention: nH query heads share nKV
// key/value heads (query head h reads kv head h / (nH/nKV)),
//
//	Attention(q, k, v) = softmax(q·kᵀ/√hd + bias)·v
//
// with q and k rotated by their positions (RoPE). In Qwen2 q, k and v have
// biases and the output projection does not.
type Attention struct {
	Q, K, V, O Linear
	NHeads     int64 // query heads nH
	NKVHeads   int64 // key/value heads nKV
	HeadDim    int64 // hd
	SDPA       bool  // use libtorch's scaled_dot_product_attention (2.x) instead of the matmul path
}

// Forward attends x [B, T, d] over the cached keys plus its own, with the
// additive bias [B, 1, T, S] (0 where allowed, the dtype's minimum where
// not). cos and sin are [B, T, 1, hd]. kv, when not nil, receives the new
// keys and values at positions [start, start+T) and supplies the earlier ones.
func (a *Attention) Forward(x, cos, sin, bias *ts.Tensor, kv *layerKV, start int64) *ts.Tensor {
	var s scope
	defer s.Drop()
	q := s.Keep(a.heads(a.Q, x, a.NHeads))   // q: [B, T, nH, hd]
	k := s.Keep(a.heads(a.K, x, a.NKVHeads)) // k: [B, T, nKV, hd]
	v := s.Keep(a.heads(a.V, x, a.NKVHeads)) // v: [B, T, nKV, hd]
	q = s.Keep(applyRotary(q, cos, sin))
	k = s.Keep(applyRotary(k, cos, sin))
	k = s.Op(k.Transpose(1, 2, false)) // k: [B, nKV, T, hd]
	v = s.Op(v.Transpose(1, 2, false)) // v: [B, nKV, T, hd]
	if kv != nil {
		k, v = kv.write(k, v, start) // k, v: [B, nKV, S, hd], views into the cache
		s.Keep(k)
		s.Keep(v)
	}
	out := s.Keep(a.attend(q, k, v, bias)) // out: [B, T, nH·hd]
	return a.O.Forward(out)
}

// heads projects x [B, T, d] and splits the result into n heads [B, T, n, hd].
func (a *Attention) heads(proj Linear, x *ts.Tensor, n int64) *ts.Tensor {
	var s scope
	defer s.Drop()
	sh := size(x)
	return must(s.Keep(proj.Forward(x)).View([]int64{sh[0], sh[1], n, a.HeadDim}, false))
}

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
	LoRA   LoRAOptions // the adapters' settings (AddLoRA); rank 0: none
	shared bool        // the weights belong to another model (shareBase): Drop frees only the adapters
	row    *rowTable   // the layers laid out for single-row decoding steps (rowstep.go)
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
	start, done := cache.begin(size(in.IDs)[1])
	x := s.Op(ts.Embedding(m.Embed, in.IDs, -1, false, false)) // x: [B, T, d]
	cos, sin := m.Rotary.CosSin(in.Positions, m.DType)         // [B, T, 1, hd]
	s.Keep(cos)
	s.Keep(sin)
	if !m.rowStep(x, cos, sin, in.Bias, cache, start) {
		for i := range m.Layers {
			x = s.Keep(m.Layers[i].Forward(x, cos, sin, in.Bias, cache.layer(i), start))
		}
	}
	done()
	return m.Norm.Forward(x)
}

// CausalLM is Qwen2ForCausalLM: the backbone and a language-model head,
// which reuses the embedding matrix when the embeddings are tied.
type CausalLM struct {
	*Backbone
	LMHead *ts.Tensor // lm_head.weight [V, d]; the same tensor as Embed when tied
}

// Logits maps hidden states [B, T, d] to logits [B, T, V] in fp32.
func (m *CausalLM) Logits(hidden *ts.Tensor) *ts.Tensor {
	head := Linear{Weight: m.LMHead}
	l := head.Forward(hidden)
	if l.DType() != floatDType {
		l = must(l.Totype(floatDType, true))
	}
	return l
}

// LastLogits runs the model on in and returns the logits of each sequence's
// last position, [B, V] fp32. The head is applied to that position only
// (HuggingFace's logits_to_keep=1).
func (m *CausalLM) LastLogits(in Inputs, cache *Cache) (logits *ts.Tensor, err error) {
	defer torchrt.Catch(&err, "forward pass")
	var s scope
	defer s.Drop()
	h := s.Keep(m.Forward(in, cache)) // [B, T, d]
	T := size(h)[1]
	last := s.Op(h.Narrow(1, T-1, 1, false)) // [B, 1, d]
	l := s.Keep(m.Logits(last))              // [B, 1, V]
	return must(l.SqueezeDim(1, false)), nil
}

// ValueModel is the critic: a Qwen2 backbone with a scalar head
// (HuggingFace's Qwen2ForTokenClassification with one label, as verl and
// RAGEN build it), giving a value per token.
type ValueModel struct {
	*Backbone
	Score Linear // score.weight [1, d], score.bias [1]
}

// Values maps inputs to per-token values [B, T] in fp32.
func (m *ValueModel) Values(in Inputs) (v *ts.Tensor, err error) {
	defer torchrt.Catch(&err, "critic forward pass")
	var s scope
	defer s.Drop()
	h := s.Keep(m.Forward(in, nil))
	if dt := m.Score.Weight.DType(); h.DType() != dt { // a LoRA critic's fp32 head on a bf16 base
		h = s.Op(h.Totype(dt, false))
	}
	out := s.Keep(m.Score.Forward(h)) // [B, T, 1]
	if out.DType() != floatDType {
		out = s.Op(out.Totype(floatDType, false))
	}
	return must(out.SqueezeDim(-1, false)), nil
}
