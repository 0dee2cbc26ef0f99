package starpo

import (
	"fmt"

	"github.com/sugarme/gotch"

	"github.com/ragen-go/ragen/internal/torchrt"
	"github.com/ragen-go/ragen/starpo/rollout"
)

// BenchBatch is a rollout's trajectories prepared for the update exactly as
// Step prepares them (score normalisation, the StarPO-S filter of the
// trainer's config, the critic's values and GAE with whitening, or GRPO),
// for `ragen bench` to time the actor's and the critic's PPO epochs on, and
// to hand to a baseline implementation. The exported fields are the batch
// as the update sees it: left-padded token coordinates [Rows·Length] and
// response coordinates [Rows][Length−1].
type BenchBatch struct {
	Rows, Length int
	IDs, Attn    []int64
	Resp         [][]float64 // 1 where the next token was sampled (trained)
	OldLogProbs  [][]float64
	Advantages   [][]float64
	Returns      [][]float64
	OldValues    [][]float64 // nil without a critic

	b *batch
}

// PrepareBench is the part of Step between the rollout and the updates,
// for a trainer that trains alone (trajs are all the trajectories).
func (t *Trainer) PrepareBench(trajs []rollout.Trajectory) (bb *BenchBatch, err error) {
	defer torchrt.Catch(&err, "preparing the benchmark batch")
	rewards, b, err := t.selectKept(trajs, trajs, map[string]float64{})
	if err != nil {
		return nil, err
	}
	bb = &BenchBatch{Rows: b.B, Length: b.L, IDs: b.ids, Attn: b.attn, Resp: b.resp, OldLogProbs: b.oldLogp, b: b}
	if bb.Advantages, bb.Returns, bb.OldValues, err = t.advantages(rewards, b); err != nil {
		return nil, err
	}
	return bb, nil
}

// BenchActor runs the actor's PPO epochs on bb, as Step does, and returns
// their metrics.
func (t *Trainer) BenchActor(step int, bb *BenchBatch) (metrics map[string]float64, err error) {
	defer torchrt.Catch(&err, "actor update")
	met := map[string]float64{}
	return met, t.updateActor(step, bb.b, bb.Advantages, nil, met)
}

// BenchCritic runs the critic's PPO epochs on bb, as Step does.
func (t *Trainer) BenchCritic(step int, bb *BenchBatch) (metrics map[string]float64, err error) {
	defer torchrt.Catch(&err, "critic update")
	if t.Critic == nil || bb.OldValues == nil {
		return nil, fmt.Errorf("the critic update needs a critic and the batch's values")
	}
	met := map[string]float64{}
	return met, t.updateCritic(step, bb.b, bb.OldValues, bb.Returns, met)
}

// BenchWarmUp runs one untimed micro-batch forward and backward of the
// actor (critic false) or the critic on bb, then zeroes the gradients. The
// first training pass of a process grows the heap by the activations'
// size, and the kernel zeroes every new page: on the 50M benchmark preset
// that made the first micro-batch three times slower than the next, so the
// benchmark times each update after this, as a training loop's steady
// state.
func (t *Trainer) BenchWarmUp(bb *BenchBatch, critic bool) (err error) {
	defer torchrt.Catch(&err, "update warm-up")
	var s torchrt.Scope
	defer s.Drop()
	mb := span{0, min(max(1, t.Cfg.Algorithm.MicroBatch), bb.Rows)}
	if critic {
		v := s.Op(t.Critic.Values(inputs(bb.b, mb, t.Critic.Device, t.Critic.DType, &s)))
		torchrt.Check(s.Op(v.Sum(gotch.Float, false)).Backward())
		return t.CriticOpt.ZeroGrad()
	}
	ids, attn, resp := bb.b.microTensors(mb, t.Actor.Device, &s)
	sc, err := t.Actor.ScoreForTraining(ids, attn, resp, t.Cfg.Algorithm.LMHeadChunk)
	if err != nil {
		return err
	}
	defer sc.Drop()
	l := s.Op(s.Op(sc.LogProbs.Mul(resp, false)).Sum(gotch.Float, false))
	torchrt.Check(l.Backward())
	torchrt.Check(sc.Backward())
	return t.ActorOpt.ZeroGrad()
}
