package optim

import (
	"math"
	"strings"
	"testing"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"

	"github.com/ragen-go/ragen/internal/torchrt"
	"github.com/ragen-go/ragen/model"
)

// refAdamW is torch.optim.AdamW's single-tensor step in float64, one
// parameter, written from its documented algorithm.
type refAdamW struct {
	w, m, v []float64
	t       int
}

func (r *refAdamW) step(g []float64, o Options) {
	r.t++
	bc1 := 1 - math.Pow(o.Beta1, float64(r.t))
	bc2 := 1 - math.Pow(o.Beta2, float64(r.t))
	for i := range r.w {
		r.w[i] *= 1 - o.LR*o.WeightDecay
		r.m[i] = o.Beta1*r.m[i] + (1-o.Beta1)*g[i]
		r.v[i] = o.Beta2*r.v[i] + (1-o.Beta2)*g[i]*g[i]
		mhat, vhat := r.m[i]/bc1, r.v[i]/bc2
		r.w[i] -= o.LR * mhat / (math.Sqrt(vhat) + o.Eps)
	}
}

// gradAt is a deterministic gradient for element i at step k, of mixed
// signs and magnitudes.
func gradAt(k, i int) float64 {
	return math.Sin(float64(7*k+3*i+1)) * math.Pow(10, float64((i+k)%3-1))
}

func TestAdamWMatchesReference(t *testing.T) {
	o := Options{LR: 0.01, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.1}
	init := [][]float32{{1, -2, 0.5, 3, -0.25, 0.75}, {0.1, -0.2, 0.3, -0.4}}
	shapes := [][]int64{{2, 3}, {4}}
	ps := []model.Param{
		{Name: "a.weight", T: leaf(t, init[0], shapes[0]...)},
		{Name: "b.bias", T: leaf(t, init[1], shapes[1]...)},
		{Name: "unused", T: leaf(t, []float32{5, 6})}, // never gets a gradient
	}
	a := newOpt(t, ps, o)
	refs := make([]*refAdamW, 2)
	for j := range refs {
		n := len(init[j])
		refs[j] = &refAdamW{w: make([]float64, n), m: make([]float64, n), v: make([]float64, n)}
		for i, w := range init[j] {
			refs[j].w[i] = float64(w)
		}
	}
	for k := range 5 {
		o.LR = 0.01 * float64(k+1) / 5 // exercises SetLR
		a.SetLR(o.LR)
		if err := a.ZeroGrad(); err != nil {
			t.Fatal(err)
		}
		var cs []*ts.Tensor
		for j := range refs {
			g := make([]float64, len(init[j]))
			for i := range g {
				g[i] = gradAt(k+10*j, i)
			}
			cs = append(cs, constant(t, g, shapes[j]...))
			refs[j].step(g, o)
		}
		backwardLinear(t, ps[:2], cs)
		if err := a.Step(); err != nil {
			t.Fatal(err)
		}
	}
	var worst float64
	for j, r := range refs {
		got := values(t, ps[j].T)
		for i := range got {
			d := math.Abs(got[i] - r.w[i])
			worst = max(worst, d)
			if d > 1e-6 {
				t.Errorf("%s[%d] after 5 steps = %.8f, reference %.8f (|Δ| %.2g > 1e-6)", ps[j].Name, i, got[i], r.w[i],
					d)
			}
		}
	}
	t.Logf("largest |fp32 − float64 reference| after 5 steps: %.2g", worst)
	if got := values(t, ps[2].T); got[0] != 5 || got[1] != 6 {
		t.Errorf("parameter without a gradient moved to %v", got)
	}
	if a.state[2].t != 0 || a.state[0].t != 5 {
		t.Errorf("per-parameter step counts %d, %d, want 5 and 0 for the unused one", a.state[0].t, a.state[2].t)
	}
	if a.Steps() != 5 {
		t.Errorf("Steps() = %d, want 5", a.Steps())
	}
}

func TestFirstStepMovesByLRTimesSign(t *testing.T) {
	// On the first step m̂/√v̂ = g/|g|: each weight moves by lr·sign(g)
	// after decoupled decay.
	const lr, wd = 0.01, 0.1
	w0 := []float32{1, -2, 3, 0.5}
	c := []float64{0.5, -4, 2e-3, -7}
	p := leaf(t, w0)
	ps := []model.Param{{Name: "w", T: p}}
	a := newOpt(t, ps, Options{LR: lr, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: wd})
	backwardLinear(t, ps, []*ts.Tensor{constant(t, c)})
	if err := a.Step(); err != nil {
		t.Fatal(err)
	}
	got := values(t, p)
	for i := range w0 {
		want := float64(w0[i])*(1-lr*wd) - lr*math.Copysign(1, c[i])
		if math.Abs(got[i]-want) > 1e-5 { // eps/|g| ≤ 5e-6 for the smallest g
			t.Errorf("w[%d] = %.7f, want %.7f", i, got[i], want)
		}
	}
}

