package bench

import (
	"maps"
	"time"

	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/starpo"
	"github.com/ragen-go/ragen/starpo/advantage"
	"github.com/ragen-go/ragen/starpo/config"
	"github.com/ragen-go/ragen/starpo/optim"
	"github.com/ragen-go/ragen/starpo/rollout"
)

// update times the critic's values, then the actor's and the critic's PPO
// epochs (StarPO-S with RAGEN's settings, no filter, one mini-batch of all
// the trajectories) on trajs, through the trainer's own code, o.Repeat
// times on each side, alternating; the fastest counts (each repeat is a
// further optimiser step on the same batch, the same work).
func (r *runner) update(mgr *rollout.Manager, trajs []rollout.Trajectory) error {
	o := r.o
	cfg := config.Default()
	critic, err := model.LoadValueModel(r.dir, r.place, o.Seed)
	if err != nil {
		return err
	}
	defer critic.Drop()
	if err := model.SetTrainable(r.m.Params(), true); err != nil {
		return err
	}
	defer model.SetTrainable(r.m.Params(), false)
	if err := model.SetTrainable(critic.Params(), true); err != nil {
		return err
	}
	actorOpt, err := optim.NewAdamW(r.m.Params(), optim.DefaultOptions(cfg.Actor.LR))
	if err != nil {
		return err
	}
	defer actorOpt.Drop()
	criticOpt, err := optim.NewAdamW(critic.Params(), optim.DefaultOptions(cfg.Critic.LR))
	if err != nil {
		return err
	}
	defer criticOpt.Drop()
	a := &cfg.Algorithm
	a.FilterRatio, a.PPOMiniBatch, a.MicroBatch = 1, 0, o.MicroBatch
	t := &starpo.Trainer{Cfg: cfg, Actor: r.m, Critic: critic, Tok: r.tok, Envs: mgr, ActorOpt: actorOpt, CriticOpt: criticOpt}

	r.o.logf("update: critic values of %d trajectories", len(trajs))
	t0 := time.Now()
	rec := starpo.NewRecorder(0)
	bb, err := t.Prepare(trajs, trajs, rec)
	if err != nil {
		return err
	}
	if err := t.Advantages(bb, rec); err != nil {
		return err
	}
	valuesS := time.Since(t0).Seconds()
	lengths, trained := rowCounts(bb)
	tokens := 0
	for _, n := range lengths {
		tokens += n
	}
	var actorF, criticF float64
	for i, n := range lengths {
		actorF += TrainFLOPs(r.m.Cfg, n, trained[i])
		criticF += TrainFLOPs(r.m.Cfg, n, 0) + CriticHeadFLOPs(r.m.Cfg, n)
	}
	req := r.batchRequest(bb, cfg)

	// The baseline's critic starts from our freshly drawn score head.
	scoreW, scoreB := model.Float32s(critic.Score.Weight), model.Float32s(critic.Score.Bias)
	for _, side := range []struct {
		name, label, cmd string
		flops            float64
		critic           bool
		run              func(*starpo.Recorder) error
		normKey          string
		extra            map[string]any
	}{
		{"update_actor", "update actor (PPO)", "train_actor", actorF,
			false,
			func(rec *starpo.Recorder) error { return t.UpdateActor(0, bb, rec) }, "actor/grad_norm", nil},
		{"update_critic", "update critic (PPO)", "train_critic", criticF,
			true,
			func(rec *starpo.Recorder) error { return t.UpdateCritic(0, bb, rec) }, "critic/grad_norm",
			map[string]any{"score_weight": scoreW, "score_bias": scoreB}},
	} {
		r.o.logf("%s: %d trajectories, %d tokens, micro-batch %d", side.label, bb.Rows, tokens, o.MicroBatch)
		if err := t.WarmUp(bb, side.critic); err != nil {
			return err
		}
		res := Result{Name: side.name, Label: side.label, Batch: bb.Rows, Tokens: tokens * max(1, a.PPOEpochs), FLOPs: side.flops * float64(max(1, a.PPOEpochs))}
		// The mean gradient norm before clipping of the first update on
		// each side: equal (to fp32 rounding) when both compute the same
		// loss from the same weights.
		res.Details = map[string]float64{"padded_length": float64(bb.Length), "critic_values_seconds": valuesS}
		request := map[string]any{"cmd": side.cmd, "batch": req, "warmup": true}
		maps.Copy(request, side.extra)
		err := r.interleave(&res, func() (float64, memoryFigures, error) {
			w := watchMemory(r.gpu())
			t1 := time.Now()
			rec := starpo.NewRecorder(0)
			err := side.run(rec)
			sec := time.Since(t1).Seconds()
			if _, ok := res.Details["grad_norm"]; !ok {
				res.Details["grad_norm"] = rec.Metrics[side.normKey]
			}
			return sec, w.end(), err
		}, func() (torchTiming, error) {
			r.o.logf("%s: PyTorch", side.label)
			tt, err := r.torch.Run(request)
			if _, ok := res.Details["torch_grad_norm"]; !ok {
				res.Details["torch_grad_norm"] = advantage.Mean(tt.GradNorms)
			}
			request["warmup"] = false
			return tt, err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// rowCounts are each row's real tokens and trained positions.
func rowCounts(bb *starpo.Batch) (lengths, trained []int) {
	lengths, trained = make([]int, bb.Rows), make([]int, bb.Rows)
	for i := range bb.Rows {
		for _, a := range bb.Attn[i*bb.Length : (i+1)*bb.Length] {
			lengths[i] += int(a)
		}
		for _, m := range bb.Resp[i] {
			if m != 0 {
				trained[i]++
			}
		}
	}
	return lengths, trained
}

// batchRequest is the batch and the update's settings as the baseline
// takes them (it implements StarPO's token-mean aggregation, the only one
// the benchmark uses).
func (r *runner) batchRequest(bb *starpo.Batch, cfg config.Config) map[string]any {
	a := cfg.Algorithm
	return map[string]any{
		"rows": bb.Rows, "length": bb.Length, "ids": bb.IDs, "attn": bb.Attn,
		"resp": bb.Resp, "old_logp": bb.OldLogProbs, "adv": bb.Advantages, "returns": bb.Returns, "old_values": bb.OldValues,
		"micro_batch": a.MicroBatch, "mini_batch": a.PPOMiniBatch, "epochs": a.PPOEpochs,
		"clip_low": a.ClipLow, "clip_high": a.ClipHigh, "clip_c": a.ClipC, "entropy_coef": a.EntropyCoef,
		"value_clip": a.ValueClip, "grad_clip": cfg.Actor.GradClip, "critic_grad_clip": cfg.Critic.GradClip,
		"actor_lr": cfg.Actor.LR, "critic_lr": cfg.Critic.LR, "weight_decay": cfg.Actor.WeightDecay,
	}
}
