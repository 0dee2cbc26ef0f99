package loss

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// refPolicy is the clipped policy loss by loops, with ∂loss/∂logp.
func refPolicy(lp, old, adv, mask [][]float64, lo, hi, c float64, mode AggMode) (loss float64, m PolicyMetrics,
	dlp [][]float64) {
	w := refAggWeights(mask, mode)
	B, T := len(lp), len(lp[0])
	pg := make([][]float64, B)
	dlp = make([][]float64, B)
	var kl, absLR, clip, lower [][]float64
	for b := range B {
		pg[b], dlp[b] = make([]float64, T), make([]float64, T)
		kl, clip, lower = append(kl, make([]float64, T)), append(clip, make([]float64, T)), append(lower,
			make([]float64, T))
		absLR = append(absLR, make([]float64, T))
		for j := range T {
			if mask[b][j] == 0 {
				continue
			}
			a, d := adv[b][j], lp[b][j]-old[b][j]
			lr := min(max(d, -20), 20)
			rho := math.Exp(lr)
			pg1, pg2 := -a*rho, -a*min(max(rho, 1-lo), 1+hi)
			// derivatives of pg1 and pg2 wrt logp
			d1 := -a * rho
			if math.Abs(d) >= 20 {
				d1 = 0
			}
			d2 := d1
			if rho < 1-lo || rho > 1+hi {
				d2 = 0
			}
			c1, dc1 := max(pg1, pg2), d1
			switch {
			case pg2 > pg1:
				dc1, clip[b][j] = d2, 1
			case pg2 == pg1:
				dc1 = (d1 + d2) / 2
			}
			p, dp := c1, dc1
			if a < 0 {
				if c1 > -a*c {
					p, dp, lower[b][j] = -a*c, 0, 1
				}
			}
			pg[b][j], dlp[b][j] = p, dp*w[b][j]
			kl[b][j], absLR[b][j] = -lr, math.Abs(lr)
		}
	}
	m = PolicyMetrics{
		PGLoss: refAgg(pg, mask, mode), PGClipFrac: refMaskedMean(clip, mask),
		PPOKL: refMaskedMean(kl, mask), PGClipFracLower: refMaskedMean(lower, mask),
		AbsLogRatio: refMaskedMean(absLR, mask),
	}
	return m.PGLoss, m, dlp
}

func checkMetrics(t *testing.T, what string, got, want PolicyMetrics, tol float64) {
	t.Helper()
	checkClose(t, what+" metrics",
		[]float64{got.PGLoss, got.PGClipFrac, got.PPOKL, got.PGClipFracLower, got.AbsLogRatio},
		[]float64{want.PGLoss, want.PGClipFrac, want.PPOKL, want.PGClipFracLower, want.AbsLogRatio}, tol)
}

func TestPolicyLossHand(t *testing.T) {
	// Ratios and advantages, ε_low 0.2, ε_high 0.28, c 3:
	//   ρ 1.5, A  1: pg1 −1.5,  pg2 −1.28 → −1.28 (clipped; ∂ = 0)
	//   ρ 1.1, A  1: pg1 −1.1,  pg2 −1.1  → −1.1  (∂ = −Aρ = −1.1)
	//   ρ 4,   A −1: pg1  4,    pg2  1.28 → 4, dual clip min(4, 3) = 3 (∂ = 0)
	//   ρ 0.5, A −2: pg1  1,    pg2  1.6  → 1.6 (clipped; ∂ = 0)
	//   untrained: logp NaN.
	// token-mean (−1.28 − 1.1 + 3 + 1.6)/4 = 0.555; clipfrac 2/4 (rows 1
	// and 4), lower 1/4; ppo_kl = −ln(1.5·1.1·4·0.5)/4 = −ln(3.3)/4;
	// abs_log_ratio = (ln 1.5 + ln 1.1 + ln 4 + ln 2)/4 = ln(13.2)/4;
	// ∂loss/∂logp = (0, −1.1/4, 0, 0, 0).
	old := []float64{-1, -2, -0.5, -3, -1}
	lp := make([]float64, 5)
	for i, rho := range []float64{1.5, 1.1, 4, 0.5} {
		lp[i] = old[i] + math.Log(rho)
	}
	lp[4] = math.NaN()
	lpT := leaf(t, [][]float64{lp})
	loss, m, err := PolicyLoss(lpT, tensor(t, [][]float64{old}), tensor(t, [][]float64{{1, 1, -1, -2, 5}}),
		tensor(t, [][]float64{{1, 1, 1, 1, 0}}), PolicyOptions{ClipLow: 0.2, ClipHigh: 0.28, ClipC: 3, Agg: TokenMean})
	if err != nil {
		t.Fatal(err)
	}
	defer loss.MustDrop()
	checkMetrics(t, "hand", m, PolicyMetrics{PGLoss: 0.555, PGClipFrac: 0.5, PPOKL: -math.Log(3.3) / 4,
		PGClipFracLower: 0.25, AbsLogRatio: math.Log(13.2) / 4}, 1e-6)
	if v := scalar(t, loss); !approx(v, 0.555, 1e-6) {
		t.Errorf("loss = %v, want 0.555", v)
	}
	checkClose(t, "∂loss/∂logp", grad(t, loss, lpT), []float64{0, -1.1 / 4, 0, 0, 0}, 1e-6)
}

