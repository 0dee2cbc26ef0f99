package model

import (
	"testing"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"
)

// A single row takes the matrix-vector path; it equals the matrix product
// (to fp32 rounding), with and without a bias, and keeps the leading shape.
func TestLinearSingleRowMatchesMatrixProduct(t *testing.T) {
	w := must(ts.Randn([]int64{5, 7}, gotch.Float, gotch.CPU))
	b := must(ts.Randn([]int64{5}, gotch.Float, gotch.CPU))
	x := must(ts.Randn([]int64{1, 1, 7}, gotch.Float, gotch.CPU))
	defer dropAll(w, b, x)
	for _, l := range []Linear{{Weight: w, Bias: b}, {Weight: w}} {
		bias := l.Bias
		if bias == nil {
			bias = ts.None
		}
		want := must(ts.Linear(x, w, bias))
		got := l.Forward(x)
		if s := size(got); len(s) != 3 || s[0] != 1 || s[1] != 1 || s[2] != 5 {
			t.Fatalf("shape %v, want [1 1 5]", s)
		}
		if d := maxAbsDiff(Float32s(got), Float32s(want)); d > 1e-6 {
			t.Fatalf("bias %v: differs from the matrix product by %g", l.Bias != nil, d)
		}
		dropAll(want, got)
	}
}
