package starpo

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/rs/zerolog/log"

	"github.com/ragen-go/ragen/internal/progress"
	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/report"
	"github.com/ragen-go/ragen/starpo/config"
	"github.com/ragen-go/ragen/starpo/rollout"
	"github.com/ragen-go/ragen/tokenizer"
)

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
	if r.Cfg.Collapse.Every > 0 && r.Cfg.Agent.EnableThink {
		cm, err := r.Trainer.measureCollapse(trajs, uint64(step))
		if err != nil {
			return fmt.Errorf("validation at step %d: template collapse: %w", step, err)
		}
		for k, v := range cm {
			met["val-env/"+k] = v
		}
	}
	if err := r.write(met); err != nil {
		return err
	}
	r.logValidation(step, SuccessByTag(m))
	path := filepath.Join(r.Dir, "trajectories", fmt.Sprintf("val-step-%06d.jsonl", step))
	return rollout.WriteTrajectories(path, trajs)
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

// SuccessByTag picks the success rates out of rollout metrics, by tag.
func SuccessByTag(m rollout.Metrics) map[string]float64 { return m.ByTag("success") }

// ByTag picks one per-tag rollout metric (success, action_is_valid, …)
// out of m, by tag.
func ByTag(m rollout.Metrics, name string) map[string]float64 { return m.ByTag(name) }

// EvaluateCheckpoint runs cfg's validation (cfg.Val's environments from
// cfg.ValSeed, at the validation temperature) on the checkpoint in dir. A
// non-empty bar names a progress bar that advances turn by turn.
func EvaluateCheckpoint(dir string, cfg config.Config, opt model.Options, bar string) ([]rollout.Trajectory,
	rollout.Metrics, error) {
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
func validationRollout(actor *model.CausalLM, tok *tokenizer.Tokenizer, mgr *rollout.Manager, cfg config.Config,
	bar string) ([]rollout.Trajectory, rollout.Metrics, error) {
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
