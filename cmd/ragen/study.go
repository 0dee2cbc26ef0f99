package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog/log"

	"github.com/ragen-go/ragen/report"
	"github.com/ragen-go/ragen/starpo"
	"github.com/ragen-go/ragen/starpo/sft"
	"github.com/ragen-go/ragen/starpo/study"
	"github.com/ragen-go/ragen/tokenizer/tokenizertest"
)

func init() {
	register(command{name: "study", summary: "a small-scale replication: a grid of StarPO runs (arms × environments × seeds) from one warm start, compared", run: runStudy})
}

// studyState is study.json: what the folder was started with, so that a
// rerun continues the same study and refuses a different one.
type studyState struct {
	Spec study.Spec `json:"spec"`
	Base string     `json:"base_config"` // the base config file's text
	Sets []string   `json:"sets"`
}

func runStudy(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("study", stderr)
	specPath := fs.String("config", "configs/study/study.yaml", "the study file: base config, environments, arms, seeds")
	outFlag := fs.String("out", "", "study folder (default runs/<name>); rerunning into it continues where it stopped")
	sets := fs.StringArray("set", nil, "override a key of every run's config: key=value (repeatable)")
	parallel := fs.Int("parallel", 1, "runs at once, each a `ragen train` process with its share of the cores")
	tokPath := fs.String("tokenizer", tokenizertest.DefaultPath, "the real Qwen tokenizer.json the built-in model's vocabulary is carved from")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	if err := singleProcess("study"); err != nil {
		return err
	}
	if *parallel < 1 {
		return fmt.Errorf("--parallel %d: give at least 1", *parallel)
	}
	spec, err := study.LoadSpec(*specPath)
	if err != nil {
		return err
	}
	warm, err := spec.WarmStartConfig(*sets)
	if err != nil {
		return err
	}
	cells := spec.Cells()
	for _, c := range cells { // every run's config is checked before any work
		if _, err := spec.RunConfig(c, *sets); err != nil {
			return err
		}
	}
	out := *outFlag
	if out == "" {
		out = filepath.Join("runs", spec.Name)
	}
	if _, err := os.Stat(*tokPath); err != nil {
		return fmt.Errorf("--tokenizer %s: not found (run `make deps`, which fetches the Qwen tokenizer, or point --tokenizer at a Qwen tokenizer.json)", *tokPath)
	}
	if err := claimStudyFolder(out, spec, *sets); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding this binary to run the training runs: %w", err)
	}
	stop, release := onInterrupt("stopping the study: the running trainings save a checkpoint; rerun the same command to continue")
	defer release()
	start := time.Now()

	// The shared warm start: one model, one SFT on all the study's
	// environments; every run starts from its export.
	modelDir, sftDir := filepath.Join(out, "model"), filepath.Join(out, "sft")
	opts, err := configPlacement(warm)
	if err != nil {
		return err
	}
	if !isCheckpoint(modelDir) {
		if err := createBuiltin(warm, *tokPath, modelDir); err != nil {
			return err
		}
	}
	warmDir := filepath.Join(sftDir, "export")
	if !isCheckpoint(warmDir) {
		res, err := sft.Run(warm, modelDir, sftDir, opts, stop)
		if err != nil {
			return err
		}
		if res.Interrupted {
			os.RemoveAll(warmDir) // a partial warm start must not be reused
			return errors.New("interrupted during the warm start; rerun the same command to start it again")
		}
	}
	log.Info().Str("warm_start", warmDir).Int("runs", len(cells)).Int("parallel", *parallel).Msg("study: running the grid")

	if err := runCells(self, spec, cells, *sets, out, warmDir, *parallel, stop); err != nil {
		return err
	}
	if stop() {
		return fmt.Errorf("study interrupted; rerun the same command to continue (finished runs are kept in %s)", out)
	}
	sums, err := writeStudySummary(out, spec, cells, time.Since(start))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nvalidation success on %d fixed seeds per run, mean ± standard error over seeds\n\n%s\n", spec.ValSeeds, study.Markdown(sums))
	fmt.Fprintf(stdout, "study folder %s: summary.json, summary.md, compare.html; %s in all\n", out, time.Since(start).Round(time.Second))
	return nil
}

