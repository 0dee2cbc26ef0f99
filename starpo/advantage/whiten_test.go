package advantage

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestWhitenMasked(t *testing.T) {
	// Trained values 1, 2, 3, 4: mean 2.5, unbiased variance
	// (2.25 + 0.25 + 0.25 + 2.25)/3 = 5/3; the 99 and 0 are untrained.
	x := [][]float64{{1, 2, 99}, {3, 0, 4}}
	mask := [][]float64{{1, 1, 0}, {1, 0, 1}}
	got, err := WhitenMasked(x, mask)
	if err != nil {
		t.Fatal(err)
	}
	s := math.Sqrt(5.0/3 + 1e-8)
	checkMatrix(t, "whitened", got, [][]float64{{-1.5 / s, -0.5 / s, 0}, {0.5 / s, 0, 1.5 / s}}, 1e-15)
}

func TestWhitenMaskedIgnoresMaskedValues(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	mask := multiTurnMask(r, 4, 16)
	x := randMatrix(r, 4, 16)
	a, err := WhitenMasked(x, mask)
	if err != nil {
		t.Fatal(err)
	}
	b, err := WhitenMasked(withGarbage(r, x, mask), mask)
	if err != nil {
		t.Fatal(err)
	}
	if !identical(a, b) {
		t.Fatal("garbage at untrained positions changed the whitened values")
	}
}

func TestWhitenMaskedNeedsTwoPositions(t *testing.T) {
	for _, mask := range [][][]float64{{{0, 0}}, {{0, 1}}} {
		_, err := WhitenMasked([][]float64{{1, 2}}, mask)
		if err == nil || !strings.Contains(err.Error(), "at least 2") {
			t.Errorf("mask %v: err = %v, want one about at least 2 positions", mask, err)
		}
	}
}
