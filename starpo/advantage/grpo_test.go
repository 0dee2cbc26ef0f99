package advantage

import "testing"

func TestGRPOOutcome(t *testing.T) {
	// Scores 2 and −0.5 (row sums, the 0.25 at an untrained position
	// included, as verl sums every position), each its own group:
	// A = s/(1 + 1e-6) on trained positions.
	rewards := [][]float64{{0, 0, 0, 2}, {0, 0.25, 0, -0.75}}
	mask := [][]float64{{0, 1, 1, 1}, {1, 0, 1, 1}}
	adv, ret := GRPOOutcome(rewards, mask)
	a, c := 2/(1+1e-6), -0.5/(1+1e-6)
	want := [][]float64{{0, a, a, a}, {c, 0, c, c}}
	checkMatrix(t, "adv", adv, want, 1e-15)
	checkMatrix(t, "returns", ret, want, 1e-15)
	ret[0][1] = 42
	if adv[0][1] == 42 {
		t.Fatal("returns share memory with advantages")
	}
}
