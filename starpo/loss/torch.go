package loss

import (
	"fmt"
	"slices"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"

	"github.com/ragen-go/ragen/internal/torchrt"
)

// The losses run gotch's error-returning ops through torchrt.Scope.Op and
// torchrt.Check, which panic with a *torchrt.OpError on failure; each
// exported function recovers it into an ordinary error with
// `defer torchrt.Catch(&err, what)`.

type scope = torchrt.Scope

// value reads a one-element tensor as a float64.
func value(x *ts.Tensor) float64 {
	v, err := x.Float64Value([]int64{})
	torchrt.Check(err)
	return v
}

// accDType is the dtype reductions accumulate in: fp64 for fp64 inputs,
// fp32 otherwise.
func accDType(x *ts.Tensor) gotch.DType {
	if x.DType() == gotch.Double {
		return gotch.Double
	}
	return gotch.Float
}

// masked is one call's view of the response mask: trained is the bool
// [B, T] mask > 0, weight the same as 0/1 in the accumulation dtype.
type masked struct {
	s       *scope
	trained *ts.Tensor
	weight  *ts.Tensor
	shape   []int64
}

// newMasked checks mask is [B, T] and prepares its two forms.
func newMasked(s *scope, mask *ts.Tensor, dt gotch.DType) *masked {
	shape, err := mask.Size()
	torchrt.Check(err)
	if len(shape) != 2 {
		torchrt.Check(fmt.Errorf("mask has shape %v, want [B, T]", shape))
	}
	trained := s.Op(mask.Gt(ts.FloatScalar(0), false))
	return &masked{s: s, trained: trained, weight: s.Op(trained.Totype(dt, false)), shape: shape}
}

// clean returns x with its untrained positions replaced by 0, after
// checking x has the mask's shape. name is x's name in errors.
func (m *masked) clean(name string, x *ts.Tensor) *ts.Tensor {
	shape, err := x.Size()
	torchrt.Check(err)
	if !slices.Equal(shape, m.shape) {
		torchrt.Check(fmt.Errorf("%s has shape %v, mask %v", name, shape, m.shape))
	}
	return m.s.Op(x.WhereScalarother(m.trained, ts.FloatScalar(0), false))
}

// mean is verl's masked_mean, Σ x·m / (Σ m + 1e-8), over the whole batch.
func (m *masked) mean(x *ts.Tensor) *ts.Tensor {
	s := m.s
	dt := m.weight.DType()
	num := s.Op(s.Op(x.Mul(m.weight, false)).Sum(dt, false))
	den := s.Op(s.Op(m.weight.Sum(dt, false)).AddScalar(ts.FloatScalar(1e-8), false))
	return s.Op(num.Div(den, false))
}

// fraction is the masked mean of a bool tensor: the share of trained
// positions where it holds.
func (m *masked) fraction(b *ts.Tensor) float64 {
	return value(m.mean(m.s.Op(b.Totype(m.weight.DType(), false))))
}
