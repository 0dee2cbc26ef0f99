package advantage

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// Two turns: positions 1–2 (end 2) and 4–5 (end 5), user text at 3,
// padding at 0; the episode's score 1 on the last turn's end. The 9 and 7
// are garbage values at untrained positions.
var (
	biMask    = [][]float64{{0, 1, 1, 0, 1, 1}}
	biRewards = [][]float64{{0, 0, 0, 0, 0, 1}}
	biValues  = [][]float64{{9, 0.2, 0.4, 7, 0.5, 0.6}}
	biEnds    = [][]int{{2, 5}}
)

func TestBiLevelGAEUndiscountedTokens(t *testing.T) {
	// γ = λ = 1, γ_H = 0.5. Turn level, from the last turn:
	//   k=1: δ = 1 + 0.5·0 − 0.6 = 0.4              A1 = 0.4    G1 = 1.0
	//   k=0: δ = 0 + 0.5·0.6 − 0.4 = −0.1           A0 = −0.1 + 0.5·1·0.4 = 0.1    G0 = 0.5
	// Token level (γ = λ = 1: A_t = G_k − V_t within turn k):
	//   t=5 (end): δ = 1.0 − 0.6 = 0.4              A = 0.4
	//   t=4:       δ = 0 + 0.6 − 0.5 = 0.1          A = 0.1 + 0.4 = 0.5
	//   t=2 (end): δ = 0.5 − 0.4 = 0.1              A = 0.1
	//   t=1:       δ = 0 + 0.4 − 0.2 = 0.2          A = 0.2 + 0.1 = 0.3
	// returns = A + V: 0.5, 0.5, 1, 1; untrained positions 0.
	adv, ret := BiLevelGAE(biRewards, biValues, biMask, biEnds, 1, 1, 0.5)
	checkMatrix(t, "adv", adv, [][]float64{{0, 0.3, 0.1, 0, 0.5, 0.4}}, 1e-15)
	checkMatrix(t, "returns", ret, [][]float64{{0, 0.5, 0.5, 0, 1, 1}}, 1e-15)
}

func TestBiLevelGAEDiscounted(t *testing.T) {
	// γ = 0.9, λ = 0.5 (γλ = 0.45), γ_H = 0.8 (γ_H·λ = 0.4).
	//   k=1: δ = 1 + 0.8·0 − 0.6 = 0.4              A1 = 0.4    G1 = 1.0
	//   k=0: δ = 0 + 0.8·0.6 − 0.4 = 0.08           A0 = 0.08 + 0.4·0.4 = 0.24    G0 = 0.64
	//   t=5 (end): δ = 1.0 − 0.6 = 0.4              A = 0.4                          ret 1.0
	//   t=4:       δ = 0 + 0.9·0.6 − 0.5 = 0.04     A = 0.04 + 0.45·0.4 = 0.22       ret 0.72
	//   t=2 (end): δ = 0.64 − 0.4 = 0.24            A = 0.24                         ret 0.64
	//   t=1:       δ = 0 + 0.9·0.4 − 0.2 = 0.16     A = 0.16 + 0.45·0.24 = 0.268     ret 0.468
	adv, ret := BiLevelGAE(biRewards, biValues, biMask, biEnds, 0.9, 0.5, 0.8)
	checkMatrix(t, "adv", adv, [][]float64{{0, 0.268, 0.24, 0, 0.22, 0.4}}, 1e-14)
	checkMatrix(t, "returns", ret, [][]float64{{0, 0.468, 0.64, 0, 0.72, 1.0}}, 1e-14)
}

func TestBiLevelGAETokenRewardsInsideATurn(t *testing.T) {
	// A per-token reward (an in-reward KL penalty) of −0.1 at position 4
	// stays in the token level: γ = λ = 1, γ_H = 1.
	//   k=1: A1 = 1 − 0.6 = 0.4, G1 = 1;  k=0: δ = 0 + 0.6 − 0.4 = 0.2, A0 = 0.6, G0 = 1
	//   t=5: 0.4;  t=4: δ = −0.1 + 0.6 − 0.5 = 0, A = 0.4;  t=2: 1 − 0.4 = 0.6;  t=1: 0.2 + 0.6 = 0.8
	// The turn level reads only the ends' rewards: turn 0's G0 ignores the
	// −0.1 inside turn 1.
	r := [][]float64{{0, 0, 0, 0, -0.1, 1}}
	adv, _ := BiLevelGAE(r, biValues, biMask, biEnds, 1, 1, 1)
	checkMatrix(t, "adv", adv, [][]float64{{0, 0.8, 0.6, 0, 0.4, 0.4}}, 1e-15)
}

