package optim

import (
	"fmt"
	"math"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"

	"github.com/ragen-go/ragen/internal/torchrt"
	"github.com/ragen-go/ragen/model"
)

// Options are AdamW's hyperparameters, named as torch.optim.AdamW names them.
type Options struct {
	LR          float64 // learning rate; the schedule overrides it per step with SetLR
	Beta1       float64 // decay of the first moment (betas[0])
	Beta2       float64 // decay of the second moment (betas[1])
	Eps         float64 // added to √v̂ in the denominator
	WeightDecay float64 // decoupled weight decay
}

// DefaultOptions are RAGEN's settings (verl's defaults) at learning rate lr:
// betas (0.9, 0.999), eps 1e-8, weight decay 0.01. RAGEN trains the actor at
// 1e-6 and the critic at 1e-5.
func DefaultOptions(lr float64) Options {
	return Options{LR: lr, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.01}
}

// Validate checks each field.
func (o Options) Validate() error {
	switch {
	case !finiteNonNeg(o.LR):
		return fmt.Errorf("adamw: learning rate %v is not a finite non-negative number", o.LR)
	case !(o.Beta1 >= 0 && o.Beta1 < 1):
		return fmt.Errorf("adamw: beta1 %v is not in [0, 1)", o.Beta1)
	case !(o.Beta2 >= 0 && o.Beta2 < 1):
		return fmt.Errorf("adamw: beta2 %v is not in [0, 1)", o.Beta2)
	case !(o.Eps > 0) || math.IsInf(o.Eps, 0):
		return fmt.Errorf("adamw: eps %v is not a finite positive number", o.Eps)
	case !finiteNonNeg(o.WeightDecay):
		return fmt.Errorf("adamw: weight decay %v is not a finite non-negative number", o.WeightDecay)
	}
	return nil
}

func finiteNonNeg(x float64) bool { return x >= 0 && !math.IsInf(x, 0) }

// AdamW is torch.optim.AdamW (amsgrad off, maximize off) over a fixed list
// of parameters. For a parameter p with gradient g, at its t-th step:
//
//	p ← p·(1 − lr·wd)                 decoupled weight decay
//	m ← β1·m + (1 − β1)·g             m.lerp_(g, 1 − β1)
//	v ← β2·v + (1 − β2)·g²
//	m̂ = m/(1 − β1ᵗ),  v̂ = v/(1 − β2ᵗ)
//	p ← p − lr·m̂/(√v̂ + eps)
//
// evaluated in PyTorch's order: denom = √v/√(1 − β2ᵗ) + eps, then
// p += (−lr/(1 − β1ᵗ))·m/denom. The moments m and v are fp32 whatever the
// parameter's dtype, on the parameter's device; for a bf16 or fp16
// parameter the update is computed on an fp32 copy of it and written back
// rounded to the parameter's dtype (so an update below the parameter's
// precision, such as the decay factor 1 − 1e-8 at lr 1e-6, is lost: there
// are no fp32 master weights). A parameter whose gradient is undefined is
// skipped and its step count t does not advance, as in PyTorch.
//
// The moments are allocated when the optimiser is made, for every parameter:
// pass only the trainable ones.
type AdamW struct {
	opts   Options
	params []model.Param
	state  []moments
	steps  int // Step calls
}

// moments is one parameter's state.
type moments struct {
	m, v *ts.Tensor // exp_avg and exp_avg_sq, fp32
	t    int        // steps this parameter has taken
}