func TestMicroBatchesAccumulate(t *testing.T) {
	// Two Backward calls before one Step equal one Backward of the summed
	// loss: ZeroGrad/Backward/Backward/Step, not gotch's BackwardStep.
	w0 := []float32{0.3, -1.2, 2.0, 0.7}
	x1 := []float64{1, 2, -1, 0.5}
	x2 := []float64{-0.5, 0.25, 3, -2}
	loss1 := func(w *ts.Tensor) *ts.Tensor { // Σ (w·x1)²
		wx := torchrt.Must(w.Mul(constant(t, x1), false))
		return torchrt.Must(torchrt.Must(wx.Square(true)).Sum(gotch.Float, true))
	}
	loss2 := func(w *ts.Tensor) *ts.Tensor { // Σ tanh(w)·x2
		th := torchrt.Must(w.Tanh(false))
		return torchrt.Must(torchrt.Must(th.Mul(constant(t, x2), true)).Sum(gotch.Float, true))
	}
	o := DefaultOptions(0.01)
	pa, pb := leaf(t, w0), leaf(t, w0)
	a := newOpt(t, []model.Param{{Name: "w", T: pa}}, o)
	b := newOpt(t, []model.Param{{Name: "w", T: pb}}, o)
	for range 2 {
		if err := a.ZeroGrad(); err != nil {
			t.Fatal(err)
		}
		for _, l := range []*ts.Tensor{loss1(pa), loss2(pa)} {
			if err := l.Backward(); err != nil {
				t.Fatal(err)
			}
			l.MustDrop()
		}
		if err := b.ZeroGrad(); err != nil {
			t.Fatal(err)
		}
		sum := torchrt.Must(loss1(pb).Add(loss2(pb), true))
		if err := sum.Backward(); err != nil {
			t.Fatal(err)
		}
		sum.MustDrop()
		ga, gb := gradValues(t, pa), gradValues(t, pb)
		for i := range ga {
			if math.Abs(ga[i]-gb[i]) > 1e-6 {
				t.Fatalf("accumulated grad[%d] = %.7f, summed-loss grad %.7f", i, ga[i], gb[i])
			}
		}
		if err := a.Step(); err != nil {
			t.Fatal(err)
		}
		if err := b.Step(); err != nil {
			t.Fatal(err)
		}
	}
	wa, wb := values(t, pa), values(t, pb)
	for i := range wa {
		if math.Abs(wa[i]-wb[i]) > 1e-6 {
			t.Errorf("w[%d] = %.7f with accumulation, %.7f with the summed loss", i, wa[i], wb[i])
		}
	}
	if err := a.ZeroGrad(); err != nil {
		t.Fatal(err)
	}
	for i, g := range gradValues(t, pa) {
		if g != 0 {
			t.Errorf("grad[%d] = %v after ZeroGrad", i, g)
		}
	}
}

func TestBF16ParameterKeepsFP32State(t *testing.T) {
	p := torchrt.Must(constant(t, []float64{1, -2, 0.5}).Totype(gotch.BFloat16, true))
	torchrt.Check(p.RequiresGrad_(true))
	ps := []model.Param{{Name: "w", T: p}}
	a := newOpt(t, ps, Options{LR: 0.01, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8})
	c := torchrt.Must(constant(t, []float64{1, -1, 1}).Totype(gotch.BFloat16, true))
	backwardLinear(t, ps, []*ts.Tensor{c})
	if err := a.Step(); err != nil {
		t.Fatal(err)
	}
	if p.DType() != gotch.BFloat16 || a.state[0].m.DType() != gotch.Float || a.state[0].v.DType() != gotch.Float {
		t.Fatalf("dtypes: param %v, exp_avg %v, exp_avg_sq %v; want bf16, fp32, fp32", p.DType(), a.state[0].m.DType(),
			a.state[0].v.DType())
	}
	got := values(t, p)
	for i, want := range []float64{0.99, -1.99, 0.49} {
		if math.Abs(got[i]-want) > 1.0/128 { // bf16 has 8 bits of mantissa
			t.Errorf("w[%d] = %v, want %v within bf16 precision", i, got[i], want)
		}
	}
	if m := values(t, a.state[0].m); math.Abs(m[1]+0.1) > 1e-7 {
		t.Errorf("exp_avg[1] = %v, want -0.1 in fp32", m[1])
	}
}

func TestNewAdamWRejects(t *testing.T) {
	p := leaf(t, []float32{1})
	for _, c := range []struct {
		ps   []model.Param
		o    Options
		want string
	}{
		{[]model.Param{{Name: "w", T: p}}, Options{LR: -1, Eps: 1e-8}, "learning rate -1"},
		{[]model.Param{{Name: "w", T: p}}, Options{LR: 1, Beta1: 1, Eps: 1e-8}, "beta1 1"},
		{[]model.Param{{Name: "w", T: p}}, Options{LR: 1, Beta2: math.NaN(), Eps: 1e-8}, "beta2 NaN"},
		{[]model.Param{{Name: "w", T: p}}, Options{LR: 1}, "eps 0"},
		{[]model.Param{{Name: "w", T: p}}, Options{LR: 1, Eps: 1e-8, WeightDecay: -0.1}, "weight decay -0.1"},
		{[]model.Param{{Name: "w", T: p}, {Name: "w", T: p}}, DefaultOptions(1), `"w" given twice`},
		{[]model.Param{{Name: "", T: p}}, DefaultOptions(1), "empty name"},
	} {
		_, err := NewAdamW(c.ps, c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewAdamW(%+v) error %v, want one naming %q", c.o, err, c.want)
		}
	}
}
