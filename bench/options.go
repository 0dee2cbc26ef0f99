package bench

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// The parts of a benchmark run, in the order they run.
const (
	PartPeak    = "peak"    // (a) the matmul peak, fp32 and bf16
	PartPrefill = "prefill" // (b) prompt tokens/s
	PartDecode  = "decode"  // (c) tokens/s with the KV cache per batch size
	PartRollout = "rollout" // (d) a multi-turn Sokoban rollout with environments in the loop
	PartUpdate  = "update"  // (e) PPO epochs of the actor and of the critic on part of that rollout
	PartSoak    = "soak"    // resident memory over a long decode loop
)

// AllParts is every part, in running order.
var AllParts = []string{PartPeak, PartPrefill, PartDecode, PartRollout, PartUpdate, PartSoak}

// Options chooses what a run measures and how big it is.
type Options struct {
	Parts []string // subset of AllParts; the update needs the rollout's trajectories

	// StaticCache and CUDAGraphs choose the decode path of the prefill,
	// decode and rollout measurements (model.GenerateOptions).
	StaticCache, CUDAGraphs bool

	PeakSizes   []int   // square matmul sizes; the peak is the best of them
	PeakSeconds float64 // time per size and dtype

	PrefillBatches []int // prompts per batch
	PrefillLen     int   // tokens per prompt

	DecodeBatches []int // sequences per batch
	DecodePrompt  int   // prompt tokens before decoding
	DecodeTokens  int   // new tokens per sequence

	Temperature float64 // sampling temperature everywhere (RAGEN's rollout: 1)
	Repeat      int     // runs of each prefill, decode and update measurement per side, alternating; the fastest counts

	RolloutGroups    int // Sokoban groups (one initial state each)
	RolloutGroupSize int // environments per group
	RolloutTurns     int // turns per episode
	RolloutTokens    int // most tokens per answer

	UpdateSeqs int // trajectories of the rollout the update trains on (whole groups)
	MicroBatch int // trajectories per forward/backward

	Soak      time.Duration // length of the soak decode loop
	SoakBatch int           // its batch

	Seed     int64
	Progress io.Writer // progress lines; nil = none
}

// DefaultOptions is what `ragen bench` runs without flags: every part but
// the soak, sized for a 2-core CPU.
func DefaultOptions() Options {
	return Options{
		Parts:     []string{PartPeak, PartPrefill, PartDecode, PartRollout, PartUpdate},
		PeakSizes: []int{1024, 2048}, PeakSeconds: 2,
		PrefillBatches: []int{1, 16}, PrefillLen: 128,
		DecodeBatches: []int{1, 16, 64, 128}, DecodePrompt: 64, DecodeTokens: 32,
		Temperature: 1, Repeat: 3,
		RolloutGroups: 4, RolloutGroupSize: 8, RolloutTurns: 5, RolloutTokens: 48,
		UpdateSeqs: 8, MicroBatch: 4,
		Soak: 10 * time.Minute, SoakBatch: 64,
		Seed: 1,
	}
}

// Has reports whether part p is to run.
func (o Options) Has(p string) bool { return slices.Contains(o.Parts, p) }

// Validate names the first option that cannot make a run. Flag names are
// the command's, so its errors read as the command line does.
func (o Options) Validate() error {
	for _, p := range o.Parts {
		if !slices.Contains(AllParts, p) {
			return fmt.Errorf("--parts: %q is not one of %s", p, strings.Join(AllParts, ", "))
		}
	}
	if len(o.Parts) == 0 {
		return fmt.Errorf("--parts is empty")
	}
	if o.Has(PartUpdate) && !o.Has(PartRollout) {
		return fmt.Errorf("--parts: update trains on the rollout's trajectories, so it needs rollout too")
	}
	pos := []struct {
		flag string
		v    int
	}{
		{"--prefill-len", o.PrefillLen}, {"--decode-prompt", o.DecodePrompt}, {"--decode-tokens", o.DecodeTokens},
		{"--rollout-groups", o.RolloutGroups}, {"--rollout-group-size", o.RolloutGroupSize},
		{"--rollout-turns", o.RolloutTurns}, {"--rollout-tokens", o.RolloutTokens},
		{"--repeat", o.Repeat}, {"--update-seqs", o.UpdateSeqs}, {"--micro-batch", o.MicroBatch}, {"--soak-batch", o.SoakBatch},
	}
	for _, p := range pos {
		if p.v < 1 {
			return fmt.Errorf("%s must be at least 1, got %d", p.flag, p.v)
		}
	}
	lists := []struct {
		flag string
		v    []int
	}{{"--peak-sizes", o.PeakSizes}, {"--prefill-batches", o.PrefillBatches}, {"--decode-batches", o.DecodeBatches}}
	for _, l := range lists {
		if len(l.v) == 0 {
			return fmt.Errorf("%s is empty", l.flag)
		}
		for _, v := range l.v {
			if v < 1 {
				return fmt.Errorf("%s: %d must be at least 1", l.flag, v)
			}
		}
	}
	switch {
	case !(o.PeakSeconds > 0):
		return fmt.Errorf("--peak-seconds must be positive, got %g", o.PeakSeconds)
	case !(o.Temperature > 0):
		return fmt.Errorf("--temperature must be positive (the benchmark samples), got %g", o.Temperature)
	case o.DecodeTokens < 2:
		return fmt.Errorf("--decode-tokens must be at least 2 (the first token comes from the prefill), got %d", o.DecodeTokens)
	case o.Has(PartSoak) && o.Soak <= 0:
		return fmt.Errorf("--soak must be a positive duration when the soak part runs, got %s", o.Soak)
	case o.UpdateSeqs%o.RolloutGroupSize != 0:
		return fmt.Errorf("--update-seqs %d must be a multiple of --rollout-group-size %d (the update takes whole groups)", o.UpdateSeqs, o.RolloutGroupSize)
	case o.UpdateSeqs > o.RolloutGroups*o.RolloutGroupSize:
		return fmt.Errorf("--update-seqs %d is more than the rollout's %d trajectories", o.UpdateSeqs, o.RolloutGroups*o.RolloutGroupSize)
	}
	return nil
}

func (o Options) logf(format string, args ...any) {
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, "bench: "+format+"\n", args...)
	}
}
