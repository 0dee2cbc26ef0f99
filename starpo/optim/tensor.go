package optim

import (
	"github.com/sugarme/gotch"
	lib "github.com/sugarme/gotch/libtch"
	"github.com/sugarme/gotch/ts"

	"github.com/ragen-go/ragen/internal/torchrt"
)

func ct(t *ts.Tensor) lib.Ctensor { return lib.Ctensor(t.Ctensor()) }

// In-place ops through gotch's own wrappers: the prepared copy frees the
// handle they used to leak (scripts/gotchprep, freeOldHandles).

// mulScalar_ is t *= v.
func mulScalar_(t *ts.Tensor, v float64) { torchrt.Check(t.MulScalar_(ts.FloatScalar(v))) }

// addScalar_ is t += v.
func addScalar_(t *ts.Tensor, v float64) { torchrt.Check(t.AddScalar_(ts.FloatScalar(v))) }

// divScalar_ is t /= v.
func divScalar_(t *ts.Tensor, v float64) { torchrt.Check(t.DivScalar_(ts.FloatScalar(v))) }

// lerp_ is t += w·(end − t).
func lerp_(t, end *ts.Tensor, w float64) { torchrt.Check(t.Lerp_(end, ts.FloatScalar(w))) }

// addcmul_ is t += a·b; addcdiv_ is t += a/b.
func addcmul_(t, a, b *ts.Tensor) { torchrt.Check(t.Addcmul_(a, b)) }

func addcdiv_(t, a, b *ts.Tensor) { torchrt.Check(t.Addcdiv_(a, b)) }

func add_(t, other *ts.Tensor) { torchrt.Check(t.Add_(other)) }

func zero_(t *ts.Tensor) { torchrt.Check(t.Zero_()) }

// mulScalar is t·v, a new tensor.
func mulScalar(t *ts.Tensor, v float64) *ts.Tensor {
	return torchrt.Must(t.MulScalar(ts.FloatScalar(v), false))
}

// gradOf is p's gradient, a handle sharing the gradient's storage that the
// caller drops, or nil when the gradient is undefined.
func gradOf(p *ts.Tensor) *ts.Tensor {
	g := torchrt.Must(p.Grad(false))
	def, err := g.Defined()
	if err != nil || !def {
		g.MustDrop()
		torchrt.Check(err)
		return nil
	}
	return g
}

// asFloat is t itself when it is fp32 (owned false), else an fp32 copy the
// caller drops.
func asFloat(t *ts.Tensor) (f *ts.Tensor, owned bool) {
	if t.DType() == gotch.Float {
		return t, false
	}
	return torchrt.Must(t.Totype(gotch.Float, false)), true
}
