package advantage

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestGAETerminalRewardUndiscounted(t *testing.T) {
	// γ = λ = 1, one reward R = 1 at the end: A_t = R − V_t with V masked
	// to 0 at the untrained position 0 (its 9 is garbage), so returns = R.
	mask := [][]float64{{0, 1, 1, 1}}
	rewards := [][]float64{{0, 0, 0, 1}}
	values := [][]float64{{9, 0.5, 0.2, -0.1}}
	adv, ret := GAE(rewards, values, mask, 1, 1)
	checkMatrix(t, "adv", adv, [][]float64{{1, 0.5, 0.8, 1.1}}, 1e-15)
	checkMatrix(t, "returns", ret, [][]float64{{1, 1, 1, 1}}, 1e-15)
}

func TestGAEDiscounted(t *testing.T) {
	// γ = 0.9, λ = 0.95 (γλ = 0.855), r = (0, 0, 1), V = (0.5, 0.4, 0.3):
	//   δ2 = 1 + 0.9·0 − 0.3 = 0.7              A2 = 0.7
	//   δ1 = 0 + 0.9·0.3 − 0.4 = −0.13          A1 = −0.13 + 0.855·0.7 = 0.4685
	//   δ0 = 0 + 0.9·0.4 − 0.5 = −0.14          A0 = −0.14 + 0.855·0.4685 = 0.2605675
	// returns = A + V = (0.7605675, 0.8685, 1.0).
	mask := [][]float64{{1, 1, 1}}
	adv, ret := GAE([][]float64{{0, 0, 1}}, [][]float64{{0.5, 0.4, 0.3}}, mask, 0.9, 0.95)
	checkMatrix(t, "adv", adv, [][]float64{{0.2605675, 0.4685, 0.7}}, 1e-14)
	checkMatrix(t, "returns", ret, [][]float64{{0.7605675, 0.8685, 1.0}}, 1e-14)
}

// gaeClosedForm is the non-recursive A_t = Σ_l (γλ)^l δ_{t+l}, an
// independent reference for the recursion.
func gaeClosedForm(r, v, m []float64, gamma, lambda float64) []float64 {
	T := len(r)
	V := func(t int) float64 {
		if t >= T || m[t] == 0 {
			return 0
		}
		return v[t]
	}
	a := make([]float64, T)
	for t := range T {
		for l := 0; t+l < T; l++ {
			delta := r[t+l] + gamma*V(t+l+1) - V(t+l)
			a[t] += math.Pow(gamma*lambda, float64(l)) * delta
		}
	}
	return a
}

func TestGAEMatchesClosedForm(t *testing.T) {
	for seed := range uint64(5) {
		r := rand.New(rand.NewPCG(seed, 1))
		B, T := 3, 12
		mask := multiTurnMask(r, B, T)
		rewards, values := randMatrix(r, B, T), randMatrix(r, B, T)
		gamma, lambda := 0.5+0.5*r.Float64(), 0.5+0.5*r.Float64()
		adv, ret := GAE(rewards, values, mask, gamma, lambda)
		for b := range B {
			want := gaeClosedForm(rewards[b], values[b], mask[b], gamma, lambda)
			checkRow(t, "adv", adv[b], want, 1e-12)
			for j := range T {
				v := values[b][j] * mask[b][j]
				if !near(ret[b][j], adv[b][j]+v, 1e-15) {
					t.Errorf("seed %d: returns[%d][%d] = %v, want A + V = %v", seed, b, j, ret[b][j], adv[b][j]+v)
				}
			}
		}
	}
}

func TestGAEIgnoresMaskedValues(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	mask := multiTurnMask(r, 4, 16)
	rewards, values := randMatrix(r, 4, 16), randMatrix(r, 4, 16)
	adv, ret := GAE(rewards, values, mask, 1, 1)
	adv2, ret2 := GAE(rewards, withGarbage(r, values, mask), mask, 1, 1)
	if !identical(adv, adv2) || !identical(ret, ret2) {
		t.Fatal("garbage values at untrained positions changed GAE")
	}
}

func TestGAERewardsAreNotMasked(t *testing.T) {
	// verl semantics: a reward at an untrained position (here position 2,
	// a user turn) flows back into the trained positions before it.
	mask := [][]float64{{1, 1, 0, 1}}
	values := [][]float64{{0, 0, 0, 0}}
	adv, _ := GAE([][]float64{{0, 0, 5, 1}}, values, mask, 1, 1)
	checkMatrix(t, "adv", adv, [][]float64{{6, 6, 6, 1}}, 0)
}

func TestGAEShapeMismatchPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic for a values row of the wrong length")
		}
	}()
	GAE([][]float64{{0, 1}}, [][]float64{{0}}, [][]float64{{1, 1}}, 1, 1)
}
