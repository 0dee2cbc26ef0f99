package model

import (
	"math"
	"testing"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"

	"github.com/ragen-go/ragen/internal/torchrt"
)

// The bf16 tolerances of an autocast training pass against fp32 on the
// tiny model (weights of std 0.2, a loss Σ a·logp + Σ b·H with random a, b,
// so the gradients are sums of cancelling terms): bf16 keeps 8 bits of
// mantissa (a relative step of 2⁻⁸ ≈ 4e-3), and a 2-layer forward and
// backward compound several roundings. Observed: log-probs 4e-3, gradients
// ≤ 5e-2 in L2 and ≤ 8e-2 of the largest entry (tied embeddings).
const (
	autocastLogpTol    = 2e-2   // log-probabilities and entropies, of the largest entry
	autocastGradL2Tol  = 8e-2   // each weight's gradient, ‖g − g₃₂‖ / ‖g₃₂‖
	autocastGradMaxTol = 1.2e-1 // each weight's gradient, max|g − g₃₂| / max|g₃₂|
)

// relDiff is max|a−b| over max|b|.
func relDiff(a, b []float32) float64 {
	scale := 0.0
	for _, v := range b {
		scale = math.Max(scale, math.Abs(float64(v)))
	}
	return maxAbsDiff(a, b) / math.Max(scale, 1e-30)
}

// relL2 is ‖a−b‖ over ‖b‖.
func relL2(a, b []float32) float64 {
	var num, den float64
	for i := range b {
		num += math.Pow(float64(a[i])-float64(b[i]), 2)
		den += math.Pow(float64(b[i]), 2)
	}
	return math.Sqrt(num / math.Max(den, 1e-60))
}

// A training pass (ScoreForTraining and its Backward, the actor update's
// path) through a bf16 autocast copy computes in bf16, and leaves fp32
// gradients on the fp32 master weights that equal the fp32 pass's within
// the stated tolerances; the copy's own weights hold no gradient.
func TestAutocastTrainingPassMatchesFP32(t *testing.T) {
	for _, tied := range []bool{true, false} {
		dir, _ := writeTiny(t, tied, 0)
		m := loadTiny(t, dir)
		if err := SetTrainable(m.Params(), true); err != nil {
			t.Fatal(err)
		}
		ids, mask, L := batch(testSeqs)
		defer dropAll(ids, mask)
		B := int64(len(testSeqs))
		torchrt.ManualSeed(11)
		a := must(ts.Randn([]int64{B, int64(L - 1)}, gotch.Float, gotch.CPU))
		b := must(ts.Randn([]int64{B, int64(L - 1)}, gotch.Float, gotch.CPU))
		defer dropAll(a, b)
		pass := func(net *CausalLM) (logp, ent []float32) {
			sc, err := net.ScoreForTraining(ids, mask, nil, 5)
			if err != nil {
				t.Fatal(err)
			}
			defer sc.Drop()
			var s scope
			loss := s.Op(s.Op(s.Op(sc.LogProbs.Mul(a, false)).Sum(gotch.Float, false)).Add(s.Op(s.Op(sc.Entropy.Mul(b, false)).Sum(gotch.Float, false)), false))
			check(loss.Backward())
			s.Drop()
			if err := sc.Backward(); err != nil {
				t.Fatal(err)
			}
			return Float32s(sc.LogProbs), Float32s(sc.Entropy)
		}
		wantLP, wantH := pass(m)
		want := paramGrads(t, m)

		cp, err := AutocastCausalLM(m, gotch.BFloat16)
		if err != nil {
			t.Fatal(err)
		}
		if cp.DType != gotch.BFloat16 || cp.Layers[0].MLP.Up.Weight.DType() != gotch.BFloat16 || cp.LMHead.DType() != gotch.BFloat16 {
			t.Fatalf("tied=%v: the autocast copy is not bf16", tied)
		}
		if tied && cp.LMHead != cp.Embed {
			t.Fatalf("the tied copy has a head apart from its embedding")
		}
		gotLP, gotH := pass(cp)
		cp.Drop()
		for _, p := range m.Params() {
			g := gradOrNil(p.T)
			if g == nil || g.DType() != gotch.Float {
				t.Fatalf("tied=%v: master %s has no fp32 gradient", tied, p.Name)
			}
			g.MustDrop()
		}
		got := paramGrads(t, m)
		dLP, dH := relDiff(gotLP, wantLP), relDiff(gotH, wantH)
		if dLP > autocastLogpTol || dH > autocastLogpTol {
			t.Fatalf("tied=%v: bf16 log-probs differ by %.3g, entropies by %.3g (relative; tolerance %g)", tied, dLP, dH, autocastLogpTol)
		}
		if dLP == 0 {
			t.Fatalf("tied=%v: bf16 log-probs equal fp32's bit for bit: the pass did not run in bf16", tied)
		}
		worstMax, worstL2 := 0.0, 0.0
		for name, w := range want {
			dMax, dL2 := relDiff(got[name], w), relL2(got[name], w)
			worstMax, worstL2 = math.Max(worstMax, dMax), math.Max(worstL2, dL2)
			if dL2 > autocastGradL2Tol || dMax > autocastGradMaxTol {
				t.Errorf("tied=%v: %s gradient differs by %.3g in L2 and %.3g of its largest entry (tolerances %g, %g)", tied, name, dL2, dMax, autocastGradL2Tol, autocastGradMaxTol)
			}
		}
		t.Logf("tied=%v: bf16 vs fp32: log-probs %.2g, entropies %.2g, gradients ≤ %.2g in L2, ≤ %.2g of the largest entry", tied, dLP, dH, worstL2, worstMax)
	}
}

// An autocast copy of a model not held in fp32 is refused, naming the
// dtype: there would be no fp32 master to step.
func TestAutocastNeedsFP32Masters(t *testing.T) {
	dir, _ := writeTiny(t, false, 0)
	m, err := LoadCausalLM(dir, Options{Device: gotch.CPU, DType: gotch.BFloat16})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Drop()
	if _, err := AutocastCausalLM(m, gotch.BFloat16); err == nil || err.Error() != "autocast keeps fp32 master weights, but the model is held in bf16 (load it with dtype fp32)" {
		t.Fatalf("autocast of a bf16 model: err = %v", err)
	}
}
