package advantage

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// near reports |a − b| ≤ tol·max(1, |b|): absolute near 0, relative
// elsewhere.
func near(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*max(1, math.Abs(b))
}

func checkRow(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
	for i := range want {
		if !near(got[i], want[i], tol) {
			t.Errorf("%s[%d] = %.15g, want %.15g", what, i, got[i], want[i])
		}
	}
}

func checkMatrix(t *testing.T, what string, got, want [][]float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s has %d rows, want %d", what, len(got), len(want))
	}
	for b := range want {
		checkRow(t, fmt.Sprintf("%s[%d]", what, b), got[b], want[b], tol)
	}
}

// identical reports bitwise equality (NaN never appears in these outputs).
func identical(a, b [][]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
		for j := range a[i] {
			if math.Float64bits(a[i][j]) != math.Float64bits(b[i][j]) {
				return false
			}
		}
	}
	return true
}

// multiTurnMask is a random [B][T] mask shaped like a multi-turn trajectory:
// a left-padding/prompt gap, then assistant segments separated by
// untrained user turns.
func multiTurnMask(r *rand.Rand, B, T int) [][]float64 {
	m := make([][]float64, B)
	for b := range m {
		m[b] = make([]float64, T)
		on := false
		for t := 2 + r.IntN(3); t < T; t++ {
			if r.IntN(4) == 0 {
				on = !on
			}
			if on || t == T-1 {
				m[b][t] = 1
			}
		}
	}
	return m
}

func randMatrix(r *rand.Rand, B, T int) [][]float64 {
	x := make([][]float64, B)
	for b := range x {
		x[b] = make([]float64, T)
		for t := range x[b] {
			x[b][t] = r.NormFloat64()
		}
	}
	return x
}

// withGarbage copies x with untrained positions overwritten by junk,
// non-finite values included.
func withGarbage(r *rand.Rand, x, mask [][]float64) [][]float64 {
	junk := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 1e30, -7}
	y := make([][]float64, len(x))
	for b := range x {
		y[b] = append([]float64(nil), x[b]...)
		for t, w := range mask[b] {
			if w == 0 {
				y[b][t] = junk[r.IntN(len(junk))]
			}
		}
	}
	return y
}
