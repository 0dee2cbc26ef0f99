package optim

import (
	"fmt"
	"math"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"

	"github.com/ragen-go/ragen/internal/torchrt"
	"github.com/ragen-go/ragen/model"
)

// ZeroGrad zeroes every defined gradient of params in place; undefined
// gradients stay undefined. Call it before the first micro-batch's Backward:
// Backward adds to the gradients already there.
func ZeroGrad(params []model.Param) (err error) {
	defer torchrt.Catch(&err, "zeroing gradients")
	return torchrt.NoGrad(func() error {
		for _, p := range params {
			if g := gradOf(p.T); g != nil {
				zero_(g)
				g.MustDrop()
			}
		}
		return nil
	})
}

// clipEps is added to the norm in the clip coefficient, as PyTorch does.
const clipEps = 1e-6

// ClipGradNorm is torch.nn.utils.clip_grad_norm_ with the L2 norm over the
// defined gradients of params:
//
//	norm = √(Σ_p Σ_i g_pi²)          (squares of fp32 values, summed in fp64)
//	c    = maxNorm/(norm + 1e-6)
//	g   ← g·c   for every gradient, when c < 1
//
// so gradients whose norm is at most maxNorm − 1e-6 are left alone and
// larger ones end with norm maxNorm·norm/(norm + 1e-6). When the norm is not
// finite (a NaN or Inf gradient) nothing is scaled and finite is false: the
// caller must not step (StepIfFinite does this). It returns the norm before
// clipping, as PyTorch does.
func ClipGradNorm(params []model.Param, maxNorm float64) (norm float64, finite bool, err error) {
	if !(maxNorm > 0) || math.IsInf(maxNorm, 0) {
		return 0, false, fmt.Errorf("clipping gradients: max norm %v is not a finite positive number", maxNorm)
	}
	defer torchrt.Catch(&err, "clipping gradients")
	err = torchrt.NoGrad(func() error {
		norm = gradNorm(params)
		finite = !math.IsNaN(norm) && !math.IsInf(norm, 0)
		if c := maxNorm / (norm + clipEps); finite && c < 1 {
			for _, p := range params {
				if g := gradOf(p.T); g != nil {
					mulScalar_(g, c)
					g.MustDrop()
				}
			}
		}
		return nil
	})
	return norm, finite, err
}

// gradNorm is the global L2 norm of the defined gradients, accumulated on
// their device and read back once.
func gradNorm(params []model.Param) float64 {
	var s torchrt.Scope
	defer s.Drop()
	var acc *ts.Tensor
	for _, p := range params {
		g := gradOf(p.T)
		if g == nil {
			continue
		}
		s.Keep(g)
		g32, owned := asFloat(g)
		if owned {
			s.Keep(g32)
		}
		sq := s.Op(g32.Square(false))
		sum := s.Op(sq.Sum(gotch.Double, false))
		if acc == nil {
			acc = sum // a fresh tensor: accumulate into it
			continue
		}
		if dev := torchrt.DeviceOf(acc); dev != torchrt.DeviceOf(sum) {
			sum = s.Op(sum.ToDevice(dev, gotch.Double, false, false, false))
		}
		add_(acc, sum)
	}
	if acc == nil {
		return 0
	}
	ss, err := acc.Float64Value([]int64{})
	torchrt.Check(err)
	return math.Sqrt(ss)
}

// StepIfFinite clips the gradients of a's parameters to maxNorm and steps
// when their norm is finite; when it is not, it zeroes the gradients instead
// (so nothing leaks into the next step) and leaves the parameters and the
// moments as they were, as verl's actor and critic do. It returns the norm
// before clipping and whether a step was taken. The gradients are left in
// place after a step; zero them before the next accumulation.
func StepIfFinite(a *AdamW, maxNorm float64) (norm float64, stepped bool, err error) {
	norm, finite, err := ClipGradNorm(a.params, maxNorm)
	if err != nil {
		return norm, false, err
	}
	if !finite {
		return norm, false, ZeroGrad(a.params)
	}
	if err := a.Step(); err != nil {
		return norm, false, err
	}
	return norm, true, nil
}