func isCheckpoint(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "config.json"))
	return err == nil
}

// claimStudyFolder writes study.json in a new folder, or checks that an
// existing one holds the same study (spec, base config and overrides), so
// that continuing never mixes runs of two designs.
func claimStudyFolder(out string, spec study.Spec, sets []string) error {
	base, err := os.ReadFile(spec.BasePath())
	if err != nil {
		return fmt.Errorf("reading the base config: %w", err)
	}
	if sets == nil {
		sets = []string{}
	}
	want, err := json.MarshalIndent(studyState{Spec: spec, Base: string(base), Sets: sets}, "", "  ")
	if err != nil {
		return err
	}
	want = append(want, '\n')
	path := filepath.Join(out, "study.json")
	have, err := os.ReadFile(path)
	switch {
	case err == nil && string(have) == string(want):
		log.Info().Str("study", out).Msg("continuing the study in this folder")
		return nil
	case err == nil:
		return fmt.Errorf("--out %s holds a study started with a different study file, base config or --set; give another --out (or remove the folder)", out)
	case !errors.Is(err, os.ErrNotExist):
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("creating the study folder: %w", err)
	}
	return os.WriteFile(path, want, 0o644)
}

// cellJob is a running training of one cell.
type cellJob struct {
	cell study.Cell
	cmd  *exec.Cmd
	log  string
	t0   time.Time
}

type cellDone struct {
	job *cellJob
	err error
}

// runCells runs the cells not yet finished, parallel at a time, each as
// `ragen train` with its share of the cores; a finished run (its export
// exists) is skipped, an interrupted one resumed from its checkpoint, a
// killed one restarted. The first failure stops new launches and is
// returned with its log's path.
func runCells(self string, spec study.Spec, cells []study.Cell, sets []string, out, warmDir string, parallel int, stop func() bool) error {
	var todo []study.Cell
	for _, c := range cells {
		if !isCheckpoint(filepath.Join(c.Dir(out), "export")) {
			todo = append(todo, c)
		}
	}
	if skipped := len(cells) - len(todo); skipped > 0 {
		log.Info().Int("finished", skipped).Int("left", len(todo)).Msg("study: finished runs are kept")
	}
	blas := max(1, runtime.NumCPU()/parallel)
	done := make(chan cellDone)
	running, finished := 0, 0
	var firstErr error
	t0 := time.Now()
	for len(todo) > 0 || running > 0 {
		for running < parallel && len(todo) > 0 && firstErr == nil && !stop() {
			job, err := startCell(self, spec, todo[0], sets, out, warmDir, blas)
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
				firstErr = fmt.Errorf("study run %s failed (%v); its log: %s%s", d.job.cell, d.err, d.job.log, logTail(d.job.log))
			}
			continue
		}
		finished++
		left := len(todo) + running
		eta := time.Since(t0) / time.Duration(finished) * time.Duration(left) // wall time per run so far, parallel included
		ev := log.Info().Str("run", d.job.cell.String()).Str("took", time.Since(d.job.t0).Round(time.Second).String()).Int("left", left)
		if r, err := study.ReadResult(d.job.cell, d.job.cell.Dir(out)); err == nil {
			ev = ev.Float64("start", r.Success[0]).Float64("end", r.Success[len(r.Success)-1])
		}
		ev.Str("eta", eta.Round(time.Second).String()).Msg("study: run finished")
	}
	return firstErr
}

// startCell writes the cell's config and starts its training.
func startCell(self string, spec study.Spec, c study.Cell, sets []string, out, warmDir string, blas int) (*cellJob, error) {
	cfg, err := spec.RunConfig(c, sets)
	if err != nil {
		return nil, err
	}
	dir := c.Dir(out)
	cfgPath := dir + ".yaml"
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", dir, err)
	}
	if err := cfg.Save(cfgPath); err != nil {
		return nil, err
	}
	args := []string{"train", "--config", cfgPath, "--model", warmDir, "--out", dir, "--log-format", "json"}
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
	cmd := exec.Command(self, args...)
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

