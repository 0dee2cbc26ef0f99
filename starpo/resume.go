package starpo

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/rs/zerolog/log"

	"github.com/ragen-go/ragen/internal/durable"
	"github.com/ragen-go/ragen/report"
)

// A run killed between checkpoints has recorded steps that its latest
// checkpoint does not hold; --resume trains them again. So that the
// record holds each step once, as an uninterrupted run's would, the resume
// first cuts it back to the checkpoint's step: the metrics lines of later
// steps, and the trajectory files of later steps, move aside into
// <file>.rolled-back (appended to, so nothing is ever lost).

// resume loads the latest checkpoint, checked against its manifest unless
// SkipVerify, and returns its step (0 when there is none yet: startOver). Rank 0 then cuts the run's record back
// to that step (rollBack), replays the kept training steps into the
// Echo-Trap watch, so that the resumed run records what an uninterrupted
// one would, and prunes the checkpoints the keep rule lets go.
func (r *Run) resume() (int, error) {
	root := r.checkpoints()
	latest, err := LatestCheckpoint(root)
	if err != nil {
		return 0, err
	}
	if latest == "" {
		return 0, r.startOver(root)
	}
	if r.SkipVerify {
		log.Warn().Str("checkpoint", latest).Msg("--skip-verify: loading the checkpoint without checking its manifest.json")
	} else if err := VerifyCheckpoint(latest, r.Cfg); err != nil {
		return 0, err
	}
	start, err := r.Trainer.LoadCheckpoint(latest)
	if err != nil {
		return 0, err
	}
	r.saved = start
	if r.Trainer.Dist.Main() {
		train, err := rollBack(r.Dir, start)
		if err != nil {
			return 0, fmt.Errorf("--resume: cutting the run's record back to step %d: %w", start, err)
		}
		for _, row := range train {
			r.watch.Observe(row)
		}
		if err := pruneCheckpoints(root, start, r.Cfg.KeepCheckpoints, r.Cfg.KeepEvery); err != nil {
			return 0, err
		}
	}
	log.Info().Str("checkpoint", latest).Int("step", start).Msg("resumed")
	return start, nil
}

// startOver is --resume on a run folder without a checkpoint: a run killed
// before its first (or a job script that always passes --resume) trains
// from step 0, its earlier record rolled back as a resume's would be, so
// that metrics.jsonl does not hold step 0's validation twice.
func (r *Run) startOver(root string) error {
	log.Warn().Str("checkpoints", root).Msg("--resume: no checkpoint yet; training from step 0")
	if !r.Trainer.Dist.Main() {
		return nil
	}
	if _, err := rollBack(r.Dir, -1); err != nil {
		return fmt.Errorf("--resume: rolling back the run's record: %w", err)
	}
	return pruneCheckpoints(root, -1, r.Cfg.KeepCheckpoints, r.Cfg.KeepEvery) // leftover .partial folders
}

// rolledBack is the suffix of the files that keep what a resume rolled back.
const rolledBack = ".rolled-back"

// rollBack cuts the run folder's record back to step completed steps and
// returns the kept training lines of metrics.jsonl, in order, for the
// Echo-Trap watch to replay.
func rollBack(dir string, step int) ([]map[string]float64, error) {
	train, err := rollBackMetrics(filepath.Join(dir, "metrics.jsonl"), step)
	if err != nil {
		return nil, err
	}
	return train, rollBackTrajectories(dir, step)
}

// rollBackMetrics keeps the lines of the metrics file at path whose step
// is ≤ step. The others (and a line cut short by the kill, or any other
// line that is not a metrics object with a step) are appended to
// path.rolled-back and synced first; then the kept lines replace the file
// atomically (durable.WriteFile). A crash between the two leaves the
// removed lines in both files, never in neither.
func rollBackMetrics(path string, step int) ([]map[string]float64, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var kept, removed bytes.Buffer
	var train []map[string]float64
	lines := 0
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		row, ok := metricsRow(line)
		if !ok || row["step"] > float64(step) {
			removed.Write(line)
			if line[len(line)-1] != '\n' {
				removed.WriteByte('\n')
			}
			lines++
			continue
		}
		kept.Write(line)
		if _, val := row["timing_s/testing"]; !val { // every validation line has it (validate), no training line
			train = append(train, row)
		}
	}
	if lines == 0 {
		return train, nil
	}
	if err := durable.AppendFile(path+rolledBack, removed.Bytes(), 0o644); err != nil {
		return nil, err
	}
	if err := durable.WriteFile(path, kept.Bytes(), 0o644); err != nil {
		return nil, err
	}
	log.Warn().Int("step", step).Int("lines", lines).Str("to", path+rolledBack).
		Msg("metrics of steps after the checkpoint rolled back: they are trained again")
	return train, nil
}

// metricsRow parses one metrics line as the trainer wrote it: null (a
// value that was not finite) reads as NaN, so that a replay sees what the
// step saw. ok is false for a line that is not an object with a numeric
// step.
func metricsRow(line []byte) (map[string]float64, bool) {
	var raw map[string]any
	if err := json.Unmarshal(line, &raw); err != nil {
		return nil, false
	}
	row := make(map[string]float64, len(raw))
	for k, v := range raw {
		switch v := v.(type) {
		case float64:
			row[k] = v
		case nil:
			row[k] = math.NaN()
		}
	}
	_, ok := raw["step"].(float64)
	return row, ok
}

// rollBackTrajectories moves the trajectory files of steps after step
// aside: train-step-N.jsonl becomes train-step-N.jsonl.rolled-back (or is
// appended to it), which the report does not read.
func rollBackTrajectories(dir string, step int) error {
	files, err := report.ListTrajectories(dir)
	if err != nil {
		return err
	}
	moved := 0
	for _, f := range files {
		if f.Step <= step {
			continue
		}
		if err := moveAside(f.Path); err != nil {
			return fmt.Errorf("rolling back %s: %w", f.Path, err)
		}
		moved++
	}
	if moved == 0 {
		return nil
	}
	log.Warn().Int("step", step).Int("files", moved).Msg("trajectories of steps after the checkpoint rolled back")
	return durable.SyncDir(filepath.Join(dir, "trajectories"))
}

// moveAside renames path to path.rolled-back, or appends it there when an
// earlier resume already rolled back a file of that name.
func moveAside(path string) error {
	dst := path + rolledBack
	if _, err := os.Stat(dst); errors.Is(err, os.ErrNotExist) {
		return os.Rename(path, dst)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := durable.AppendFile(dst, data, 0o644); err != nil {
		return err
	}
	return os.Remove(path)
}
