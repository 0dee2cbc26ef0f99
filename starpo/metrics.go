package starpo

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/rs/zerolog/log"

	"github.com/ragen-go/ragen/internal/durable"
	"github.com/ragen-go/ragen/internal/progress"
	"github.com/ragen-go/ragen/starpo/rollout"
)

// A run's record, written by rank 0: metrics.jsonl, one line per training
// step and per validation, and the training trajectories every
// trajectories_every steps (trajectories/train-step-NNNNNN.jsonl).

// openMetrics opens metrics.jsonl for appending (rank 0; a resumed run
// continues it).
func (r *Run) openMetrics() error {
	if !r.Trainer.Dist.Main() {
		return nil
	}
	f, err := os.OpenFile(filepath.Join(r.Dir, "metrics.jsonl"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	r.metrics = f
	return nil
}

func (r *Run) closeMetrics() {
	if r.metrics != nil {
		r.metrics.Close()
	}
}

// syncRecord syncs metrics.jsonl and the trajectory files to disk.
func (r *Run) syncRecord() error {
	if r.metrics != nil {
		if err := r.metrics.Sync(); err != nil {
			return fmt.Errorf("syncing %s: %w", r.metrics.Name(), err)
		}
	}
	if err := durable.SyncFolder(filepath.Join(r.Dir, "trajectories")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// record writes a training step's metrics (done steps so far) with the
// Echo Trap's warnings, and shows the step on the progress bar or as a log
// line.
func (r *Run) record(done int, met map[string]float64, watch *EchoWatch, bar *progress.Bar, start int) error {
	met["step"] = float64(done)
	if fired := watch.Observe(met); len(fired) > 0 && r.Trainer.Dist.Main() {
		log.Warn().Int("step", done).Strs("signals", fired).
			Float64("in_group_std", met["rollout/in_group_std"]).Float64("entropy", met["actor/entropy_loss"]).
			Float64("grad_norm", met["actor/grad_norm"]).
			Msg("Echo Trap warning: in-group reward variance or entropy is collapsing, " +
				"or the gradient norm spiked (consider StarPO-S filtering, a lower lr or stopping)")
	}
	if err := r.write(met); err != nil {
		return err
	}
	if bar != nil {
		bar.Set(done-start, fmt.Sprintf("score %.3f std %.3f entropy %.3f",
			met["critic/score/mean"], met["rollout/in_group_std"], met["actor/entropy_loss"]))
	} else {
		logStep(done, r.Cfg.Steps, met)
	}
	return nil
}

// writeTrainTrajectories is the trainer's OnRollout: rank 0 writes step's
// trajectories every trajectories_every steps and at the last.
func (r *Run) writeTrainTrajectories(step int, trajs []rollout.Trajectory) error {
	every := r.Cfg.TrajectoriesEvery
	if !r.Trainer.Dist.Main() || every == 0 || (step+1)%every != 0 && step+1 != r.Cfg.Steps {
		return nil
	}
	path := filepath.Join(r.Dir, "trajectories", fmt.Sprintf("train-step-%06d.jsonl", step+1))
	return rollout.WriteTrajectories(path, trajs)
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
