package model

import (
	"math"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"
)

// The kernels behind Attention.Forward and Linear.Forward (model.go): the
// same math as there, computed in the way that is fastest or leanest on
// the device at hand. Each is checked against the plain form in the tests
// (attention_test.go, sdpa_test.go, linear_test.go).

// attend is softmax(q·kᵀ/√hd + bias)·v for q [B, T, nH, hd] and k, v
// [B, nKV, S, hd], with the query heads grouped over the kv heads; it
// returns [B, T, nH·hd]. libtorch's fused SDPA when the model asked for it
// (Attention.SDPA), else the exact eager path.
func (a *Attention) attend(q, k, v, bias *ts.Tensor) *ts.Tensor {
	B, T, S := size(q)[0], size(q)[1], size(k)[2]
	if a.SDPA {
		return a.sdpa(q, k, v, bias, B, T, S)
	}
	return a.matmulSoftmax(q, k, v, bias, B, T, S, 1/math.Sqrt(float64(a.HeadDim)))
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

// isCPURow tells whether x [..., in] is a single fp32 row on the CPU.
func isCPURow(x *ts.Tensor) bool {
	sh := size(x)
	return sh[len(sh)-1] == numel(sh) && x.DType() == gotch.Float && !deviceOf(x).IsCuda()
}

// gemv is Linear.Forward for a single row on the CPU in fp32 (batch-1
// decoding): a matrix-vector product. As a one-row matrix product,
// OpenBLAS repacks the whole weight matrix for every call, which took a
// third of batch-1 decoding's time; gemv reads it once.
func (l *Linear) gemv(x *ts.Tensor) *ts.Tensor {
	sh := size(x)
	var s scope
	defer s.Drop()
	v := s.Op(x.Reshape([]int64{sh[len(sh)-1]}, false)) // [in]
	y := s.Op(l.Weight.Mv(v, false))                    // [out]
	if l.Bias != nil {
		y = s.Op(y.Add(l.Bias, false))
	}
	out := append(append([]int64(nil), sh[:len(sh)-1]...), size(l.Weight)[0])
	return must(y.Reshape(out, false)) // [..., out]
}
