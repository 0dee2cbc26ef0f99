package loss

import (
	"math/rand/v2"
	"testing"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"
)

// On a machine with a GPU the losses must give there what they give on the
// CPU (the metrics' read-back and the scalar fills included).
func TestLossesOnGPUMatchCPU(t *testing.T) {
	dev := gotch.CudaIfAvailable()
	if !dev.IsCuda() {
		t.Skip("no GPU")
	}
	r := rand.New(rand.NewPCG(4, 4))
	B, T := 4, 16
	mask := randMask(r, B, T)
	old := randn(r, B, T, 1)
	lp := add(old, randn(r, B, T, 0.5))
	adv := randn(r, B, T, 1)
	on := func(x *ts.Tensor) *ts.Tensor {
		y, err := x.ToDevice(dev, gotch.Float, false, false, false)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { y.MustDrop() })
		return y
	}
	args := func(cuda bool) [4]*ts.Tensor {
		xs := [4]*ts.Tensor{tensor(t, lp), tensor(t, old), tensor(t, adv), tensor(t, mask)}
		if cuda {
			for i := range xs {
				xs[i] = on(xs[i])
			}
		}
		return xs
	}
	var pm [2]PolicyMetrics
	var vm [2]ValueMetrics
	for i, cuda := range []bool{false, true} {
		x := args(cuda)
		pl, m, err := PolicyLoss(x[0], x[1], x[2], x[3], PolicyOptions{ClipLow: 0.2, ClipHigh: 0.28, ClipC: 3,
			Agg: TokenMean})
		if err != nil {
			t.Fatal(err)
		}
		pl.MustDrop()
		vl, v, err := ValueLoss(x[0], x[1], x[2], x[3], ValueOptions{Clip: 0.5, Agg: SeqMeanTokenMean})
		if err != nil {
			t.Fatal(err)
		}
		vl.MustDrop()
		pm[i], vm[i] = m, v
	}
	checkMetrics(t, "policy", pm[1], pm[0], 1e-5)
	checkClose(t, "value", valueRow(vm[1]), valueRow(vm[0]), 1e-5)
}
