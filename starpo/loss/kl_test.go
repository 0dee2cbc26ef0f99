package loss

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// refKL is one token's estimate.
func refKL(lp, ref float64, kind KLType) float64 {
	d := lp - ref
	switch kind {
	case KLAbs:
		return math.Abs(d)
	case KLMSE, "k2":
		return 0.5 * d * d
	case KLLowVar, "k3":
		e := min(max(-d, -20), 20)
		return min(max(math.Exp(e)-e-1, -10), 10)
	}
	return d
}

func TestKLHand(t *testing.T) {
	// logp (−1, −2, 0), ref (−1.5, −1, −100): d = (0.5, −1, 100), e = −d.
	//   k1   (0.5, −1, 100)
	//   abs  (0.5, 1, 100)
	//   mse  (0.125, 0.5, 5000)
	//   k3   (e^−0.5 − 0.5, e − 2, clamp(e^−20 + 19) = 10)
	lp := tensor(t, [][]float64{{-1, -2, 0}})
	ref := tensor(t, [][]float64{{-1.5, -1, -100}})
	for _, tc := range []struct {
		kinds []KLType
		want  []float64
	}{
		{[]KLType{KLK1, "k1"}, []float64{0.5, -1, 100}},
		{[]KLType{KLAbs}, []float64{0.5, 1, 100}},
		{[]KLType{KLMSE, "k2"}, []float64{0.125, 0.5, 5000}},
		{[]KLType{KLLowVar, "k3"}, []float64{math.Exp(-0.5) - 0.5, math.E - 2, 10}},
	} {
		for _, k := range tc.kinds {
			kl, err := KL(lp, ref, k)
			if err != nil {
				t.Fatal(err)
			}
			checkClose(t, string(k), values(t, kl), tc.want, 1e-6)
			kl.MustDrop()
		}
	}
}

func TestKLLowVarGradientFinite(t *testing.T) {
	// ref − logp = 200 would overflow exp in fp32; clamped, the estimate
	// saturates at 10 and passes a zero gradient, not NaN.
	lp := leaf(t, [][]float64{{-200, -1}})
	loss, v, err := KLLoss(lp, tensor(t, [][]float64{{0, -1.5}}), tensor(t, [][]float64{{1, 1}}),
		KLOptions{Type: KLLowVar, Agg: TokenMean})
	if err != nil {
		t.Fatal(err)
	}
	defer loss.MustDrop()
	// token 2: e = −0.5, k3 = e^−0.5 − 0.5; ∂k3/∂logp = 1 − e^e.
	want := (10 + math.Exp(-0.5) - 0.5) / 2
	if !approx(v, want, 1e-6) {
		t.Errorf("kl loss = %v, want %v", v, want)
	}
	checkClose(t, "∂loss/∂logp", grad(t, loss, lp), []float64{0, (1 - math.Exp(-0.5)) / 2}, 1e-6)
}

func TestKLLossMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	B, T := 3, 8
	mask := randMask(r, B, T)
	lp := f32(randn(r, B, T, 1))
	ref := f32(add(lp, randn(r, B, T, 0.5)))
	for _, kind := range []KLType{KLK1, KLAbs, KLMSE, KLLowVar} {
		for _, mode := range allModes {
			loss, v, err := KLLoss(tensor(t, garbage(r, lp, mask)), tensor(t, garbage(r, ref, mask)), tensor(t, mask),
				KLOptions{Type: kind, Agg: mode})
			if err != nil {
				t.Fatal(err)
			}
			per := make([][]float64, B)
			for b := range B {
				per[b] = make([]float64, T)
				for j := range T {
					per[b][j] = refKL(lp[b][j], ref[b][j], kind)
				}
			}
			want := refAgg(per, mask, mode)
			if !approx(v, want, 1e-5) || !approx(scalar(t, loss), want, 1e-5) {
				t.Errorf("%s %s: kl loss = %v, want %v", kind, mode, v, want)
			}
			loss.MustDrop()
		}
	}
}

func TestKLErrors(t *testing.T) {
	x := tensor(t, [][]float64{{0}})
	if _, err := KL(x, x, "full"); err == nil || !strings.Contains(err.Error(), `"full"`) {
		t.Errorf("unknown kind: err = %v", err)
	}
	if _, _, err := KLLoss(x, x, x, KLOptions{Type: "k4", Agg: TokenMean}); err == nil || !strings.Contains(err.Error(),
		`"k4"`) {
		t.Errorf("unknown kind: err = %v", err)
	}
	if _, _, err := KLLoss(x, x, x, KLOptions{Type: KLK1, Agg: "mean"}); err == nil {
		t.Error("unknown mode accepted")
	}
}
