package study

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog/log"

	"github.com/ragen-go/ragen/starpo"
)

// cellJob is a running training of one cell.
type cellJob struct {
	cell Cell
	cmd  *exec.Cmd
	log  string
	t0   time.Time
}

type cellDone struct {
	job *cellJob
	err error
}

// Grid is a study's training runs: its cells, each an ordinary `ragen
// train` process of this binary from the shared warm start.
type Grid struct {
	Self      string      // the ragen binary to run
	Spec      Spec        // the study
	Cells     []Cell      // the runs
	Sets      []string    // --set overrides of every run's config
	Out       string      // the study folder
	WarmStart string      // the checkpoint every run starts from
	Parallel  int         // runs at once
	Stop      func() bool // polled between launches (Ctrl-C)
}

// Run runs the cells not yet finished, Parallel at a time, each as `ragen
// train` with its share of the cores; a finished run (its export exists)
// is skipped, an interrupted one resumed from its checkpoint, a killed one
// restarted. The first failure stops new launches and is returned with its
// log's path.
func (g Grid) Run() error {
	out, parallel, stop := g.Out, g.Parallel, g.Stop
	var todo []Cell
	for _, c := range g.Cells {
		if !exported(filepath.Join(c.Dir(out), "export")) {
			todo = append(todo, c)
		}
	}
	if skipped := len(g.Cells) - len(todo); skipped > 0 {
		log.Info().Int("finished", skipped).Int("left", len(todo)).Msg("study: finished runs are kept")
	}
	blas := max(1, runtime.NumCPU()/parallel)
	done := make(chan cellDone)
	running, finished := 0, 0
	var firstErr error
	t0 := time.Now()
	for len(todo) > 0 || running > 0 {
		for running < parallel && len(todo) > 0 && firstErr == nil && !stop() {
			job, err := g.start(todo[0], blas)
			if err != nil {
				firstErr = err
				break
			}
			todo = todo[1:]
			running++
			go func() { done <- cellDone{job, job.cmd.Wait()} }()
		}
		if running == 0 {
			break
		}
		d := <-done
		running--
		if d.err != nil {
			if stop() { // Ctrl-C: the run saved a checkpoint and resumes next time
				continue
			}
			if firstErr == nil {
				firstErr = fmt.Errorf("study run %s failed (%v); its log: %s%s", d.job.cell, d.err, d.job.log,
					logTail(d.job.log))
			}
			continue
		}
		finished++
		left := len(todo) + running
		// The wall time per run so far, parallel runs included.
		eta := time.Since(t0) / time.Duration(finished) * time.Duration(left)
		took := time.Since(d.job.t0).Round(time.Second).String()
		ev := log.Info().Str("run", d.job.cell.String()).Str("took", took).Int("left", left)
		if r, err := ReadResult(d.job.cell, d.job.cell.Dir(out)); err == nil {
			ev = ev.Float64("start", r.Success[0]).Float64("end", r.Success[len(r.Success)-1])
		}
		ev.Str("eta", eta.Round(time.Second).String()).Msg("study: run finished")
	}
	return firstErr
}

// start writes the cell's config and starts its training.
func (g Grid) start(c Cell, blas int) (*cellJob, error) {
	cfg, err := g.Spec.RunConfig(c, g.Sets)
	if err != nil {
		return nil, err
	}
	dir := c.Dir(g.Out)
	cfgPath := dir + ".yaml"
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", dir, err)
	}
	if err := cfg.Save(cfgPath); err != nil {
		return nil, err
	}
	args := []string{"train", "--config", cfgPath, "--model", g.WarmStart, "--out", dir, "--log-format", "json"}
	latest, err := starpo.LatestCheckpoint(filepath.Join(dir, "checkpoints"))
	switch {
	case err == nil && latest != "":
		args = append(args, "--resume")
	default: // a fresh start, or one killed before its first checkpoint
		if err := os.RemoveAll(dir); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	logPath := dir + ".log"
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(g.Self, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = append(os.Environ(), "RAGEN_TORCH_THREADS=1", "RAGEN_BLAS_THREADS="+strconv.Itoa(blas))
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("starting the training of %s: %w", c, err)
	}
	f.Close() // the child holds its own descriptor
	log.Info().Str("run", c.String()).Str("log", logPath).Msg("study: run started")
	return &cellJob{cell: c, cmd: cmd, log: logPath, t0: time.Now()}, nil
}

// logTail is the last lines of a failed run's log, for its error.
func logTail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil || len(b) == 0 {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return "\n" + strings.Join(lines[max(0, len(lines)-5):], "\n")
}

// exported tells whether a run's export folder holds a checkpoint: the run
// finished.
func exported(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "config.json"))
	return err == nil
}
