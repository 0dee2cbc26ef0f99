package starpo

import (
	"time"

	"github.com/ragen-go/ragen/starpo/collapse"
	"github.com/ragen-go/ragen/starpo/rollout"
)

// measuresCollapse says whether step's training rollout is measured for
// template collapse (collapse.every; step 0 is, to set the reference).
func (t *Trainer) measuresCollapse(step int) bool {
	c := t.Cfg.Collapse
	return c.Every > 0 && step%c.Every == 0 && t.Cfg.Agent.EnableThink && t.Dist.Main()
}

// measureCollapse estimates the prompt–think mutual information of trajs
// (package collapse) on collapse.samples (trajectory, turn) pairs picked
// trajectory-uniformly from seed, with its time (timing_s/collapse). The
// map is empty when no turn has a think.
func (t *Trainer) measureCollapse(trajs []rollout.Trajectory, seed uint64) (map[string]float64, error) {
	t0 := time.Now()
	per := make([][]collapse.Sample, len(trajs))
	for i, tr := range trajs {
		for _, turn := range tr.Turns {
			per[i] = append(per[i], collapse.Sample{Prompt: turn.Prompt, Reasoning: turn.ThinkIDs})
		}
	}
	picked := collapse.Pick(per, t.Cfg.Collapse.Samples, seed)
	if len(picked) == 0 {
		return map[string]float64{}, nil
	}
	met, err := collapse.Measure(t.Actor, picked, collapse.Options{
		MicroBatch: max(1, t.Cfg.Algorithm.MicroBatch), ChunkRows: t.Cfg.Algorithm.LMHeadChunk})
	if err != nil {
		return nil, err
	}
	met["timing_s/collapse"] = time.Since(t0).Seconds()
	return met, nil
}
