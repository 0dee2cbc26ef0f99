package loss

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"
)

// libtorch's grad mode and gotch's error slot are per thread.
func init() { runtime.LockOSThread() }

// tensor makes an fp32 [B, T] tensor of rows, dropped when the test ends.
func tensor(t *testing.T, rows [][]float64) *ts.Tensor {
	t.Helper()
	B, T := len(rows), len(rows[0])
	flat := make([]float32, 0, B*T)
	for _, r := range rows {
		for _, v := range r {
			flat = append(flat, float32(v))
		}
	}
	x, err := ts.OfSlice(flat)
	if err != nil {
		t.Fatal(err)
	}
	x, err = x.View([]int64{int64(B), int64(T)}, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.MustDrop() })
	return x
}

// leaf is tensor with requires_grad on.
func leaf(t *testing.T, rows [][]float64) *ts.Tensor {
	t.Helper()
	x, err := tensor(t, rows).SetRequiresGrad(true, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.MustDrop() })
	return x
}

// values copies x's elements (any float dtype) into float64s.
func values(t *testing.T, x *ts.Tensor) []float64 {
	t.Helper()
	c, err := x.Totype(gotch.Float, false)
	if err != nil {
		t.Fatal(err)
	}
	defer c.MustDrop()
	f := make([]float32, c.Numel())
	if err := c.CopyData(f, uint(len(f))); err != nil {
		t.Fatal(err)
	}
	out := make([]float64, len(f))
	for i, v := range f {
		out[i] = float64(v)
	}
	return out
}

func scalar(t *testing.T, x *ts.Tensor) float64 {
	t.Helper()
	if s := x.MustSize(); len(s) != 0 {
		t.Fatalf("loss has shape %v, want a scalar", s)
	}
	if x.DType() != gotch.Float {
		t.Fatalf("loss has dtype %v, want float32", x.DType())
	}
	return values(t, x)[0]
}

// grad backpropagates loss and returns x's gradient, flattened.
func grad(t *testing.T, loss, x *ts.Tensor) []float64 {
	t.Helper()
	if err := loss.Backward(); err != nil {
		t.Fatal(err)
	}
	g := x.MustGrad(false)
	defer g.MustDrop()
	return values(t, g)
}

// approx reports |a − b| ≤ tol·max(1, |b|).
func approx(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*max(1, math.Abs(b))
}

func checkClose(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
	for i := range want {
		if !approx(got[i], want[i], tol) {
			t.Errorf("%s[%d] = %.9g, want %.9g", what, i, got[i], want[i])
		}
	}
}

func flatten(x [][]float64) []float64 {
	var out []float64
	for _, r := range x {
		out = append(out, r...)
	}
	return out
}

// f32 rounds every entry to float32, as the tensors hold them, so the
// float64 references see the same inputs.
func f32(x [][]float64) [][]float64 {
	y := make([][]float64, len(x))
	for b := range x {
		y[b] = make([]float64, len(x[b]))
		for j, v := range x[b] {
			y[b][j] = float64(float32(v))
		}
	}
	return y
}

func randn(r *rand.Rand, B, T int, scale float64) [][]float64 {
	x := make([][]float64, B)
	for b := range x {
		x[b] = make([]float64, T)
		for j := range x[b] {
			x[b][j] = scale * r.NormFloat64()
		}
	}
	return x
}

func add(x, y [][]float64) [][]float64 {
	z := make([][]float64, len(x))
	for b := range x {
		z[b] = make([]float64, len(x[b]))
		for j := range x[b] {
			z[b][j] = x[b][j] + y[b][j]
		}
	}
	return z
}

// randMask is a multi-turn-like mask: a prompt gap, then trained segments
// with untrained gaps; every row trains its last position.
func randMask(r *rand.Rand, B, T int) [][]float64 {
	m := make([][]float64, B)
	for b := range m {
		m[b] = make([]float64, T)
		on := true
		for j := 1 + r.IntN(2); j < T; j++ {
			if r.IntN(3) == 0 {
				on = !on
			}
			if on || j == T-1 {
				m[b][j] = 1
			}
		}
	}
	return m
}

// garbage copies x with its untrained positions replaced by junk, NaN and
// Inf included.
func garbage(r *rand.Rand, x, mask [][]float64) [][]float64 {
	junk := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 1e30, -3e4, 7}
	y := make([][]float64, len(x))
	for b := range x {
		y[b] = append([]float64(nil), x[b]...)
		for j, w := range mask[b] {
			if w == 0 {
				y[b][j] = junk[r.IntN(len(junk))]
			}
		}
	}
	return y
}

// refAggWeights gives ∂agg/∂L_bt for each mode (0 where untrained): the
// aggregation is linear, so agg(L) = Σ w·L.
func refAggWeights(mask [][]float64, mode AggMode) [][]float64 {
	B, T := len(mask), len(mask[0])
	N := 0.0
	rows := make([]float64, B)
	for b := range mask {
		for _, w := range mask[b] {
			rows[b] += w
		}
		N += rows[b]
	}
	w := make([][]float64, B)
	for b := range mask {
		w[b] = make([]float64, T)
		for j, m := range mask[b] {
			if m == 0 {
				continue
			}
			switch mode {
			case TokenMean:
				w[b][j] = 1 / (N + 1e-8)
			case SeqMeanTokenSum:
				w[b][j] = 1 / float64(B)
			case SeqMeanTokenMean:
				w[b][j] = 1 / (float64(B) * (rows[b] + 1e-8))
			case SeqMeanTokenSumNorm:
				w[b][j] = 1 / float64(T)
			}
		}
	}
	return w
}

// refAgg is agg_loss by loops.
func refAgg(l, mask [][]float64, mode AggMode) float64 {
	w := refAggWeights(mask, mode)
	s := 0.0
	for b := range l {
		for j := range l[b] {
			if w[b][j] != 0 {
				s += w[b][j] * l[b][j]
			}
		}
	}
	return s
}

// refMaskedMean is Σ x over trained / (count + 1e-8).
func refMaskedMean(x, mask [][]float64) float64 {
	s, n := 0.0, 0.0
	for b := range x {
		for j, w := range mask[b] {
			if w != 0 {
				s += x[b][j]
				n++
			}
		}
	}
	return s / (n + 1e-8)
}

var allModes = []AggMode{TokenMean, SeqMeanTokenSum, SeqMeanTokenMean, SeqMeanTokenSumNorm}

// liveTensors counts gotch tensors not yet dropped.
func liveTensors() int {
	runtime.GC()
	return len(ts.ExistingTensors)
}
