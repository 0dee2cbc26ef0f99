package starpo

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rs/zerolog/log"

	"github.com/ragen-go/ragen/dist"
	"github.com/ragen-go/ragen/internal/progress"
	"github.com/ragen-go/ragen/internal/torchrt"
	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/report"
	"github.com/ragen-go/ragen/starpo/advantage"
	"github.com/ragen-go/ragen/starpo/config"
	"github.com/ragen-go/ragen/starpo/optim"
	"github.com/ragen-go/ragen/starpo/rollout"
	"github.com/ragen-go/ragen/tokenizer"
)

// Run is a training run in its folder: config.yaml (effective), metrics.jsonl,
// trajectories/, checkpoints/, export/. This file is the loop (Execute);
// validation is in validate.go, the metrics file in metrics.go, checkpoints
// in checkpoint.go, --resume in resume.go and the bound on their disk use
// in keep.go.
type Run struct {
	Cfg         config.Config
	Dir         string
	Model       string // checkpoint folder the run starts from
	Trainer     *Trainer
	Val         *rollout.Manager
	Stop        func() bool     // polled between steps (Ctrl-C); nil = never
	Bar         bool            // draw a progress bar for the steps instead of a log line per step
	LastVal     rollout.Metrics // the latest validation's metrics
	StartVal    rollout.Metrics // the step-0 validation's metrics: the starting model's (nil after a --resume)
	Interrupted bool            // Stop ended the run early (a checkpoint was saved, nothing exported)
	CheckEvery  int             // data parallel: compare the ranks' weights every N steps and at the end (0: end only)
	SkipVerify  bool            // resume from a checkpoint without checking it against its manifest.json
	metrics     *os.File
	firstVal    map[string]float64 // success per tag at the first validation (the console's change since the start)
	watch       *EchoWatch         // the Echo-Trap watch over the training steps (replayed up to the step resumed at)
	saved       int                // the step of the newest checkpoint on disk; -1 none
}

// NewRun loads the models and builds the trainer; nothing is written yet.
// With comm (nil: alone) the run is one rank of a data-parallel job: it
// plays its shard of the training and validation groups, and only rank 0
// writes the run folder.
func NewRun(cfg config.Config, modelDir, out string, opt model.Options, comm *dist.Comm) (*Run, error) {
	tok, err := tokenizer.Load(modelDir)
	if err != nil {
		return nil, err
	}
	actor, err := model.LoadCausalLM(modelDir, opt)
	if err != nil {
		return nil, err
	}
	t := &Trainer{Cfg: cfg, Actor: actor, Tok: tok, Dist: comm}
	if err := addActorAdapters(cfg, actor); err != nil {
		actor.Drop()
		return nil, err
	}
	if err := t.checkDevicePaths(); err != nil {
		actor.Drop()
		return nil, err
	}
	if t.ActorLR, err = schedule(cfg.Actor, cfg.Steps); err != nil {
		return nil, fmt.Errorf("actor: %w", err)
	}
	if t.CriticLR, err = schedule(cfg.Critic, cfg.Steps); err != nil {
		return nil, fmt.Errorf("critic: %w", err)
	}
	if cfg.Algorithm.UseKLLoss || cfg.Algorithm.UseKLInReward {
		// The reference is the starting policy, frozen: a second copy of
		// the weights, never trained (verl's ref worker); with LoRA the
		// actor's own base (lora.go).
		if t.Ref, err = loadReference(cfg, actor, modelDir, opt); err != nil {
			return nil, fmt.Errorf("reference policy: %w", err)
		}
	}
	if t.ActorOpt, err = newOptimiser(actor.State(), actor.Cfg.NumHiddenLayers, cfg.Actor); err != nil {
		return nil, fmt.Errorf("actor: %w", err)
	}
	if cfg.Algorithm.AdvEstimator == advantage.EstimatorGAE {
		if t.Critic, err = loadCritic(cfg, actor, modelDir, opt); err != nil {
			return nil, err
		}
		if t.CriticOpt, err = newOptimiser(t.Critic.State(), t.Critic.Cfg.NumHiddenLayers, cfg.Critic); err != nil {
			return nil, fmt.Errorf("critic: %w", err)
		}
	}
	shard := rollout.Shard{Rank: comm.Rank(), World: comm.World()}
	trc := cfg.RolloutConfig(cfg.Train, cfg.Seed)
	trc.Shard = shard
	if t.Envs, err = rollout.NewManager(trc, tok); err != nil {
		return nil, fmt.Errorf("training environments: %w", err)
	}
	vrc := cfg.RolloutConfig(cfg.Val, cfg.ValSeed)
	vrc.Shard = shard
	val, err := rollout.NewManager(vrc, tok)
	if err != nil {
		return nil, fmt.Errorf("validation environments: %w", err)
	}
	return &Run{Cfg: cfg, Dir: out, Model: modelDir, Trainer: t, Val: val}, nil
}

