package optim

import (
	"testing"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"

	"github.com/ragen-go/ragen/internal/torchrt"
	"github.com/ragen-go/ragen/internal/torchrt/torchtest"
	"github.com/ragen-go/ragen/model"
)

func TestMain(m *testing.M) { torchtest.Main(m) }

// leaf makes an fp32 leaf tensor that requires grad.
func leaf(t *testing.T, vals []float32, shape ...int64) *ts.Tensor {
	t.Helper()
	x, err := ts.OfSlice(vals)
	if err != nil {
		t.Fatal(err)
	}
	if len(shape) > 0 {
		if x, err = x.Reshape(shape, true); err != nil {
			t.Fatal(err)
		}
	}
	if err := x.RequiresGrad_(true); err != nil {
		t.Fatal(err)
	}
	return x
}

// constant makes an fp32 tensor without grad.
func constant(t *testing.T, vals []float64, shape ...int64) *ts.Tensor {
	t.Helper()
	f := make([]float32, len(vals))
	for i, v := range vals {
		f[i] = float32(v)
	}
	x, err := ts.OfSlice(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(shape) > 0 {
		if x, err = x.Reshape(shape, true); err != nil {
			t.Fatal(err)
		}
	}
	return x
}

// backwardLinear runs backward of Σ_p Σ_i c_p,i·w_p,i, which sets (or adds)
// grad c_p on each parameter p.
func backwardLinear(t *testing.T, ps []model.Param, cs []*ts.Tensor) {
	t.Helper()
	var loss *ts.Tensor
	for i, p := range ps {
		term := torchrt.Must(torchrt.Must(p.T.Mul(cs[i], false)).Sum(gotch.Float, true))
		if loss == nil {
			loss = term
		} else {
			loss = torchrt.Must(loss.Add(term, true))
			term.MustDrop()
		}
	}
	if err := loss.Backward(); err != nil {
		t.Fatal(err)
	}
	loss.MustDrop()
}

func values(t *testing.T, x *ts.Tensor) []float64 {
	t.Helper()
	c := torchrt.Must(x.Totype(gotch.Double, false))
	defer c.MustDrop()
	return c.Float64Values()
}

func gradValues(t *testing.T, x *ts.Tensor) []float64 {
	t.Helper()
	g := gradOf(x)
	if g == nil {
		return nil
	}
	defer g.MustDrop()
	return values(t, g)
}

func newOpt(t *testing.T, ps []model.Param, o Options) *AdamW {
	t.Helper()
	a, err := NewAdamW(ps, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Drop)
	return a
}
