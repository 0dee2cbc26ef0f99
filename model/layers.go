package model

import (
	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"
)

// Linear is y = x·Wᵀ + b, with W [out, in] and an optional bias [out]
// (Qwen2's q/k/v projections have one, o_proj and the MLP do not).
type Linear struct {
	Weight *ts.Tensor // [out, in]
	Bias   *ts.Tensor // [out] or nil
}

// Forward maps x [..., in] to [..., out].
func (l *Linear) Forward(x *ts.Tensor) *ts.Tensor {
	if sh := size(x); sh[len(sh)-1] == numel(sh) && x.DType() == gotch.Float && !deviceOf(x).IsCuda() {
		return l.vector(x, sh)
	}
	b := l.Bias
	if b == nil {
		b = ts.None
	}
	return must(ts.Linear(x, l.Weight, b))
}

// vector is Forward for a single row on the CPU in fp32 (batch-1 decoding):
// a matrix-vector product. As a one-row matrix product, OpenBLAS repacks
// the whole weight matrix for every call, which took a third of batch-1
// decoding's time; gemv reads it once.
func (l *Linear) vector(x *ts.Tensor, sh []int64) *ts.Tensor {
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
