package sft

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/sugarme/gotch/ts"

	"github.com/ragen-go/ragen/internal/torchrt"
	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/starpo/batch"
	"github.com/ragen-go/ragen/starpo/loss"
	"github.com/ragen-go/ragen/starpo/optim"
	"github.com/ragen-go/ragen/starpo/rollout"
)

// Options are the supervised stage's settings.
type Options struct {
	Epochs     int     // passes over the demonstrations
	Batch      int     // demonstrations per optimiser step
	MicroBatch int     // training rows per forward/backward (a demonstration; a turn under a context window)
	GradClip   float64 // global gradient-norm clip
	ChunkRows  int     // lm-head chunk
	Seed       int64   // shuffling
}

// Step is one optimiser step's report.
type Step struct {
	Step, Total int
	Loss        float64 // token-mean negative log-likelihood of the trained tokens
	GradNorm    float64
	Tokens      int // trained (assistant) tokens in the step
	Skipped     bool
}

// Train fine-tunes actor on demos: token-mean negative log-likelihood of the
// trained (sampled-position) tokens, the same loss mask the RL update uses,
// Epochs passes in a seeded shuffled order, one optimiser step per Batch
// trajectories, the step skipped when the loss or gradient is not finite.
// onStep sees every step; stop is polled between steps (nil: never) and
// ends the loop early without error. It returns the steps taken.
func Train(actor *model.CausalLM, opt *optim.AdamW, demos []rollout.Trajectory, o Options, onStep func(Step),
	stop func() bool) (steps int, err error) {
	if len(demos) == 0 {
		return 0, fmt.Errorf("sft: no demonstrations")
	}
	o.Batch, o.MicroBatch, o.Epochs = max(1, o.Batch), max(1, o.MicroBatch), max(1, o.Epochs)
	perEpoch := (len(demos) + o.Batch - 1) / o.Batch
	total := perEpoch * o.Epochs
	rng := rand.New(rand.NewPCG(uint64(o.Seed), 0x5F7))
	order := make([]int, len(demos))
	for i := range order {
		order[i] = i
	}
	for epoch := range o.Epochs {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for lo := 0; lo < len(order); lo += o.Batch {
			if stop != nil && stop() {
				return steps, nil
			}
			var part []rollout.Trajectory
			for _, i := range order[lo:min(len(order), lo+o.Batch)] {
				part = append(part, demos[i])
			}
			rows, _, _ := batch.Sequences(part)
			rep, err := sftStep(actor, opt, batch.New(rows), o)
			if err != nil {
				return steps, fmt.Errorf("sft step %d (epoch %d): %w", steps+1, epoch+1, err)
			}
			steps++
			rep.Step, rep.Total = steps, total
			if onStep != nil {
				onStep(rep)
			}
		}
	}
	return steps, nil
}

func sftStep(actor *model.CausalLM, opt *optim.AdamW, b *batch.Batch, o Options) (rep Step, err error) {
	defer torchrt.Catch(&err, "sft step")
	if err := opt.ZeroGrad(); err != nil {
		return rep, err
	}
	micro := batch.Split(0, b.Rows, o.MicroBatch)
	for _, mb := range micro {
		l, n, err := sftMicro(actor, b, mb, len(micro), o.ChunkRows)
		if err != nil {
			return rep, err
		}
		rep.Loss += l / float64(len(micro))
		rep.Tokens += n
	}
	if math.IsNaN(rep.Loss) || math.IsInf(rep.Loss, 0) {
		rep.Skipped, rep.GradNorm = true, math.NaN()
		return rep, opt.ZeroGrad()
	}
	norm, stepped, err := optim.StepIfFinite(opt, o.GradClip)
	rep.GradNorm, rep.Skipped = norm, !stepped
	return rep, err
}

// sftMicro accumulates one micro-batch's gradient of NLL/n and returns the
// micro-batch's loss and trained-token count.
func sftMicro(actor *model.CausalLM, b *batch.Batch, mb batch.Span, n, chunk int) (float64, int, error) {
	var s torchrt.Scope
	defer s.Drop()
	ids, attn, resp := b.Micro(mb, actor.Device, &s)
	sc, err := actor.ScoreForTraining(ids, attn, resp, chunk)
	if err != nil {
		return 0, 0, err
	}
	defer sc.Drop()
	nll := s.Op(sc.LogProbs.Neg(false))
	l, err := loss.Aggregate(nll, resp, loss.TokenMean)
	if err != nil {
		return 0, 0, err
	}
	s.Keep(l)
	v := float64(model.Float32s(l)[0])
	if err := s.Op(l.DivScalar(ts.FloatScalar(float64(n)), false)).Backward(); err != nil {
		return 0, 0, err
	}
	tokens := 0
	for _, r := range b.Resp[mb.Lo:mb.Hi] {
		for _, m := range r {
			tokens += int(m)
		}
	}
	return v, tokens, sc.Backward()
}
