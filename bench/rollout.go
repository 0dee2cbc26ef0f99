package bench

import (
	"fmt"
	"slices"
	"time"

	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/starpo"
	"github.com/ragen-go/ragen/starpo/rollout"
)

// rolloutTag is the environment of the rollout measurement.
const rolloutTag = "SimpleSokoban"

// turnRecord is one generate call of a rollout: which environments were
// prompted, with what, and how many tokens each answer took.
type turnRecord struct {
	envs    []int
	prompts [][]int
	gens    []rollout.Generation
}

// rolloutAndUpdate runs the rollout and, when asked, the update on its
// trajectories.
func (r *runner) rolloutAndUpdate() error {
	mgr, trajs, err := r.rollout()
	if err != nil {
		return err
	}
	if !r.o.Has(PartUpdate) {
		return nil
	}
	return r.update(mgr, trajs[:r.o.UpdateSeqs])
}

// rollout plays one training rollout on Sokoban through the trainer's own
// path (rollout.Manager and starpo.NewGenerator: KV reused between turns,
// finished rows dropped, environments on goroutines) and times it whole.
// Generation time is what the generate calls took; the rest of the step,
// plus a replay of the per-token decoding that runs inside those calls, is
// the environments' and the tokenizer's time.
func (r *runner) rollout() (*rollout.Manager, []rollout.Trajectory, error) {
	o := r.o
	rc := rollout.DefaultConfig()
	rc.Tags, rc.NGroups, rc.EnvGroups, rc.GroupSize = []string{rolloutTag}, []int{o.RolloutGroups}, o.RolloutGroups, o.RolloutGroupSize
	rc.MaxTurn = o.RolloutTurns
	mgr, err := rollout.NewManager(rc, r.tok)
	if err != nil {
		return nil, nil, err
	}
	gopt := starpo.GenOptions{Sampling: model.Sampling{Temperature: o.Temperature, TopP: 1}, MaxTokens: o.RolloutTokens, Seed: o.Seed, Stop: []string{"</answer>"},
		StaticCache: o.StaticCache, CUDAGraphs: o.CUDAGraphs}
	r.o.logf("rollout: %d × %d %s environments, %d turns of at most %d tokens", o.RolloutGroups, o.RolloutGroupSize, rolloutTag, o.RolloutTurns, o.RolloutTokens)

	w := watchMemory(r.gpu())
	t0 := time.Now()
	if err := mgr.Reset(rc.TrainSeed(0)); err != nil {
		return nil, nil, err
	}
	gen, release := starpo.NewGenerator(r.m, r.tok, gopt)
	var turns []turnRecord
	var genTime time.Duration
	timed := func(prompts [][]int) ([]rollout.Generation, error) {
		envs := mgr.Active()
		g0 := time.Now()
		gens, err := gen(prompts)
		genTime += time.Since(g0)
		turns = append(turns, turnRecord{envs: envs, prompts: prompts, gens: gens})
		return gens, err
	}
	trajs, _, err := mgr.Run(timed)
	release()
	step := time.Since(t0)
	mem := w.end()
	if err != nil {
		return nil, nil, err
	}
	decode := r.replayDecoding(turns, gopt.Stop)
	envTok := step - genTime + decode

	res := Result{Name: "rollout", Label: fmt.Sprintf("rollout %s, %d turns", rolloutTag, o.RolloutTurns), Batch: len(trajs)}
	res.FLOPs, res.Tokens = rolloutWork(r.m.Cfg, turns)
	res.Ours = measure(step.Seconds(), res.Tokens, res.FLOPs, r.peakFor())
	res.Ours.PeakRSS, res.Ours.PeakGPU = mem.PeakRSS, mem.PeakGPU
	res.Details = map[string]float64{
		"generate_seconds":      genTime.Seconds(),
		"env_tokenizer_seconds": envTok.Seconds(),
		"env_tokenizer_share":   envTok.Seconds() / step.Seconds(),
		"turns":                 float64(len(turns)),
	}
	err = r.add(res, func() (torchTiming, error) {
		var ts []map[string]any
		for _, t := range turns {
			n := make([]int, len(t.gens))
			for i, g := range t.gens {
				n[i] = len(g.IDs)
			}
			ts = append(ts, map[string]any{"prompts": t.prompts, "new_tokens": n})
		}
		r.o.logf("rollout: PyTorch replays the %d turns", len(turns))
		return r.torch.Run(map[string]any{"cmd": "rollout", "turns": ts, "temperature": o.Temperature, "seed": o.Seed})
	})
	return mgr, trajs, err
}

// replayDecoding times the text decoding the generator does per sampled
// token (inside the generate calls, so counted there), by doing it again.
func (r *runner) replayDecoding(turns []turnRecord, stops []string) time.Duration {
	t0 := time.Now()
	for _, t := range turns {
		for _, g := range t.gens {
			tr := r.tok.NewTranscript(stops)
			for _, id := range g.IDs {
				tr.Add(id)
				tr.Stopped()
			}
			tr.Finish()
		}
	}
	return time.Since(t0)
}

// rolloutWork is the rollout's useful FLOPs and sampled tokens: per turn
// and environment, the prompt tokens not already in its keys and values
// (the previous prompt and answer, but the answer's last token, which was
// never fed), each attending the whole prompt, then one cached step per
// sampled token after the first.
func rolloutWork(c model.Config, turns []turnRecord) (flops float64, tokens int) {
	seen := map[int][]int{} // env → the ids whose keys and values exist
	for _, t := range turns {
		for k, env := range t.envs {
			p, g := t.prompts[k], t.gens[k].IDs
			fed := 0
			if prev, ok := seen[env]; ok && len(prev) <= len(p) && slices.Equal(prev, p[:len(prev)]) {
				fed = len(prev)
			}
			flops += ForwardFLOPs(c, len(p)-fed, len(p), 1)
			flops += DecodeFLOPs(c, 1, len(p), len(g)-1)
			tokens += len(g)
			seen[env] = append(slices.Clone(p), g[:len(g)-1]...)
		}
	}
	return flops, tokens
}