// writeStudySummary reads every finished run and writes summary.json,
// summary.md and compare.html (each arm's seed-mean curves, all arms
// overlaid, and one page per environment).
func writeStudySummary(out string, spec study.Spec, cells []study.Cell, took time.Duration) ([]study.Summary, error) {
	var results []study.Result
	for _, c := range cells {
		r, err := study.ReadResult(c, c.Dir(out))
		if err != nil {
			return nil, err
		}
		results = append(results, r)
	}
	sums := study.Summarise(spec, results)
	b, err := json.MarshalIndent(map[string]any{
		"study": spec.Name, "val_seeds": spec.ValSeeds, "seeds": spec.Seeds, "seconds": took.Seconds(), "arms": sums,
	}, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(out, "summary.json"), append(b, '\n'), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(out, "summary.md"), []byte(study.Markdown(sums)), 0o644); err != nil {
		return nil, err
	}
	return sums, writeStudyPages(out, spec, cells, "compare.html")
}

// writeStudyPages writes page (all arms on all environments) and
// compare-<env>.html, each arm drawn as the mean of its seeds.
func writeStudyPages(out string, spec study.Spec, cells []study.Cell, page string) error {
	byEnv := map[string][]*report.Run{}
	var all []*report.Run
	for _, env := range spec.Envs {
		for _, a := range spec.Arms {
			var seeds []*report.Run
			for _, c := range cells {
				if c.Env == env && c.Arm.Name == a.Name {
					r, err := report.LoadRun(c.Dir(out))
					if err != nil {
						return err
					}
					seeds = append(seeds, r)
				}
			}
			if len(seeds) == 0 {
				continue
			}
			m := report.MeanRun(fmt.Sprintf("%s · %s (mean of %d seeds)", env, a.ArmLabel(), len(seeds)), seeds)
			m.Dir = filepath.Join(out, "runs", env, a.Name)
			byEnv[env] = append(byEnv[env], m)
			all = append(all, m)
		}
	}
	if err := report.CompareRuns(fmt.Sprintf("study %s: %d arms on %d environments", spec.Name, len(spec.Arms), len(spec.Envs)), all, filepath.Join(out, page)); err != nil {
		return err
	}
	for env, runs := range byEnv {
		if err := report.CompareRuns(fmt.Sprintf("study %s on %s", spec.Name, env), runs, filepath.Join(out, "compare-"+env+".html")); err != nil {
			return err
		}
	}
	return nil
}

// studyFolder tells whether dir is a study's folder (it has study.json).
func studyFolder(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "study.json"))
	return err == nil
}

// writeStudyReport renders a study folder's report.html: the arms side by
// side, from the runs finished so far (ragen report --run on a study).
func writeStudyReport(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "study.json"))
	if err != nil {
		return "", err
	}
	var st studyState
	if err := json.Unmarshal(b, &st); err != nil {
		return "", fmt.Errorf("%s: %w", filepath.Join(dir, "study.json"), err)
	}
	var done []study.Cell
	for _, c := range st.Spec.Cells() {
		if _, err := os.Stat(filepath.Join(c.Dir(dir), "metrics.jsonl")); err == nil {
			done = append(done, c)
		}
	}
	if len(done) == 0 {
		return "", fmt.Errorf("%s: no run of the study has metrics yet", dir)
	}
	spec := st.Spec
	spec.Arms = slices.DeleteFunc(slices.Clone(spec.Arms), func(a study.Arm) bool {
		return !slices.ContainsFunc(done, func(c study.Cell) bool { return c.Arm.Name == a.Name })
	})
	return filepath.Join(dir, "report.html"), writeStudyPages(dir, spec, done, "report.html")
}
