package optim

import (
	"runtime"
	"testing"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"

	"github.com/ragen-go/ragen/internal/torchrt"
	"github.com/ragen-go/ragen/model"
)

func TestNoLeakOver100Steps(t *testing.T) {
	// Two 4 MB parameters: a temporary kept alive per step (by a gotch
	// in-place wrapper's lost handle, say) would grow the resident set by
	// at least 4 MB a step, 400 MB over the run. Without a leak the heap
	// grows over the first 50 steps, as freed blocks settle into the free
	// lists, and then stays: 0.4 to 0.6 MB over steps 150 to 250 in six
	// runs, on the first thread or another (internal/torchrt/malloc.go).
	const n = 1 << 20
	var ps []model.Param
	for _, name := range []string{"a", "b"} {
		p := torchrt.Must(ts.Randn([]int64{1024, n / 1024}, gotch.Float, gotch.CPU))
		torchrt.Check(p.RequiresGrad_(true))
		ps = append(ps, model.Param{Name: name, T: p})
		t.Cleanup(p.MustDrop)
	}
	c := torchrt.Must(ts.Randn([]int64{1024, n / 1024}, gotch.Float, gotch.CPU))
	t.Cleanup(c.MustDrop)
	a := newOpt(t, ps, DefaultOptions(1e-3))
	step := func() {
		if err := ZeroGrad(ps); err != nil {
			t.Fatal(err)
		}
		backwardLinear(t, ps, []*ts.Tensor{c, c})
		if _, stepped, err := StepIfFinite(a, 1); err != nil || !stepped {
			t.Fatalf("stepped %v, err %v", stepped, err)
		}
	}
	for range 150 { // let the heap settle
		step()
	}
	runtime.GC()
	before := torchrt.ReadMemory().Resident
	for range 100 {
		step()
	}
	runtime.GC()
	growth := torchrt.ReadMemory().Resident - before
	t.Logf("resident memory grew by %.1f MB over 100 steps", float64(growth)/(1<<20))
	if growth > 40<<20 {
		t.Errorf("resident memory grew by %.1f MB over 100 steps of 8 MB of parameters: a per-step leak",
			float64(growth)/(1<<20))
	}
}