// NewAdamW makes an optimiser over params, which must have distinct
// non-empty names and floating-point dtypes (fp32, bf16 or fp16).
func NewAdamW(params []model.Param, o Options) (a *AdamW, err error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	seen := make(map[string]bool, len(params))
	for _, p := range params {
		switch {
		case p.Name == "":
			return nil, fmt.Errorf("adamw: a parameter has an empty name")
		case seen[p.Name]:
			return nil, fmt.Errorf("adamw: parameter %q given twice", p.Name)
		case p.T == nil:
			return nil, fmt.Errorf("adamw: parameter %q has no tensor", p.Name)
		}
		if dt := p.T.DType(); dt != gotch.Float && dt != gotch.BFloat16 && dt != gotch.Half {
			return nil, fmt.Errorf("adamw: parameter %q has dtype %v, want float32, bfloat16 or float16", p.Name, dt)
		}
		seen[p.Name] = true
	}
	a = &AdamW{opts: o, params: append([]model.Param(nil), params...)}
	defer torchrt.Catch(&err, "adamw: allocating state")
	defer func() {
		if err != nil {
			a.Drop()
		}
	}()
	for _, p := range params {
		shape, dev := torchrt.Size(p.T), torchrt.DeviceOf(p.T)
		m := torchrt.Must(ts.Zeros(shape, gotch.Float, dev))
		a.state = append(a.state, moments{m: m})
		a.state[len(a.state)-1].v = torchrt.Must(ts.Zeros(shape, gotch.Float, dev))
	}
	return a, nil
}

// SetLR sets the learning rate of the following steps.
func (a *AdamW) SetLR(lr float64) { a.opts.LR = lr }

// LR is the learning rate in force.
func (a *AdamW) LR() float64 { return a.opts.LR }

// Options are the hyperparameters in force.
func (a *AdamW) Options() Options { return a.opts }

// Steps is the number of Step calls so far (restored by Load).
func (a *AdamW) Steps() int { return a.steps }

// Params are the parameters the optimiser updates.
func (a *AdamW) Params() []model.Param { return append([]model.Param(nil), a.params...) }

// ZeroGrad zeroes the gradients of the optimiser's parameters.
func (a *AdamW) ZeroGrad() error { return ZeroGrad(a.params) }

// Step applies one AdamW update to every parameter with a gradient.
func (a *AdamW) Step() error {
	if err := a.opts.Validate(); err != nil {
		return err
	}
	err := torchrt.NoGrad(func() (err error) {
		for i := range a.params {
			if err := a.update(i); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	a.steps++
	return nil
}

// update steps parameter i.
func (a *AdamW) update(i int) (err error) {
	p, st := a.params[i], &a.state[i]
	defer torchrt.Catch(&err, fmt.Sprintf("adamw: updating %s", p.Name))
	var s torchrt.Scope
	defer s.Drop()
	g := gradOf(p.T)
	if g == nil {
		return nil
	}
	s.Keep(g)
	g32, owned := asFloat(g)
	if owned {
		s.Keep(g32)
	}
	w, wOwned := asFloat(p.T)
	if wOwned {
		s.Keep(w)
	}
	o := a.opts
	st.t++
	if o.WeightDecay != 0 {
		mulScalar_(w, 1-o.LR*o.WeightDecay)
	}
	lerp_(st.m, g32, 1-o.Beta1)
	mulScalar_(st.v, o.Beta2)
	addcmul_(st.v, g32, s.Keep(mulScalar(g32, 1-o.Beta2))) // v += g·((1−β2)·g), as addcmul_(g, g, value=1−β2)
	t := float64(st.t)
	bc1 := 1 - math.Pow(o.Beta1, t)
	bc2 := 1 - math.Pow(o.Beta2, t)
	denom := s.Op(st.v.Sqrt(false))
	divScalar_(denom, math.Sqrt(bc2))
	addScalar_(denom, o.Eps)
	// p += ((−lr/bc1)·m)/denom, as addcdiv_(m, denom, value=−lr/bc1)
	addcdiv_(w, s.Keep(mulScalar(st.m, -o.LR/bc1)), denom)
	if wOwned {
		torchrt.CopyInto(p.T, w)
	}
	return nil
}

// Drop frees the optimiser's state; the parameters stay.
func (a *AdamW) Drop() {
	for _, st := range a.state {
		for _, t := range []*ts.Tensor{st.m, st.v} {
			if t != nil {
				t.MustDrop()
			}
		}
	}
	a.state = nil
}
