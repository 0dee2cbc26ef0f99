package starpo

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

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
// trajectories/, checkpoints/, export/.
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
	CheckEvery  int             // data parallel: compare the ranks' weights every this many steps (and at the end); 0 = only at the end
	metrics     *os.File
	firstVal    map[string]float64 // success per tag at the run's first validation, for the console's change since the start
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
	if err := t.checkDevicePaths(); err != nil {
		actor.Drop()
		return nil, err
	}
	if t.ActorLR, err = optim.NewSchedule(cfg.Actor.LR, cfg.Actor.WarmupSteps, cfg.Actor.WarmupRatio, cfg.Steps); err != nil {
		return nil, fmt.Errorf("actor: %w", err)
	}
	if t.CriticLR, err = optim.NewSchedule(cfg.Critic.LR, cfg.Critic.WarmupSteps, cfg.Critic.WarmupRatio, cfg.Steps); err != nil {
		return nil, fmt.Errorf("critic: %w", err)
	}
	if cfg.Algorithm.UseKLLoss || cfg.Algorithm.UseKLInReward {
		// The reference is the starting policy, frozen: a second copy of
		// the weights, never trained (verl's ref worker).
		if t.Ref, err = model.LoadCausalLM(modelDir, opt); err != nil {
			return nil, fmt.Errorf("reference policy: %w", err)
		}
	}
	if err := model.SetTrainable(actor.Params(), true); err != nil {
		return nil, err
	}
	if t.ActorOpt, err = optim.NewAdamW(actor.Params(), optimOptions(cfg.Actor)); err != nil {
		return nil, fmt.Errorf("actor optimiser: %w", err)
	}
	if cfg.Algorithm.AdvEstimator == advantage.EstimatorGAE {
		if t.Critic, err = model.LoadValueModel(modelDir, opt, cfg.Seed); err != nil {
			return nil, err
		}
		if err := model.SetTrainable(t.Critic.Params(), true); err != nil {
			return nil, err
		}
		if t.CriticOpt, err = optim.NewAdamW(t.Critic.Params(), optimOptions(cfg.Critic)); err != nil {
			return nil, fmt.Errorf("critic optimiser: %w", err)
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
	comm := r.Trainer.Dist
	if comm.Main() {
		if err := os.MkdirAll(filepath.Join(r.Dir, "checkpoints"), 0o755); err != nil {
			return fmt.Errorf("creating run folder %s: %w", r.Dir, err)
		}
		if err := r.Cfg.Save(filepath.Join(r.Dir, "config.yaml")); err != nil {
			return err
		}
		if err := r.writeInfo(); err != nil {
			return err
		}
	}
	start := 0
	ckRoot := filepath.Join(r.Dir, "checkpoints")
	if resume {
		latest, err := LatestCheckpoint(ckRoot)
		if err != nil {
			return err
		}
		if latest == "" {
			return fmt.Errorf("--resume: no checkpoint in %s", ckRoot)
		}
		if start, err = r.Trainer.LoadCheckpoint(latest); err != nil {
			return err
		}
		log.Info().Str("checkpoint", latest).Int("step", start).Msg("resumed")
	}
	if err := r.Trainer.SyncReplicas(); err != nil {
		return err
	}
	if comm.Main() {
		f, err := os.OpenFile(filepath.Join(r.Dir, "metrics.jsonl"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		r.metrics = f
	}
	if start == 0 {
		if err := r.validate(0); err != nil {
			return err
		}
	}
	r.Trainer.OnRollout = func(step int, trajs []rollout.Trajectory) error {
		if !comm.Main() || r.Cfg.TrajectoriesEvery == 0 || (step+1)%r.Cfg.TrajectoriesEvery != 0 && step+1 != r.Cfg.Steps {
			return nil
		}
		return rollout.WriteTrajectories(filepath.Join(r.Dir, "trajectories", fmt.Sprintf("train-step-%06d.jsonl", step+1)), trajs)
	}
	watch := NewEchoWatch()
	var bar *progress.Bar
	if r.Bar && comm.Main() {
		bar = progress.New("starpo-s", r.Cfg.Steps-start)
	}
	for step := start; step < r.Cfg.Steps; step++ {
		// A Ctrl-C seen by any rank stops them all at the same step.
		stop, err := comm.Any("stop request", r.Stop != nil && r.Stop())
		if err != nil {
			return err
		}
		if stop {
			log.Warn().Int("step", step).Msg("interrupted: saving a checkpoint")
			r.Interrupted = true
			return r.save(ckRoot, step)
		}
		met, err := r.Trainer.Step(step)
		if err != nil {
			return err
		}
		met["step"] = float64(step + 1)
		if fired := watch.Observe(met); len(fired) > 0 && comm.Main() {
			log.Warn().Int("step", step+1).Strs("signals", fired).
				Float64("in_group_std", met["rollout/in_group_std"]).Float64("entropy", met["actor/entropy_loss"]).
				Float64("grad_norm", met["actor/grad_norm"]).
				Msg("Echo Trap warning: in-group reward variance or entropy is collapsing, or the gradient norm spiked (consider StarPO-S filtering, a lower lr or stopping)")
		}
		if err := r.write(met); err != nil {
			return err
		}
		if bar != nil {
			bar.Set(step+1-start, fmt.Sprintf("score %.3f std %.3f entropy %.3f", met["critic/score/mean"], met["rollout/in_group_std"], met["actor/entropy_loss"]))
		} else {
			logStep(step+1, r.Cfg.Steps, met)
		}
		done := step+1 == r.Cfg.Steps
		if r.Cfg.ValEvery > 0 && (step+1)%r.Cfg.ValEvery == 0 || done {
			if err := r.validate(step + 1); err != nil {
				return err
			}
		}
		if comm != nil && (done || r.CheckEvery > 0 && (step+1)%r.CheckEvery == 0) {
			sum, err := r.Trainer.CheckReplicas()
			if err != nil {
				return fmt.Errorf("after step %d: %w", step+1, err)
			}
			log.Info().Int("step", step+1).Int("ranks", comm.World()).Str("checksum", fmt.Sprintf("%016x", sum)).Msg("weights identical on every rank")
		}
		if r.Cfg.SaveEvery > 0 && (step+1)%r.Cfg.SaveEvery == 0 || done {
			if err := r.save(ckRoot, step+1); err != nil {
				return err
			}
		}
	}
	if !comm.Main() {
		return nil
	}
	exp := filepath.Join(r.Dir, "export")
	if err := model.Export(r.Trainer.Actor.Cfg, r.Trainer.Actor.Params(), exp, model.ExportOptions{DType: r.Trainer.Actor.DType, TokenizerFrom: r.Model}); err != nil {
		return fmt.Errorf("exporting the policy: %w", err)
	}
	log.Info().Str("export", exp).Msg("policy exported in HuggingFace layout")
	r.refreshReport()
	return nil
}

// save writes a checkpoint (rank 0) and refreshes the report; the other
// ranks wait for it, so a job that stops next has it on disk.
func (r *Run) save(root string, step int) error {
	comm := r.Trainer.Dist
	if comm.Main() {
		if _, err := r.Trainer.SaveCheckpoint(root, step); err != nil {
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

// validate runs the fixed validation rollout (validation temperature) and
// writes val-env/ metrics and the trajectories.
func (r *Run) validate(step int) error {
	t0 := time.Now()
	local, _, err := validationRollout(r.Trainer.Actor, r.Trainer.Tok, r.Val, r.Cfg, "")
	if err != nil {
		return fmt.Errorf("validation at step %d: %w", step, err)
	}
	trajs, err := r.Trainer.gatherTrajectories(local)
	if err != nil {
		return fmt.Errorf("validation at step %d: %w", step, err)
	}
	m := rollout.ComputeMetrics(trajs, r.Val.Config().GroupSize)
	r.LastVal = m
	if step == 0 {
		r.StartVal = m
	}
	if !r.Trainer.Dist.Main() {
		return nil
	}
	met := map[string]float64{"step": float64(step), "timing_s/testing": time.Since(t0).Seconds()}
	for k, v := range m {
		met["val-env/"+k] = v
	}
	if err := r.write(met); err != nil {
		return err
	}
	r.logValidation(step, SuccessByTag(m))
	return rollout.WriteTrajectories(filepath.Join(r.Dir, "trajectories", fmt.Sprintf("val-step-%06d.jsonl", step)), trajs)
}

// logValidation prints a validation's success per tag with its change since
// the run's first validation (step 0, read back from metrics.jsonl after a
// --resume), so that learning shows on the console as it happens.
func (r *Run) logValidation(step int, success map[string]float64) {
	if r.firstVal == nil {
		r.firstVal = success
		if step > 0 {
			if first, err := firstValidation(filepath.Join(r.Dir, "metrics.jsonl")); err == nil && first != nil {
				r.firstVal = first
			}
		}
	}
	tags := make([]string, 0, len(success))
	for tag := range success {
		tags = append(tags, tag)
	}
	sort.Strings(tags)
	ev := log.Info().Int("step", step)
	parts := make([]string, 0, len(tags))
	for _, tag := range tags {
		v := success[tag]
		ev = ev.Float64("val-env/"+tag+"/success", v)
		part := fmt.Sprintf("%s %.3f", tag, v)
		if first, ok := r.firstVal[tag]; ok && step > 0 {
			ev = ev.Float64("val-env/"+tag+"/success_change", v-first)
			part += fmt.Sprintf(" (%+.3f since the start)", v-first)
		}
		parts = append(parts, part)
	}
	ev.Msg("validation success: " + strings.Join(parts, ", "))
}

// firstValidation reads the success per tag of the first validation line in
// a metrics file; nil when there is none.
func firstValidation(path string) (map[string]float64, error) {
	m, err := report.LoadMetrics(path)
	if err != nil || len(m.Val) == 0 {
		return nil, err
	}
	out := map[string]float64{}
	for k, v := range m.Val[0] {
		if tag, ok := strings.CutPrefix(k, "val-env/"); ok {
			if tag, ok := strings.CutSuffix(tag, "/success"); ok {
				out[tag] = v
			}
		}
	}
	return out, nil
}

// write appends one metrics line; values that are not finite (a skipped
// step's grad norm, an undefined explained variance) are written as null,
// which JSON can hold and NaN cannot.
func (r *Run) write(met map[string]float64) error {
	if r.metrics == nil { // not rank 0
		return nil
	}
	out := make(map[string]any, len(met))
	for k, v := range met {
		out[k] = jsonNumber(v)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	_, err = r.metrics.Write(append(b, '\n'))
	return err
}

func logStep(step, total int, m map[string]float64) {
	log.Info().Int("step", step).Int("of", total).
		Float64("score", m["critic/score/mean"]).Float64("in_group_std", m["rollout/in_group_std"]).
		Float64("entropy", m["actor/entropy_loss"]).Float64("grad_norm", m["actor/grad_norm"]).
		Float64("pg_clipfrac", m["actor/pg_clipfrac"]).Float64("resp_len", m["train/response_length"]).
		Float64("gen_tok_s", m["perf/gen_tokens_per_s"]).Float64("train_tok_s", m["perf/train_tokens_per_s"]).
		Float64("step_s", m["timing_s/step"]).Msg("train")
}

// jsonNumber is v, or nil (JSON null) when v is NaN or infinite, which
// JSON cannot hold.
func jsonNumber(v float64) any {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return v
}

// SuccessByTag picks the success rates out of rollout metrics, by tag.
func SuccessByTag(m rollout.Metrics) map[string]float64 { return m.ByTag("success") }

// ByTag picks one per-tag rollout metric (success, action_is_valid, …)
// out of m, by tag.
func ByTag(m rollout.Metrics, name string) map[string]float64 { return m.ByTag(name) }

// Close frees the models and optimiser states.
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

// EvaluateCheckpoint runs cfg's validation (cfg.Val's environments from
// cfg.ValSeed, at the validation temperature) on the checkpoint in dir. A
// non-empty bar names a progress bar that advances turn by turn.
func EvaluateCheckpoint(dir string, cfg config.Config, opt model.Options, bar string) ([]rollout.Trajectory, rollout.Metrics, error) {
	tok, err := tokenizer.Load(dir)
	if err != nil {
		return nil, nil, err
	}
	actor, err := model.LoadCausalLM(dir, opt)
	if err != nil {
		return nil, nil, err
	}
	defer actor.Drop()
	mgr, err := rollout.NewManager(cfg.RolloutConfig(cfg.Val, cfg.ValSeed), tok)
	if err != nil {
		return nil, nil, err
	}
	return validationRollout(actor, tok, mgr, cfg, bar)
}

// validationRollout plays mgr's environments from cfg.ValSeed with actor
// at the validation temperature (a progress bar named bar, if not empty).
func validationRollout(actor *model.CausalLM, tok *tokenizer.Tokenizer, mgr *rollout.Manager, cfg config.Config, bar string) ([]rollout.Trajectory, rollout.Metrics, error) {
	if err := mgr.Reset(cfg.ValSeed); err != nil {
		return nil, nil, err
	}
	gen, release := NewGenerator(actor, tok, genOptions(cfg, cfg.Rollout.ValTemperature))
	defer release()
	if bar != "" {
		gen = withTurnBar(gen, bar, cfg.Agent.MaxTurn)
	}
	return mgr.Run(gen)
}

// withTurnBar advances a progress bar of maxTurn turns at each call of gen
// (one call per turn), showing how many episodes are still going.
func withTurnBar(gen rollout.Generator, name string, maxTurn int) rollout.Generator {
	b := progress.New(name, maxTurn)
	turn := 0
	return func(prompts [][]int) ([]rollout.Generation, error) {
		out, err := gen(prompts)
		turn++
		b.Set(turn, fmt.Sprintf("%d episodes in turn %d", len(prompts), turn))
		return out, err
	}
}