func TestPolicyLossDualClip(t *testing.T) {
	for _, tc := range []struct {
		name          string
		rho, a        float64
		loss, lower   float64
		dlogp, clipfr float64
	}{
		{"A<0, ρ 5: dual clip bounds at −A·c", 5, -1, 3, 1, 0, 0},
		{"A<0, ρ 2: between 1+ε and c, inactive", 2, -1, 2, 0, 2, 0},
		{"A>0, ρ 5: no dual clip for A ≥ 0", 5, 1, -1.28, 0, 0, 1},
	} {
		lp := leaf(t, [][]float64{{math.Log(tc.rho)}})
		loss, m, err := PolicyLoss(lp, tensor(t, [][]float64{{0}}), tensor(t, [][]float64{{tc.a}}), tensor(t,
			[][]float64{{1}}), PolicyOptions{ClipLow: 0.2, ClipHigh: 0.28, ClipC: 3, Agg: TokenMean})
		if err != nil {
			t.Fatal(err)
		}
		checkClose(t, tc.name, []float64{scalar(t, loss), m.PGClipFracLower, m.PGClipFrac}, []float64{tc.loss, tc.lower,
			tc.clipfr}, 1e-6)
		checkClose(t, tc.name+" ∂", grad(t, loss, lp), []float64{tc.dlogp}, 1e-6)
		loss.MustDrop()
	}
}

func TestPolicyLossMatchesReference(t *testing.T) {
	// Random ratios wide enough to reach both clips, the dual clip and the
	// ±20 clamp; loss, metrics and autograd's ∂loss/∂logp against the loop
	// reference and its analytic derivative, in every mode.
	for seed := range uint64(4) {
		r := rand.New(rand.NewPCG(seed, 3))
		B, T := 3, 10
		mask := randMask(r, B, T)
		old := f32(randn(r, B, T, 1))
		lp := f32(add(old, randn(r, B, T, 0.6)))
		lp[0][T-1] = old[0][T-1] + 25 // saturates the clamp
		adv := f32(randn(r, B, T, 1))
		for _, mode := range allModes {
			lpT := leaf(t, lp)
			loss, m, err := PolicyLoss(lpT, tensor(t, old), tensor(t, adv), tensor(t, mask), PolicyOptions{ClipLow: 0.2,
				ClipHigh: 0.28, ClipC: 3, Agg: mode})
			if err != nil {
				t.Fatal(err)
			}
			want, wm, dlp := refPolicy(lp, old, adv, mask, 0.2, 0.28, 3, mode)
			if v := scalar(t, loss); !approx(v, want, 1e-5) {
				t.Errorf("seed %d %s: loss = %v, want %v", seed, mode, v, want)
			}
			checkMetrics(t, string(mode), m, wm, 1e-5)
			checkClose(t, string(mode)+" ∂loss/∂logp", grad(t, loss, lpT), flatten(dlp), 1e-5)
			loss.MustDrop()
		}
	}
}

func TestPolicyLossMaskingInvariance(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	B, T := 3, 12
	mask := randMask(r, B, T)
	old := randn(r, B, T, 1)
	lp := add(old, randn(r, B, T, 0.5))
	adv := randn(r, B, T, 1)
	run := func(lp, old, adv [][]float64) (float64, PolicyMetrics, []float64) {
		lpT := leaf(t, lp)
		loss, m, err := PolicyLoss(lpT, tensor(t, old), tensor(t, adv), tensor(t, mask), PolicyOptions{ClipLow: 0.2,
			ClipHigh: 0.28, ClipC: 3, Agg: TokenMean})
		if err != nil {
			t.Fatal(err)
		}
		defer loss.MustDrop()
		return scalar(t, loss), m, grad(t, loss, lpT)
	}
	l1, m1, g1 := run(lp, old, adv)
	l2, m2, g2 := run(garbage(r, lp, mask), garbage(r, old, mask), garbage(r, adv, mask))
	if l1 != l2 || m1 != m2 {
		t.Errorf("garbage at untrained positions changed the loss: %v %+v → %v %+v", l1, m1, l2, m2)
	}
	for i := range g1 {
		if g1[i] != g2[i] || (flatten(mask)[i] == 0 && g1[i] != 0) {
			t.Fatalf("∂loss/∂logp[%d] = %v clean, %v with garbage", i, g1[i], g2[i])
		}
	}
}

func TestPolicyLossErrors(t *testing.T) {
	x := tensor(t, [][]float64{{0, 0}})
	for _, tc := range []struct {
		lo, hi, c float64
		mode      AggMode
		want      string
	}{
		{1, 0.28, 3, TokenMean, "clip_ratio_low 1"},
		{-0.1, 0.28, 3, TokenMean, "clip_ratio_low -0.1"},
		{0.2, math.NaN(), 3, TokenMean, "clip_ratio_high NaN"},
		{0.2, 0.28, 1, TokenMean, "clip_ratio_c 1"},
		{0.2, 0.28, 3, "sum", `"sum"`},
	} {
		if _, _, err := PolicyLoss(x, x, x, x, PolicyOptions{ClipLow: tc.lo, ClipHigh: tc.hi, ClipC: tc.c,
			Agg: tc.mode}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("err = %v, want one mentioning %q", err, tc.want)
		}
	}
	_, _, err := PolicyLoss(x, tensor(t, [][]float64{{0, 0, 0}}), x, x, PolicyOptions{ClipLow: 0.2, ClipHigh: 0.28,
		ClipC: 3, Agg: TokenMean})
	if err == nil || !strings.Contains(err.Error(), "old_log_prob has shape [1 3], mask [1 2]") {
		t.Errorf("shape mismatch: err = %v", err)
	}
}
