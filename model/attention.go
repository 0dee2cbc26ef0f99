package model

import (
	"math"

	"github.com/sugarme/gotch/ts"
)

// Attention is Qwen2's grouped-query self-attention: nH query heads share
// nKV key/value heads (query head h reads kv head h / (nH/nKV)); q, k and v
// have biases, the output projection does not.
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
	sh := size(x)
	B, T := sh[0], sh[1]
	nH, nKV, hd := a.NHeads, a.NKVHeads, a.HeadDim

	q := s.Op(s.Keep(a.Q.Forward(x)).View([]int64{B, T, nH, hd}, false))  // q: [B, T, nH, hd]
	k := s.Op(s.Keep(a.K.Forward(x)).View([]int64{B, T, nKV, hd}, false)) // k: [B, T, nKV, hd]
	v := s.Op(s.Keep(a.V.Forward(x)).View([]int64{B, T, nKV, hd}, false)) // v: [B, T, nKV, hd]
	q = s.Keep(applyRotary(q, cos, sin))
	k = s.Keep(applyRotary(k, cos, sin))
	k = s.Op(k.Transpose(1, 2, false)) // k: [B, nKV, T, hd]
	v = s.Op(v.Transpose(1, 2, false)) // v: [B, nKV, T, hd]
	if kv != nil {
		k, v = kv.write(k, v, start) // k, v: [B, nKV, S, hd], views into the cache
		s.Keep(k)
		s.Keep(v)
	}
	S := size(k)[2]
	scale := 1 / math.Sqrt(float64(hd))

	var out *ts.Tensor // out: [B, T, nH*hd]
	if a.SDPA {
		out = s.Keep(a.sdpa(q, k, v, bias, B, T, S))
	} else {
		out = s.Keep(a.matmulSoftmax(q, k, v, bias, B, T, S, scale))
	}
	return a.O.Forward(out)
}

// attentionBlock is the query block of the block-causal path: a forward
// over T ≥ 2·attentionBlock new tokens attends in blocks of this many
// queries. A variable so that tests can make the blocks small.
var attentionBlock int64 = 128

// matmulSoftmax is the exact eager path: softmax(q·kᵀ/√hd + bias) in fp32,
// then ·v. The bias is causal (query t of T sees no key after S−T+t), as
// attentionBias builds it, so a long block of queries attends block by
// block, each over only the keys it may see: the masked upper triangle of
// the score matrix, which the eager path computes, softmaxes and keeps for
// backward in full, is skipped block-wise. For a training sequence (T = S)
// in blocks of 128 that is about 40% fewer attention FLOPs and score
// memory at 845 tokens. Every real position gets the same result (its
// skipped scores have weight exp(min − max) = 0 exactly); only a padding
// query, which sees no key at all and whose output nothing reads, averages
// over a different set of masked keys.
func (a *Attention) matmulSoftmax(q, k, v, bias *ts.Tensor, B, T, S int64, scale float64) *ts.Tensor {
	if T < 2*attentionBlock {
		return a.attendBlock(q, k, v, bias, B, T, S, scale)
	}
	var s scope
	defer s.Drop()
	var outs []*ts.Tensor
	for t0 := int64(0); t0 < T; t0 += attentionBlock {
		tc := min(attentionBlock, T-t0)
		sc := S - T + t0 + tc                     // keys [0, sc) are the block's
		qc := s.Op(q.Narrow(1, t0, tc, false))    // [B, tc, nH, hd]
		kc := s.Op(k.Narrow(2, 0, sc, false))     // [B, nKV, sc, hd]
		vc := s.Op(v.Narrow(2, 0, sc, false))     // [B, nKV, sc, hd]
		bc := s.Op(bias.Narrow(2, t0, tc, false)) // [B, 1, tc, S]
		bc = s.Op(bc.Narrow(3, 0, sc, false))     // [B, 1, tc, sc]
		outs = append(outs, s.Keep(a.attendBlock(qc, kc, vc, bc, B, tc, sc, scale)))
	}
	return must(ts.Cat(outs, 1)) // [B, T, nH·hd]
}