// schedule is o's learning rate per step of a run of steps.
func schedule(o config.Optim, steps int) (optim.Schedule, error) {
	return optim.NewSchedule(o.LR, o.WarmupSteps, o.WarmupRatio, steps)
}

// newOptimiser makes the weights o trains require gradients and gives them
// to an AdamW: of a model's State, all of it (every weight, or a LoRA
// model's adapters and value head) or the top train_layers layers
// (model.TopLayers).
func newOptimiser(params []model.Param, layers int, o config.Optim) (*optim.AdamW, error) {
	train, err := model.TopLayers(params, layers, o.TrainLayers)
	if err != nil {
		return nil, err
	}
	if err := model.SetTrainable(train, true); err != nil {
		return nil, err
	}
	adam, err := optim.NewAdamW(train, optimOptions(o))
	if err != nil {
		return nil, fmt.Errorf("optimiser: %w", err)
	}
	return adam, nil
}

func optimOptions(o config.Optim) optim.Options {
	oo := optim.DefaultOptions(o.LR)
	oo.WeightDecay = o.WeightDecay
	return oo
}

// Execute trains from the latest checkpoint (when resume) or from the
// start, validating, logging and checkpointing, and exports the policy.
//
// In a data-parallel job every rank calls Execute: they resume from the
// same checkpoint (the run folder must be shared), start from rank 0's
// weights, and stop together; rank 0 alone writes files.
func (r *Run) Execute(resume bool) error {
	start, err := r.begin(resume)
	if err != nil {
		return err
	}
	defer r.closeMetrics()
	if start == 0 {
		if err := r.validate(0); err != nil {
			return err
		}
	}
	r.Trainer.OnRollout = r.writeTrainTrajectories
	var bar *progress.Bar
	if r.Bar && r.Trainer.Dist.Main() {
		bar = progress.New("starpo-s", r.Cfg.Steps-start)
	}
	for step := start; step < r.Cfg.Steps; step++ {
		// A Ctrl-C seen by any rank stops them all at the same step.
		stop, err := r.Trainer.Dist.Any("stop request", r.Stop != nil && r.Stop())
		if err != nil {
			return err
		}
		if stop {
			log.Warn().Int("step", step).Msg("interrupted: saving a checkpoint")
			r.Interrupted = true
			return r.save(step)
		}
		met, err := r.Trainer.Step(step)
		if err != nil {
			return err
		}
		if err := r.record(step+1, met, r.watch, bar, start); err != nil {
			return err
		}
		if err := r.afterStep(step + 1); err != nil {
			return err
		}
	}
	return r.export()
}

// begin prepares the run folder (rank 0), resumes from its latest
// checkpoint when asked, gives every rank rank 0's weights and opens the
// metrics file. It returns the steps already done.
func (r *Run) begin(resume bool) (start int, err error) {
	r.watch, r.saved = NewEchoWatch(r.Cfg.Echo), -1
	if r.Trainer.Dist.Main() {
		if err := os.MkdirAll(filepath.Join(r.Dir, "checkpoints"), 0o755); err != nil {
			return 0, fmt.Errorf("creating run folder %s: %w", r.Dir, err)
		}
		if err := r.Cfg.Save(filepath.Join(r.Dir, "config.yaml")); err != nil {
			return 0, err
		}
		if err := r.writeInfo(); err != nil {
			return 0, err
		}
	}
	if resume {
		if start, err = r.resume(); err != nil {
			return 0, err
		}
	}
	if err := r.Trainer.SyncReplicas(); err != nil {
		return 0, err
	}
	return start, r.openMetrics()
}

