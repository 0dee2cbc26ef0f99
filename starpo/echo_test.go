package starpo

import (
	"slices"
	"testing"

	"github.com/ragen-go/ragen/starpo/config"
)

// The watch stays quiet on a steady run and fires each signal when its
// metric collapses or spikes.
func TestEchoWatch(t *testing.T) {
	steady := func() map[string]float64 {
		return map[string]float64{"rollout/in_group_std": 0.5, "actor/entropy_loss": 2, "actor/grad_norm": 1}
	}
	w := NewEchoWatch(config.Default().Echo)
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

// The reasoning signals: the think shrinking below think_collapse_frac of
// its early length, and the mutual information, measured only on some
// steps, falling below mi_collapse_frac of its early level. Steps without
// the metric leave its signal alone.
func TestEchoWatchReasoning(t *testing.T) {
	e := config.Default().Echo
	e.BaselineSteps = 2
	w := NewEchoWatch(e)
	step := func(think float64, mi *float64) []string {
		m := map[string]float64{"rollout/in_group_std": 0.5, "actor/entropy_loss": 2, "actor/grad_norm": 1,
			"train/think/tokens_mean": think}
		if mi != nil {
			m["collapse/mi_estimate"] = *mi
		}
		return w.Observe(m)
	}
	hi, lo := 2.0, 0.1
	for i := range 6 {
		var mi *float64
		if i%2 == 0 {
			mi = &hi
		}
		if f := step(40, mi); len(f) != 0 {
			t.Fatalf("step %d: steady reasoning fired %v", i, f)
		}
	}
	// EMA of think length from 40 at α 0.3: 28.6, 20.6, 14.8 < 0.5 × 40
	// after the third short step; the MI EMA 2 → 1.43 → 1.03 → 0.75 → 0.55
	// < 0.25 × 2 on its fifth low measurement.
	var fired [][]string
	for range 10 {
		fired = append(fired, step(2, &lo))
	}
	if !slices.Equal(fired[1], nil) || !slices.Equal(fired[2], []string{"think_length_collapse"}) {
		t.Fatalf("think collapse: fired %v", fired[:3])
	}
	first := -1
	for i, f := range fired {
		if slices.Contains(f, "mi_collapse") && first < 0 {
			first = i
		}
	}
	if first != 4 {
		t.Fatalf("mi collapse first fired on low step %d (%v), want 4", first, fired)
	}
}
