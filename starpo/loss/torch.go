package loss

import (
	"errors"
	"fmt"
	"runtime/debug"
	"slices"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"
)

// The losses call gotch's error-returning ops through scope.t and check,
// which turn a failure (or a bad shape) into a panic carrying a torchError;
// each exported function recovers it into an ordinary error with catch.
// gotch's own Must* variants call log.Fatal, which would skip the trainer's
// checkpoint.

// torchError is a libtorch failure raised inside a loss.
type torchError struct {
	err   error
	stack []byte
}

func (e *torchError) Error() string { return e.err.Error() }
func (e *torchError) Unwrap() error { return e.err }

// check panics with a torchError when err is not nil.
func check(err error) {
	if err != nil {
		panic(&torchError{err: err, stack: debug.Stack()})
	}
}

// catch recovers a torchError panic into *errp, prefixed with what was
// being done. Other panics (programmer errors) keep unwinding.
func catch(errp *error, what string) {
	r := recover()
	if r == nil {
		return
	}
	var te *torchError
	if e, ok := r.(error); ok && errors.As(e, &te) {
		*errp = fmt.Errorf("%s: %w", what, te.err)
		return
	}
	panic(r)
}

// scope collects the temporaries of one computation so they are dropped
// together: gotch tensors live in C memory that the Go GC cannot weigh.
type scope struct{ held []*ts.Tensor }

// t registers the result of a gotch op for dropping and returns it, or
// panics with its error.
func (s *scope) t(x *ts.Tensor, err error) *ts.Tensor {
	check(err)
	s.held = append(s.held, x)
	return x
}

// release takes x out of the scope: it outlives the computation and the
// caller owns it.
func (s *scope) release(x *ts.Tensor) *ts.Tensor {
	if i := slices.Index(s.held, x); i >= 0 {
		s.held = slices.Delete(s.held, i, i+1)
	}
	return x
}

// drop frees every tensor still held, newest first.
func (s *scope) drop() {
	for i := len(s.held) - 1; i >= 0; i-- {
		s.held[i].MustDrop()
	}
	s.held = s.held[:0]
}

// value reads a one-element tensor as a float64.
func value(x *ts.Tensor) float64 {
	v, err := x.Float64Value([]int64{})
	check(err)
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
	check(err)
	if len(shape) != 2 {
		check(fmt.Errorf("mask has shape %v, want [B, T]", shape))
	}
	trained := s.t(mask.Gt(ts.FloatScalar(0), false))
	return &masked{s: s, trained: trained, weight: s.t(trained.Totype(dt, false)), shape: shape}
}

// clean returns x with its untrained positions replaced by 0, after
// checking x has the mask's shape. name is x's name in errors.
func (m *masked) clean(name string, x *ts.Tensor) *ts.Tensor {
	shape, err := x.Size()
	check(err)
	if !slices.Equal(shape, m.shape) {
		check(fmt.Errorf("%s has shape %v, mask %v", name, shape, m.shape))
	}
	return m.s.t(x.WhereScalarother(m.trained, ts.FloatScalar(0), false))
}

// mean is verl's masked_mean, Σ x·m / (Σ m + 1e-8), over the whole batch.
func (m *masked) mean(x *ts.Tensor) *ts.Tensor {
	s := m.s
	dt := m.weight.DType()
	num := s.t(s.t(x.Mul(m.weight, false)).Sum(dt, false))
	den := s.t(s.t(m.weight.Sum(dt, false)).AddScalar(ts.FloatScalar(1e-8), false))
	return s.t(num.Div(den, false))
}

// fraction is the masked mean of a bool tensor: the share of trained
// positions where it holds.
func (m *masked) fraction(b *ts.Tensor) float64 {
	return value(m.mean(m.s.t(b.Totype(m.weight.DType(), false))))
}
