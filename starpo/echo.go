package starpo

import (
	"math"
	"slices"

	"github.com/ragen-go/ragen/starpo/config"
)

// EchoWatch flags the Echo Trap's warning signs (paper §4.1,
// docs/ragen.md#metrics, docs/training.md "The Echo-Trap watch"): in-group
// reward std and rollout entropy collapsing, the early warnings;
// gradient-norm spikes, the mark of irreversible collapse; and the
// reasoning's own collapse, the think shrinking (think/tokens_mean) or no
// longer depending on its prompt (collapse/mi_estimate, RAGEN-2's template
// collapse). The paper reads its signals from EMA-smoothed curves; so does
// the watch:
//
//   - a level collapse: the EMA (α = 0.3) of a signal falls below a share of
//     its level over its first BaselineSteps observations (CollapseFrac for
//     std and entropy, ThinkCollapseFrac for think length, MICollapseFrac
//     for the mutual information, which is observed only on the steps that
//     measure it);
//   - spike: actor/grad_norm exceeds SpikeFactor times the median of the
//     previous (up to 20) steps, after BaselineSteps steps.
//
// A warning sets warn/<signal> = 1 and warn/echo_trap = 1 in the step's
// metrics.
type EchoWatch struct {
	cfg    config.Echo
	levels []*level
	n      int
	norms  []float64
}

// level watches one metric for a collapse of its EMA against its early
// reference.
type level struct {
	key, signal string
	frac        float64
	n           int
	base, ema   float64
}

const echoEMA = 0.3

// NewEchoWatch returns a watch with the thresholds of e.
func NewEchoWatch(e config.Echo) *EchoWatch {
	return &EchoWatch{cfg: e, levels: []*level{
		{key: "rollout/in_group_std", signal: "in_group_std_collapse", frac: e.CollapseFrac},
		{key: "actor/entropy_loss", signal: "entropy_collapse", frac: e.CollapseFrac},
		{key: "train/think/tokens_mean", signal: "think_length_collapse", frac: e.ThinkCollapseFrac},
		{key: "collapse/mi_estimate", signal: "mi_collapse", frac: e.MICollapseFrac},
	}}
}

// observe feeds one value and reports a collapse. A reference level of 0
// or below cannot collapse (nothing to lose, or an estimate that starts
// in noise).
func (l *level) observe(v float64, baselineSteps int) bool {
	l.n++
	if l.n == 1 {
		l.ema = v
	} else {
		l.ema += echoEMA * (v - l.ema)
	}
	if l.n <= baselineSteps {
		l.base += v / float64(baselineSteps)
		return false
	}
	return l.base > 0 && l.ema < l.frac*l.base
}

// Observe reads one training step's metrics, adds the warn/ keys to them
// and returns the names of the signals that fired. A signal whose metric
// the step lacks (no think, no measurement) is skipped.
func (w *EchoWatch) Observe(met map[string]float64) []string {
	w.n++
	var fired []string
	for _, l := range w.levels {
		if v, ok := met[l.key]; ok && !math.IsNaN(v) && l.observe(v, w.cfg.BaselineSteps) {
			fired = append(fired, l.signal)
		}
	}
	norm := met["actor/grad_norm"]
	if w.n > w.cfg.BaselineSteps && len(w.norms) > 0 && !math.IsNaN(norm) {
		recent := slices.Clone(w.norms)
		slices.Sort(recent)
		if med := recent[len(recent)/2]; med > 0 && norm > w.cfg.SpikeFactor*med {
			fired = append(fired, "grad_norm_spike")
		}
	}
	if !math.IsNaN(norm) && !math.IsInf(norm, 0) {
		w.norms = append(w.norms, norm)
		if len(w.norms) > 20 {
			w.norms = w.norms[1:]
		}
	}
	for _, f := range fired {
		met["warn/"+f] = 1
	}
	if len(fired) > 0 {
		met["warn/echo_trap"] = 1
	}
	return fired
}