// With one turn, bi-level GAE is GAE on the trained positions.
func TestBiLevelGAEOneTurnIsGAE(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 2))
	for range 50 {
		T := 4 + r.IntN(12)
		lo := r.IntN(T - 1)
		hi := lo + 1 + r.IntN(T-lo-1) // trained [lo, hi], untrained around
		mask, rewards, values := make([]float64, T), make([]float64, T), make([]float64, T)
		for j := range T {
			values[j] = r.NormFloat64()
			if j >= lo && j <= hi {
				mask[j], rewards[j] = 1, 0.1*r.NormFloat64() // an in-reward KL penalty on every token
			}
		}
		rewards[hi] += r.NormFloat64() // the score
		gamma, lambda, high := r.Float64(), r.Float64(), r.Float64()
		m := [][]float64{mask}
		adv, ret := BiLevelGAE([][]float64{rewards}, [][]float64{values}, m, [][]int{{hi}}, gamma, lambda, high)
		wantAdv, wantRet := GAE([][]float64{rewards}, [][]float64{values}, m, gamma, lambda)
		for j := range T {
			if mask[j] == 0 {
				wantAdv[0][j], wantRet[0][j] = 0, 0 // GAE's untrained positions are not trained on
			}
		}
		checkMatrix(t, "adv", adv, wantAdv, 1e-12)
		checkMatrix(t, "returns", ret, wantRet, 1e-12)
	}
}

// refRAGENBiLevel transcribes RAGEN's compute_bi_level_gae_advantage_return
// (before masked_whiten) with its loops: the turn ends are the positions
// of non-zero reward, the token level walks the trained positions.
func refRAGENBiLevel(rewards, values, mask []float64, gamma, lam, highGamma float64) (adv, ret []float64) {
	T := len(rewards)
	adv, ret = make([]float64, T), make([]float64, T)
	updated := slices.Clone(rewards)
	var eos, valid []int
	for t := range T {
		if rewards[t] != 0 {
			eos = append(eos, t)
		}
		if mask[t] != 0 {
			valid = append(valid, t)
		}
	}
	last := 0.0
	for i := len(eos) - 1; i >= 0; i-- {
		next := 0.0
		if i < len(eos)-1 {
			next = values[eos[i+1]]
		}
		delta := updated[eos[i]] + highGamma*next - values[eos[i]]
		last = delta + highGamma*lam*last
		adv[eos[i]] = last
	}
	for _, p := range eos {
		ret[p] = adv[p] + values[p]
		updated[p] = adv[p] + values[p]
	}
	last = 0
	for i := len(valid) - 1; i >= 0; i-- {
		p, next := valid[i], 0.0
		if !slices.Contains(eos, p) {
			next = values[valid[i+1]]
		} else {
			last = 0
		}
		delta := updated[p] + gamma*next - values[p]
		last = delta + gamma*lam*last
		adv[p], ret[p] = last, last+values[p]
	}
	return adv, ret
}

// Given RAGEN's turn ends (the non-zero rewards), BiLevelGAE is RAGEN's,
// on random multi-turn rows whose rewards sit on trained positions.
func TestBiLevelGAEMatchesRAGEN(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 1))
	for range 200 {
		B, T := 3, 16
		mask := multiTurnMask(r, B, T)
		values := randMatrix(r, B, T)
		rewards, ends := make([][]float64, B), make([][]int, B)
		for b := range B {
			rewards[b] = make([]float64, T)
			for j := range T {
				// Some trained positions carry a reward; the last always
				// does (RAGEN indexes past its list otherwise).
				if mask[b][j] != 0 && (r.IntN(4) == 0 || j == T-1) {
					rewards[b][j] = r.NormFloat64()
					ends[b] = append(ends[b], j)
				}
			}
		}
		gamma, lambda, high := r.Float64(), r.Float64(), r.Float64()
		adv, ret := BiLevelGAE(rewards, values, mask, ends, gamma, lambda, high)
		for b := range B {
			wantAdv, wantRet := refRAGENBiLevel(rewards[b], values[b], mask[b], gamma, lambda, high)
			checkRow(t, "adv", adv[b], wantAdv, 1e-12)
			checkRow(t, "returns", ret[b], wantRet, 1e-12)
		}
	}
}

func TestBiLevelGAEIgnoresUntrainedPositions(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	mask := multiTurnMask(r, 4, 16)
	values, rewards := randMatrix(r, 4, 16), randMatrix(r, 4, 16)
	ends := make([][]int, 4)
	for b := range mask {
		for j := range mask[b] { // each trained segment's last position ends a turn
			if mask[b][j] != 0 && (j+1 == len(mask[b]) || mask[b][j+1] == 0) {
				ends[b] = append(ends[b], j)
			}
		}
	}
	adv, ret := BiLevelGAE(rewards, values, mask, ends, 0.9, 0.95, 0.95)
	adv2, ret2 := BiLevelGAE(withGarbage(r, rewards, mask), withGarbage(r, values, mask), mask, ends, 0.9, 0.95, 0.95)
	if !identical(adv, adv2) || !identical(ret, ret2) {
		t.Fatal("garbage values or rewards at untrained positions changed bi-level GAE")
	}
	for b := range mask {
		for j, m := range mask[b] {
			if m == 0 && (adv[b][j] != 0 || ret[b][j] != 0) {
				t.Fatalf("untrained position %d of row %d: adv %v, return %v", j, b, adv[b][j], ret[b][j])
			}
		}
	}
}

func TestBiLevelGAEBadEndsPanic(t *testing.T) {
	for _, ends := range [][]int{{3, 5}, {5, 2}, {2, 6}, {-1}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("no panic for turn ends %v", ends)
				}
			}()
			BiLevelGAE(biRewards, biValues, biMask, [][]int{ends}, 1, 1, 1)
		}()
	}
}
