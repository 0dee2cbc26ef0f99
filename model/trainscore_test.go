package model

import (
	"math"
	"testing"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"
)

// paramGrads copies every parameter's gradient and zeroes it.
func paramGrads(t *testing.T, m *CausalLM) map[string][]float32 {
	t.Helper()
	out := map[string][]float32{}
	for _, p := range m.Params() {
		g := gradOrNil(p.T)
		if g == nil {
			t.Fatalf("%s has no gradient", p.Name)
		}
		out[p.Name] = Float32s(g)
		check(g.Zero_())
		g.MustDrop()
	}
	return out
}

// The chunked training pass gives every weight the gradient that autograd
// gives through the full logits, for loss = Σ a·logp + Σ b·H, on all
// positions and on a selection of them (the reference masks a and b).
func TestScoreForTrainingGradients(t *testing.T) {
	for _, c := range []struct{ tied, selected bool }{{true, false}, {false, false}, {true, true}, {false, true}} {
		tied := c.tied
		dir, _ := writeTiny(t, tied, 0)
		m := loadTiny(t, dir)
		if err := SetTrainable(m.Params(), true); err != nil {
			t.Fatal(err)
		}
		ids, mask, L := batch(testSeqs)
		defer dropAll(ids, mask)
		B := int64(len(testSeqs))
		a := must(ts.Randn([]int64{B, int64(L - 1)}, gotch.Float, gotch.CPU))
		b := must(ts.Randn([]int64{B, int64(L - 1)}, gotch.Float, gotch.CPU))
		defer dropAll(a, b)
		var sel *ts.Tensor
		refA, refB := a, b
		if c.selected {
			sel = must(must(ts.Rand([]int64{B, int64(L - 1)}, gotch.Float, gotch.CPU)).Gt(ts.FloatScalar(0.5), true))
			sel = must(sel.Totype(gotch.Float, true))
			refA, refB = must(a.Mul(sel, false)), must(b.Mul(sel, false))
			defer dropAll(sel, refA, refB)
		}

		// Reference: autograd through the full [B, T−1, V] logits.
		func() {
			var s scope
			defer s.Drop()
			pos := s.Op(PositionsFromMask(mask))
			bias := s.Keep(attentionBias(mask, int64(L), m.DType))
			h := s.Keep(m.Forward(Inputs{IDs: ids, Positions: pos, Bias: bias}, nil))
			z := s.Keep(m.Logits(s.Op(h.Narrow(1, 0, int64(L-1), false))))
			logp := s.Op(z.LogSoftmax(-1, gotch.Float, false))
			y := s.Op(s.Op(ids.Narrow(1, 1, int64(L-1), false)).Unsqueeze(-1, false))
			lpY := s.Op(s.Op(logp.Gather(-1, y, false, false)).SqueezeDim(-1, false))
			p := s.Op(logp.Exp(false))
			H := s.Op(s.Op(s.Op(p.Mul(logp, false)).SumDimIntlist([]int64{-1}, false, gotch.Float, false)).Neg(false))
			loss := s.Op(s.Op(s.Op(lpY.Mul(refA, false)).Sum(gotch.Float, false)).Add(s.Op(s.Op(H.Mul(refB, false)).Sum(gotch.Float, false)), false))
			check(loss.Backward())
		}()
		want := paramGrads(t, m)

		sc, err := m.ScoreForTraining(ids, mask, sel, 3)
		if err != nil {
			t.Fatal(err)
		}
		func() {
			var s scope
			defer s.Drop()
			loss := s.Op(s.Op(s.Op(sc.LogProbs.Mul(a, false)).Sum(gotch.Float, false)).Add(s.Op(s.Op(sc.Entropy.Mul(b, false)).Sum(gotch.Float, false)), false))
			check(loss.Backward())
		}()
		if err := sc.Backward(); err != nil {
			t.Fatal(err)
		}
		sc.Drop()
		got := paramGrads(t, m)
		worst, scale := 0.0, 0.0
		for name, w := range want {
			g := got[name]
			for i := range w {
				worst = math.Max(worst, math.Abs(float64(g[i]-w[i])))
				scale = math.Max(scale, math.Abs(float64(w[i])))
			}
		}
		t.Logf("tied=%v selected=%v: max |grad difference| %.2g (largest grad %.2g)", tied, c.selected, worst, scale)
		if worst > 1e-5*math.Max(1, scale) {
			t.Fatalf("tied=%v selected=%v: chunked gradients differ from autograd by %.3g", tied, c.selected, worst)
		}
	}
}
