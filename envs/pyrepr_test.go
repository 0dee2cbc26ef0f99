package envs

import (
	"math"
	"testing"
)

func TestPyFloat(t *testing.T) {
	tests := []struct {
		x    float64
		want string
	}{
		{0, "0.0"}, {math.Copysign(0, -1), "-0.0"}, {1, "1.0"}, {-1, "-1.0"}, {0.1, "0.1"},
		{10.9, "10.9"}, {-0.30000000000000004, "-0.30000000000000004"}, {0.9, "0.9"}, {-1.1, "-1.1"},
		{123.456, "123.456"}, {1e15, "1000000000000000.0"}, {1e16, "1e+16"}, {1.5e16, "1.5e+16"},
		{1e-4, "0.0001"}, {1.5e-4, "0.00015"}, {1e-5, "1e-05"}, {-2.5e-7, "-2.5e-07"},
		{1e100, "1e+100"}, {5e-324, "5e-324"}, {math.MaxFloat64, "1.7976931348623157e+308"},
		{math.Inf(1), "inf"}, {math.Inf(-1), "-inf"}, {math.NaN(), "nan"},
	}
	for _, tt := range tests {
		if got := PyFloat(tt.x); got != tt.want {
			t.Errorf("PyFloat(%v) = %q, want %q", tt.x, got, tt.want)
		}
	}
}

func TestPyFloatSokobanSums(t *testing.T) {
	// Rewards added at run time round as Python's do.
	step, box, bonus := -0.1, 1.0, 10.0
	if got := PyFloat(step + box + bonus); got != "10.9" {
		t.Errorf("-0.1 + 1 + 10 prints %s, want 10.9", got)
	}
	if got := PyFloat(step + step + step); got != "-0.30000000000000004" {
		t.Errorf("3 × -0.1 prints %s", got)
	}
}