// afterStep validates, compares the ranks' weights and checkpoints when
// the schedule says so after done steps.
func (r *Run) afterStep(done int) error {
	comm, last := r.Trainer.Dist, done == r.Cfg.Steps
	if r.Cfg.ValEvery > 0 && done%r.Cfg.ValEvery == 0 || last {
		if err := r.validate(done); err != nil {
			return err
		}
	}
	if comm != nil && (last || r.CheckEvery > 0 && done%r.CheckEvery == 0) {
		sum, err := r.Trainer.CheckReplicas()
		if err != nil {
			return fmt.Errorf("after step %d: %w", done, err)
		}
		log.Info().Int("step", done).Int("ranks", comm.World()).Str("checksum", fmt.Sprintf("%016x", sum)).
			Msg("weights identical on every rank")
	}
	if r.Cfg.SaveEvery > 0 && done%r.Cfg.SaveEvery == 0 || last {
		return r.save(done)
	}
	return nil
}

// export writes the trained policy in HuggingFace's layout (rank 0) and
// refreshes the report.
func (r *Run) export() error {
	if !r.Trainer.Dist.Main() {
		return nil
	}
	a, exp := r.Trainer.Actor, filepath.Join(r.Dir, "export")
	opts := model.ExportOptions{DType: a.DType, TokenizerFrom: r.Model}
	params, release, err := a.MergedParams() // a LoRA policy's adapters folded in
	if err != nil {
		return fmt.Errorf("exporting the policy: %w", err)
	}
	err = model.Export(a.Cfg, params, exp, opts)
	release()
	if err != nil {
		return fmt.Errorf("exporting the policy: %w", err)
	}
	if err := writeManifest(exp, r.Cfg, r.Cfg.Steps); err != nil {
		return fmt.Errorf("exporting the policy: %w", err)
	}
	log.Info().Str("export", exp).Msg("policy exported in HuggingFace layout")
	if err := r.exportAdapter(); err != nil {
		return fmt.Errorf("exporting the adapters: %w", err)
	}
	r.refreshReport()
	return nil
}

func (r *Run) checkpoints() string { return filepath.Join(r.Dir, "checkpoints") }

// save writes a checkpoint (rank 0) and refreshes the report; the other
// ranks wait for it, so a job that stops next has it on disk. The record
// up to step is synced first, so that a checkpoint on disk implies its
// metrics are. A checkpoint of step already on disk (Ctrl-C before the
// first step of a resumed run) is not written again.
func (r *Run) save(step int) error {
	comm := r.Trainer.Dist
	if comm.Main() && step != r.saved {
		if err := r.syncRecord(); err != nil {
			return err
		}
		root := r.checkpoints()
		if err := checkSpace(root, r.Trainer.checkpointBytes()); err != nil {
			return err
		}
		if _, err := r.Trainer.SaveCheckpoint(root, step); err != nil {
			return err
		}
		r.saved = step
		if err := pruneCheckpoints(root, step, r.Cfg.KeepCheckpoints, r.Cfg.KeepEvery); err != nil {
			return err
		}
		r.refreshReport()
	}
	return comm.Barrier(fmt.Sprintf("waiting for rank 0's checkpoint of step %d", step))
}

// refreshReport rewrites report.html; a failure is logged, never fatal: the
// report is a view of the run's files, which are intact either way.
func (r *Run) refreshReport() {
	path, err := report.Write(r.Dir)
	if err != nil {
		log.Warn().Err(err).Msg("could not write the run report")
		return
	}
	log.Info().Str("report", path).Msg("run report written")
}

// writeInfo records what the run trains, where: run.json, for the report.
func (r *Run) writeInfo() error {
	a := r.Trainer.Actor
	info := map[string]any{
		"model": r.Model, "device": torchrt.DeviceName(a.Device), "dtype": model.DTypeName(a.DType),
		"parameters": model.CountParams(a.Params()), "libtorch": torchrt.Describe().LibtorchVersion,
	}
	b, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(r.Dir, "run.json"), append(b, '\n'), 0o644)
}

// Close frees the models and optimiser states (a LoRA run's reference and
// critic free only what is theirs, not the actor's base).
func (r *Run) Close() {
	t := r.Trainer
	t.ActorOpt.Drop()
	t.Actor.Drop()
	if t.Ref != nil {
		t.Ref.Drop()
	}
	if t.Critic != nil {
		t.CriticOpt.Drop()
		t.Critic.Drop()
	}
}
