package starpo

import (
	"slices"
	"testing"
)

// The watch stays quiet on a steady run and fires each signal when its
// metric collapses or spikes.
func TestEchoWatch(t *testing.T) {
	steady := func() map[string]float64 {
		return map[string]float64{"rollout/in_group_std": 0.5, "actor/entropy_loss": 2, "actor/grad_norm": 1}
	}
	w := NewEchoWatch()
	for i := range 10 {
		if f := w.Observe(steady()); len(f) != 0 {
			t.Fatalf("step %d: steady run fired %v", i, f)
		}
	}
	m := steady()
	m["actor/grad_norm"] = 50
	if f := w.Observe(m); !slices.Equal(f, []string{"grad_norm_spike"}) || m["warn/echo_trap"] != 1 ||
		m["warn/grad_norm_spike"] != 1 {
		t.Fatalf("spike: fired %v, metrics %v", f, m)
	}
	var fired []string
	for range 10 {
		m := steady()
		m["rollout/in_group_std"], m["actor/entropy_loss"] = 0, 0.01
		fired = w.Observe(m)
	}
	if !slices.Equal(fired, []string{"in_group_std_collapse", "entropy_collapse"}) {
		t.Fatalf("collapse: fired %v", fired)
	}
}
