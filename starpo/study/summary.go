package study

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ragen-go/ragen/report"
)

// Result is what one finished run's metrics.jsonl says about its
// environment: the validation curve and the Echo Trap's signals (the
// warn/ keys the trainer's EchoWatch writes).
type Result struct {
	Cell     Cell
	Steps    []int     // validation steps, 0 first
	Success  []float64 // val-env/<env>/success at those steps
	Collapse int       // first training step whose in-group std or entropy EMA collapsed; 0 = never
	Spike    int       // first training step with a gradient-norm spike; 0 = never
	Signal   string    // the collapse signal that fired first
	// Reasoning holds, per ReasoningMeasures key, its value at each
	// validation step (NaN where a validation lacks it).
	Reasoning map[string][]float64
	Withered  int // first training step whose think length or prompt–think MI collapsed; 0 = never
}

// ReasoningMeasures are the validation's think diagnostics a study
// compares (docs/training.md, "Think diagnostics"), with their labels.
var ReasoningMeasures = []struct{ Key, Label string }{
	{"think/tokens_mean", "think tokens"},
	{"reasoning/claim_accuracy", "claim accuracy"},
	{"reasoning/agreement", "think–answer agreement"},
	{"collapse/mi_estimate", "prompt–think MI (nats/token)"},
}

// ReadResult reads a cell's run folder.
func ReadResult(c Cell, dir string) (Result, error) {
	m, err := report.LoadMetrics(filepath.Join(dir, "metrics.jsonl"))
	if err != nil {
		return Result{}, err
	}
	r := Result{Cell: c}
	key := "val-env/" + c.Env + "/success"
	r.Reasoning = map[string][]float64{}
	for _, row := range m.Val {
		if v, ok := row[key]; ok {
			r.Steps = append(r.Steps, int(row["step"]))
			r.Success = append(r.Success, v)
			for _, rm := range ReasoningMeasures {
				x, ok := row["val-env/"+rm.Key]
				if !ok {
					x = math.NaN()
				}
				r.Reasoning[rm.Key] = append(r.Reasoning[rm.Key], x)
			}
		}
	}
	if len(r.Steps) == 0 {
		return Result{}, fmt.Errorf("%s: no validation of %s in its metrics", dir, c.Env)
	}
	for _, row := range m.Train {
		step := int(row["step"])
		for _, sig := range []string{"in_group_std_collapse", "entropy_collapse"} {
			if row["warn/"+sig] == 1 && r.Collapse == 0 {
				r.Collapse, r.Signal = step, sig
			}
		}
		if row["warn/grad_norm_spike"] == 1 && r.Spike == 0 {
			r.Spike = step
		}
		if (row["warn/think_length_collapse"] == 1 || row["warn/mi_collapse"] == 1) && r.Withered == 0 {
			r.Withered = step
		}
	}
	return r, nil
}

// Stat is a mean over seeds with its standard error (sample standard
// deviation / √n; 0 with one seed).
type Stat struct {
	Mean float64 `json:"mean"`
	SE   float64 `json:"se"`
}

