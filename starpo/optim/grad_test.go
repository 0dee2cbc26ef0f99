package optim

import (
	"math"
	"strings"
	"testing"

	"github.com/sugarme/gotch/ts"

	"github.com/ragen-go/ragen/model"
)

// twoParams makes parameters with grads c1 and c2 (via backward).
func twoParams(t *testing.T, c1, c2 []float64) []model.Param {
	t.Helper()
	ps := []model.Param{
		{Name: "a", T: leaf(t, make([]float32, len(c1)))},
		{Name: "b", T: leaf(t, make([]float32, len(c2)))},
		{Name: "frozen", T: leaf(t, []float32{1})}, // undefined grad: ignored
	}
	backwardLinear(t, ps[:2], []*ts.Tensor{constant(t, c1), constant(t, c2)})
	return ps
}

func TestClipGradNormScalesToMaxNorm(t *testing.T) {
	ps := twoParams(t, []float64{3, 0}, []float64{0, 4}) // global norm 5
	norm, finite, err := ClipGradNorm(ps, 1)
	if err != nil || !finite || math.Abs(norm-5) > 1e-12 {
		t.Fatalf("ClipGradNorm = %v, %v, %v; want 5, true, nil", norm, finite, err)
	}
	c := 1 / (5 + 1e-6)
	want := [][]float64{{3 * c, 0}, {0, 4 * c}}
	var ss float64
	for j := range 2 {
		for i, g := range gradValues(t, ps[j].T) {
			if math.Abs(g-want[j][i]) > 1e-7 {
				t.Errorf("%s.grad[%d] = %.8f, want %.8f", ps[j].Name, i, g, want[j][i])
			}
			ss += g * g
		}
	}
	if n := math.Sqrt(ss); math.Abs(n-1) > 1e-6 {
		t.Errorf("norm after clipping = %.8f, want 1", n)
	}
	if gradValues(t, ps[2].T) != nil {
		t.Errorf("clipping defined the frozen parameter's gradient")
	}
}

func TestClipGradNormLeavesSmallGradsAlone(t *testing.T) {
	ps := twoParams(t, []float64{0.3, 0}, []float64{0, -0.4}) // norm 0.5
	norm, finite, err := ClipGradNorm(ps, 1)
	if err != nil || !finite || math.Abs(norm-0.5) > 1e-7 {
		t.Fatalf("ClipGradNorm = %v, %v, %v; want 0.5, true, nil", norm, finite, err)
	}
	if g := gradValues(t, ps[0].T); g[0] != float64(float32(0.3)) {
		t.Errorf("a.grad[0] = %v, want 0.3 untouched", g[0])
	}
	if g := gradValues(t, ps[1].T); g[1] != float64(float32(-0.4)) {
		t.Errorf("b.grad[1] = %v, want -0.4 untouched", g[1])
	}
	for _, bad := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		if _, _, err := ClipGradNorm(ps, bad); err == nil || !strings.Contains(err.Error(), "max norm") {
			t.Errorf("ClipGradNorm(max %v) error %v, want one naming the max norm", bad, err)
		}
	}
}

func TestNaNGradientSkipsStep(t *testing.T) {
	w0 := []float32{1, -2, 3}
	p := leaf(t, w0)
	ps := []model.Param{{Name: "w", T: p}}
	a := newOpt(t, ps, DefaultOptions(0.01))
	backwardLinear(t, ps, []*ts.Tensor{constant(t, []float64{1, math.NaN(), 2})})
	norm, stepped, err := StepIfFinite(a, 1)
	if err != nil {
		t.Fatal(err)
	}
	if stepped || !math.IsNaN(norm) {
		t.Fatalf("StepIfFinite = %v, stepped %v; want NaN, false", norm, stepped)
	}
	for i, w := range values(t, p) {
		if w != float64(w0[i]) {
			t.Errorf("w[%d] = %v after a skipped step, want %v", i, w, w0[i])
		}
	}
	for i, g := range gradValues(t, p) {
		if g != 0 {
			t.Errorf("grad[%d] = %v after a skipped step, want 0", i, g)
		}
	}
	if a.Steps() != 0 || a.state[0].t != 0 {
		t.Errorf("step counts %d, %d after a skipped step, want 0", a.Steps(), a.state[0].t)
	}

	// The next finite step is a first step: nothing of the NaN leaked into
	// the moments.
	backwardLinear(t, ps, []*ts.Tensor{constant(t, []float64{5, -5, 5})}) // clipped to unit norm: signs kept
	if _, stepped, err := StepIfFinite(a, 1); err != nil || !stepped {
		t.Fatalf("finite StepIfFinite: stepped %v, err %v", stepped, err)
	}
	for i, w := range values(t, p) {
		want := float64(w0[i])*(1-0.01*0.01) - 0.01*math.Copysign(1, []float64{5, -5, 5}[i])
		if math.IsNaN(w) || math.Abs(w-want) > 1e-6 {
			t.Errorf("w[%d] = %v after the next step, want %v", i, w, want)
		}
	}
}
