package starpo

import (
	"math"
	"slices"
)

// EchoWatch flags the Echo Trap's warning signs (paper §4.1,
// docs/ragen.md#metrics):
// in-group reward std and rollout entropy collapsing, the early warnings,
// and gradient-norm spikes, the mark of irreversible collapse. The paper
// reads them from EMA-smoothed curves; so does the watch:
//
//   - collapse: the EMA (α = 0.3) of rollout/in_group_std, or of
//     actor/entropy_loss, falls below CollapseFrac of its level over the
//     first BaselineSteps steps;
//   - spike: actor/grad_norm exceeds SpikeFactor times the median of the
//     previous (up to 20) steps, after BaselineSteps steps.
//
// A warning sets warn/<signal> = 1 and warn/echo_trap = 1 in the step's
// metrics; the thresholds are the defaults below and settable.
type EchoWatch struct {
	BaselineSteps int     // steps that set the reference level (default 3)
	CollapseFrac  float64 // EMA below this share of the reference is a collapse (default 0.1)
	SpikeFactor   float64 // grad norm above this multiple of the recent median is a spike (default 5)

	n                int
	baseStd, baseEnt float64
	emaStd, emaEnt   float64
	norms            []float64
}

// NewEchoWatch returns a watch with the default thresholds.
func NewEchoWatch() *EchoWatch {
	return &EchoWatch{BaselineSteps: 3, CollapseFrac: 0.1, SpikeFactor: 5}
}

const echoEMA = 0.3

// Observe reads one training step's metrics, adds the warn/ keys to them
// and returns the names of the signals that fired.
func (w *EchoWatch) Observe(met map[string]float64) []string {
	std, ent, norm := met["rollout/in_group_std"], met["actor/entropy_loss"], met["actor/grad_norm"]
	w.n++
	if w.n == 1 {
		w.emaStd, w.emaEnt = std, ent
	} else {
		w.emaStd += echoEMA * (std - w.emaStd)
		w.emaEnt += echoEMA * (ent - w.emaEnt)
	}
	var fired []string
	if w.n <= w.BaselineSteps {
		w.baseStd += std / float64(w.BaselineSteps)
		w.baseEnt += ent / float64(w.BaselineSteps)
	} else {
		if w.baseStd > 0 && w.emaStd < w.CollapseFrac*w.baseStd {
			fired = append(fired, "in_group_std_collapse")
		}
		if w.baseEnt > 0 && w.emaEnt < w.CollapseFrac*w.baseEnt {
			fired = append(fired, "entropy_collapse")
		}
		if len(w.norms) > 0 && !math.IsNaN(norm) {
			recent := slices.Clone(w.norms)
			slices.Sort(recent)
			if med := recent[len(recent)/2]; med > 0 && norm > w.SpikeFactor*med {
				fired = append(fired, "grad_norm_spike")
			}
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