func stat(xs []float64) Stat {
	n := float64(len(xs))
	if n == 0 {
		return Stat{Mean: math.NaN(), SE: math.NaN()}
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	mean := sum / n
	if n < 2 {
		return Stat{Mean: mean}
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return Stat{Mean: mean, SE: math.Sqrt(ss/(n-1)) / math.Sqrt(n)}
}

// String is "0.123 ± 0.045".
func (s Stat) String() string { return fmt.Sprintf("%.3f ± %.3f", s.Mean, s.SE) }

// Point is the seed mean of validation success at one step.
type Point struct {
	Step int  `json:"step"`
	Stat Stat `json:"success"`
	N    int  `json:"seeds"`
}

// Summary is one arm on one environment, over its seeds.
type Summary struct {
	Arm       string  `json:"arm"`
	Label     string  `json:"label"`
	Env       string  `json:"env"`
	Seeds     int     `json:"seeds"`
	Start     Stat    `json:"start"`          // success at step 0 (the warm start)
	End       Stat    `json:"end"`            // at the last validation
	Peak      Stat    `json:"peak"`           // each seed's best validation
	PeakStep  Stat    `json:"peak_step"`      // the step of each seed's best (the first, on ties)
	Gain      Stat    `json:"gain"`           // end − start per seed
	Collapsed int     `json:"collapsed"`      // seeds whose in-group std or entropy collapsed (Echo Trap rules)
	Collapse  []int   `json:"collapse_steps"` // the step it happened, per collapsed seed
	Spiked    int     `json:"spiked"`         // seeds with a gradient-norm spike
	Spikes    []int   `json:"spike_steps"`
	Curve     []Point `json:"curve"`
	Withered  int     `json:"withered"`     // seeds whose think length or prompt–think MI collapsed
	Withers   []int   `json:"wither_steps"` // the step it happened, per such seed
	// Reasoning is, per ReasoningMeasures key the runs recorded, its value
	// at the first and the last validation, over seeds.
	Reasoning []Measure `json:"reasoning,omitempty"`
}

// Measure is one think diagnostic at the first and last validation.
type Measure struct {
	Key   string `json:"key"`
	Label string `json:"label"`
	Start Stat   `json:"start"`
	End   Stat   `json:"end"`
}

// Summarise groups results by arm and environment, in the spec's order.
func Summarise(s Spec, results []Result) []Summary {
	var out []Summary
	for _, env := range s.Envs {
		for _, a := range s.Arms {
			var rs []Result
			for _, r := range results {
				if r.Cell.Env == env && r.Cell.Arm.Name == a.Name {
					rs = append(rs, r)
				}
			}
			if len(rs) > 0 {
				out = append(out, summarise(a, env, rs))
			}
		}
	}
	return out
}

func summarise(a Arm, env string, rs []Result) Summary {
	sm := Summary{Arm: a.Name, Label: a.ArmLabel(), Env: env, Seeds: len(rs), Collapse: []int{}, Spikes: []int{},
		Withers: []int{}}
	var start, end, peak, peakStep, gain []float64
	byStep := map[int][]float64{}
	for _, r := range rs {
		first, last := r.Success[0], r.Success[len(r.Success)-1]
		start, end, gain = append(start, first), append(end, last), append(gain, last-first)
		best := 0
		for i, v := range r.Success {
			if v > r.Success[best] {
				best = i
			}
			byStep[r.Steps[i]] = append(byStep[r.Steps[i]], v)
		}
		peak, peakStep = append(peak, r.Success[best]), append(peakStep, float64(r.Steps[best]))
		if r.Collapse > 0 {
			sm.Collapsed++
			sm.Collapse = append(sm.Collapse, r.Collapse)
		}
		if r.Spike > 0 {
			sm.Spiked++
			sm.Spikes = append(sm.Spikes, r.Spike)
		}
		if r.Withered > 0 {
			sm.Withered++
			sm.Withers = append(sm.Withers, r.Withered)
		}
	}
	sm.Reasoning = measures(rs)
	sm.Start, sm.End, sm.Peak, sm.PeakStep, sm.Gain = stat(start), stat(end), stat(peak), stat(peakStep), stat(gain)
	steps := make([]int, 0, len(byStep))
	for st := range byStep {
		steps = append(steps, st)
	}
	sort.Ints(steps)
	for _, st := range steps {
		sm.Curve = append(sm.Curve, Point{Step: st, Stat: stat(byStep[st]), N: len(byStep[st])})
	}
	return sm
}

// measures summarises each reasoning measure the runs recorded at their
// first and last validation; a seed lacking it there is left out, and a
// measure no seed has at both ends is not summarised (a mean over no seed
// has no value, and summary.json cannot hold a NaN).
func measures(rs []Result) []Measure {
	var out []Measure
	for _, rm := range ReasoningMeasures {
		var start, end []float64
		for _, r := range rs {
			xs := r.Reasoning[rm.Key]
			if len(xs) == 0 {
				continue
			}
			if !math.IsNaN(xs[0]) {
				start = append(start, xs[0])
			}
			if x := xs[len(xs)-1]; !math.IsNaN(x) {
				end = append(end, x)
			}
		}
		if len(start) > 0 && len(end) > 0 {
			out = append(out, Measure{Key: rm.Key, Label: rm.Label, Start: stat(start), End: stat(end)})
		}
	}
	return out
}

// Markdown is the comparison as a markdown table, one row per arm and
// environment.
func Markdown(sums []Summary) string {
	var b strings.Builder
	b.WriteString("| environment | arm | seeds | start | end | peak | peak step | end − start | collapsed (step) | " +
		"grad spike (step) |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, s := range sums {
		fmt.Fprintf(&b, "| %s | %s | %d | %.3f | %s | %s | %.0f | %+.3f ± %.3f | %s | %s |\n",
			s.Env, s.Label, s.Seeds, s.Start.Mean, s.End, s.Peak, s.PeakStep.Mean, s.Gain.Mean, s.Gain.SE,
			countSteps(s.Collapsed, s.Seeds, s.Collapse), countSteps(s.Spiked, s.Seeds, s.Spikes))
	}
	reasoningTable(&b, sums)
	return b.String()
}

// reasoningTable adds, when any run recorded think diagnostics, their
// values at the first and last validation (mean ± standard error over
// seeds) and the seeds whose reasoning withered.
func reasoningTable(b *strings.Builder, sums []Summary) {
	recorded := false
	for _, s := range sums {
		recorded = recorded || len(s.Reasoning) > 0
	}
	if !recorded {
		return
	}
	b.WriteString("\n| environment | arm |")
	for _, rm := range ReasoningMeasures {
		b.WriteString(" " + rm.Label + ", start → end |")
	}
	b.WriteString(" think or MI collapsed (step) |\n|---|---|" + strings.Repeat("---|", len(ReasoningMeasures)+1) + "\n")
	for _, s := range sums {
		fmt.Fprintf(b, "| %s | %s |", s.Env, s.Label)
		for _, rm := range ReasoningMeasures {
			cell := "–"
			for _, m := range s.Reasoning {
				if m.Key == rm.Key {
					cell = fmt.Sprintf("%s → %s", m.Start, m.End)
				}
			}
			b.WriteString(" " + cell + " |")
		}
		fmt.Fprintf(b, " %s |\n", countSteps(s.Withered, s.Seeds, s.Withers))
	}
}

func countSteps(n, of int, steps []int) string {
	if n == 0 {
		return fmt.Sprintf("0/%d", of)
	}
	parts := make([]string, len(steps))
	for i, st := range steps {
		parts[i] = fmt.Sprint(st)
	}
	return fmt.Sprintf("%d/%d (%s)", n, of, strings.Join(parts, ", "))
}
