package starpo

import (
	"fmt"
	"maps"
	"time"

	"github.com/ragen-go/ragen/internal/torchrt"
)

// Recorder collects one training step's metrics, under RAGEN's names, as
// the step's phases run: their own metrics, their times (timing_s/) and
// the step's throughput and memory (perf/).
type Recorder struct {
	Metrics map[string]float64
	step    int
	start   time.Time
	tokens  float64 // the batch's trained tokens over every rank (Batch.tokens)
	updateS float64 // seconds in the updates
}

// NewRecorder starts recording step (the step's time starts now).
func NewRecorder(step int) *Recorder {
	return &Recorder{Metrics: map[string]float64{}, step: step, start: time.Now()}
}

// Add records m's metrics under prefix.
func (r *Recorder) Add(prefix string, m map[string]float64) {
	for k, v := range m {
		r.Metrics[prefix+k] = v
	}
}

// Time records timing_s/name, the seconds since t0, and returns them.
func (r *Recorder) Time(name string, t0 time.Time) float64 {
	s := time.Since(t0).Seconds()
	r.Metrics["timing_s/"+name] = s
	return s
}

// update records an update's time and token rate (timing_s/name,
// perf/name_tokens_per_s) and its metrics m.
func (r *Recorder) update(name string, t0 time.Time, b *Batch, m map[string]float64) {
	maps.Copy(r.Metrics, m)
	s := r.Time(name, t0)
	r.Metrics["perf/"+name+"_tokens_per_s"] = b.tokens / s
	r.tokens = b.tokens
	r.updateS += s
}

// Finish records the step's totals, its time, throughput and memory, and
// returns the metrics.
func (r *Recorder) Finish() map[string]float64 {
	// Throughput of the whole job: every rank's tokens over this rank's time.
	r.Metrics["perf/train_tokens_per_s"] = r.tokens / r.updateS
	r.Time("step", r.start)
	mem := torchrt.ReadMemory()
	r.Metrics["perf/memory_mb"] = float64(mem.Resident) / (1 << 20)
	r.Metrics["perf/max_memory_mb"] = float64(mem.Peak) / (1 << 20)
	return r.Metrics
}

// during names the step in an error from one of its phases.
func (r *Recorder) during() string { return fmt.Sprintf("training step %d", r.step) }
