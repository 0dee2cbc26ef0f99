package loss

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// refValue is the clipped value loss by loops, with ∂loss/∂v.
func refValue(v, old, ret, mask [][]float64, clip float64, mode AggMode) (ValueMetrics, [][]float64) {
	w := refAggWeights(mask, mode)
	B, T := len(v), len(v[0])
	worst, frac, dv := make([][]float64, B), make([][]float64, B), make([][]float64, B)
	for b := range B {
		worst[b], frac[b], dv[b] = make([]float64, T), make([]float64, T), make([]float64, T)
		for j := range T {
			if mask[b][j] == 0 {
				continue
			}
			lo, hi := old[b][j]-clip, old[b][j]+clip
			vc := min(max(v[b][j], lo), hi)
			l1, l2 := (v[b][j]-ret[b][j])*(v[b][j]-ret[b][j]), (vc-ret[b][j])*(vc-ret[b][j])
			d1, d2 := 2*(v[b][j]-ret[b][j]), 0.0
			if v[b][j] >= lo && v[b][j] <= hi {
				d2 = 2 * (vc - ret[b][j])
			}
			worst[b][j] = max(l1, l2)
			switch {
			case l2 > l1:
				frac[b][j], dv[b][j] = 1, d2
			case l1 > l2:
				dv[b][j] = d1
			default:
				dv[b][j] = (d1 + d2) / 2
			}
			dv[b][j] *= 0.5 * w[b][j]
		}
	}
	return ValueMetrics{VFLoss: 0.5 * refAgg(worst, mask, mode), VFClipFrac: refMaskedMean(frac, mask),
		VPredMean: refMaskedMean(v, mask)}, dv
}

func valueRow(m ValueMetrics) []float64 { return []float64{m.VFLoss, m.VFClipFrac, m.VPredMean} }

func TestValueLossHand(t *testing.T) {
	// clip 0.5:
	//   v 1,    old 0,   R 1: v_clip 0.5;  (0, 0.25)   → 0.25 clipped (∂ 0)
	//   v 0.2,  old 0,   R 1: v_clip 0.2;  (0.64, 0.64) → 0.64 (∂ 2(v−R) = −1.6)
	//   v −0.4, old 0,   R 0: v_clip −0.4; (0.16, 0.16) → 0.16 (∂ −0.8)
	//   v 3,    old 2,   R 0: v_clip 2.5;  (9, 6.25)   → 9    (∂ 6)
	//   untrained: v NaN.
	// loss ½·(0.25 + 0.64 + 0.16 + 9)/4 = 1.25625; clipfrac 1/4; vpred_mean
	// (1 + 0.2 − 0.4 + 3)/4 = 0.95; ∂loss/∂v = ⅛·(0, −1.6, −0.8, 6, 0).
	v := leaf(t, [][]float64{{1, 0.2, -0.4, 3, math.NaN()}})
	loss, m, err := ValueLoss(v, tensor(t, [][]float64{{0, 0, 0, 2, 0}}), tensor(t, [][]float64{{1, 1, 0, 0, 0}}),
		tensor(t, [][]float64{{1, 1, 1, 1, 0}}), ValueOptions{Clip: 0.5, Agg: TokenMean})
	if err != nil {
		t.Fatal(err)
	}
	defer loss.MustDrop()
	checkClose(t, "metrics", append(valueRow(m), scalar(t, loss)), []float64{1.25625, 0.25, 0.95, 1.25625}, 1e-6)
	checkClose(t, "∂loss/∂v", grad(t, loss, v), []float64{0, -0.2, -0.1, 0.75, 0}, 1e-6)
}

func TestValueLossMatchesReference(t *testing.T) {
	for seed := range uint64(4) {
		r := rand.New(rand.NewPCG(seed, 5))
		B, T := 3, 10
		mask := randMask(r, B, T)
		old := f32(randn(r, B, T, 1))
		v := f32(add(old, randn(r, B, T, 0.6)))
		ret := f32(randn(r, B, T, 1))
		for _, mode := range allModes {
			vt := leaf(t, garbage(r, v, mask))
			loss, m, err := ValueLoss(vt, tensor(t, garbage(r, old, mask)), tensor(t, garbage(r, ret, mask)), tensor(t,
				mask), ValueOptions{Clip: 0.5, Agg: mode})
			if err != nil {
				t.Fatal(err)
			}
			wm, dv := refValue(v, old, ret, mask, 0.5, mode)
			checkClose(t, string(mode)+" metrics", append(valueRow(m), scalar(t, loss)), append(valueRow(wm),
				wm.VFLoss), 1e-5)
			checkClose(t, string(mode)+" ∂loss/∂v", grad(t, loss, vt), flatten(dv), 1e-5)
			loss.MustDrop()
		}
	}
}

func TestValueLossErrors(t *testing.T) {
	x := tensor(t, [][]float64{{0, 0}})
	if _, _, err := ValueLoss(x, x, x, x, ValueOptions{Clip: -0.5, Agg: TokenMean}); err == nil ||
		!strings.Contains(err.Error(), "cliprange_value -0.5") {
		t.Errorf("negative clip: err = %v", err)
	}
	if _, _, err := ValueLoss(x, x, x, x, ValueOptions{Clip: 0.5, Agg: "mean"}); err == nil {
		t.Error("unknown mode accepted")
	}
	if _, _, err := ValueLoss(x, x, tensor(t, [][]float64{{0}, {0}}), x, ValueOptions{Clip: 0.5,
		Agg: TokenMean}); err == nil || !strings.Contains(err.Error(), "returns has shape [2 1]") {
		t.Errorf("shape mismatch: err = %v", err)
	}
}