// attendBlock is matmulSoftmax for T queries over S keys in one piece.
// The rep = nH/nKV query heads of each kv head are stacked along the query
// axis, so the keys are never repeated in memory.
func (a *Attention) attendBlock(q, k, v, bias *ts.Tensor, B, T, S int64, scale float64) *ts.Tensor {
	var s scope
	defer s.Drop()
	nKV, hd := a.NKVHeads, a.HeadDim
	rep := a.NHeads / nKV
	dt := q.DType()
	// Scale q, not the [·, T, S] scores, and add the bias in place: the
	// score tensors are the large ones (matmul's backward does not need
	// its output, so the in-place add is safe under autograd).
	qs := s.Op(q.MulScalar(ts.FloatScalar(scale), false))
	qg := s.Op(qs.View([]int64{B, T, nKV, rep, hd}, false))
	qg = s.Op(qg.Permute([]int64{0, 2, 3, 1, 4}, false))          // [B, nKV, rep, T, hd]
	qg = s.Op(qg.Reshape([]int64{B, nKV, rep * T, hd}, false))    // [B, nKV, rep·T, hd]
	kt := s.Op(k.Transpose(2, 3, false))                          // [B, nKV, hd, S]
	scores := s.Op(qg.Matmul(kt, false))                          // [B, nKV, rep·T, S]
	scores = s.Op(scores.View([]int64{B, nKV, rep, T, S}, false)) // [B, nKV, rep, T, S]
	b5 := s.Op(bias.Unsqueeze(2, false))                          // [B, 1, 1, T, S]
	check(scores.Add_(b5))
	probs := s.Op(scores.Softmax(-1, floatDType, false)) // fp32
	if dt != floatDType {
		probs = s.Op(probs.Totype(dt, false))
	}
	probs = s.Op(probs.View([]int64{B, nKV, rep * T, S}, false))
	o := s.Op(probs.Matmul(v, false))                           // [B, nKV, rep·T, hd]
	o = s.Op(o.View([]int64{B, nKV, rep, T, hd}, false))        //
	o = s.Op(o.Permute([]int64{0, 3, 1, 2, 4}, false))          // [B, T, nKV, rep, hd]
	return must(o.Reshape([]int64{B, T, a.NHeads * hd}, false)) // [B, T, nH·hd]
}

// sdpa uses libtorch's fused attention. Its 2.1 API has no GQA flag, so
// the kv heads are repeated, and the explicit bias keeps the mask right for
// a query block at the end of a longer cache (is_causal is top-left aligned).
func (a *Attention) sdpa(q, k, v, bias *ts.Tensor, B, T, S int64) *ts.Tensor {
	var s scope
	defer s.Drop()
	nH, nKV, hd := a.NHeads, a.NKVHeads, a.HeadDim
	rep := nH / nKV
	qh := s.Op(q.Transpose(1, 2, false)) // [B, nH, T, hd]
	kr := s.Keep(repeatKV(k, B, nKV, rep, S, hd))
	vr := s.Keep(repeatKV(v, B, nKV, rep, S, hd))
	b := bias
	if bias.DType() != q.DType() {
		b = s.Op(bias.Totype(q.DType(), false))
	}
	o := s.Op(ts.ScaledDotProductAttention(qh, kr, vr, b, 0, false, nil)) // [B, nH, T, hd]
	o = s.Op(o.Transpose(1, 2, false))                                    // [B, T, nH, hd]
	return must(o.Reshape([]int64{B, T, nH * hd}, false))
}

// repeatKV expands x [B, nKV, S, hd] to [B, nKV·rep, S, hd].
func repeatKV(x *ts.Tensor, B, nKV, rep, S, hd int64) *ts.Tensor {
	if rep == 1 {
		return must(x.Contiguous(false))
	}
	var s scope
	defer s.Drop()
	e := s.Op(x.Unsqueeze(2, false))                              // [B, nKV, 1, S, hd]
	e = s.Op(e.Expand([]int64{B, nKV, rep, S, hd}, false, false)) // [B, nKV, rep, S, hd]
	return must(e.Reshape([]int64{B, nKV * rep, S, hd}, false))
}
