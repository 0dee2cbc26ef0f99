package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/rs/zerolog/log"

	"github.com/ragen-go/ragen/starpo/sft"
	"github.com/ragen-go/ragen/starpo/study"
	"github.com/ragen-go/ragen/tokenizer"
)

func init() {
	register(command{name: "study", summary: "a small-scale replication: a grid of StarPO runs (arms × environments × seeds) from one warm start, compared", run: runStudy})
}

func runStudy(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("study", stderr)
	specPath := fs.String("config", "configs/study/study.yaml", "the study file: base config, environments, arms, seeds")
	outFlag := fs.String("out", "", "study folder (default runs/<name>); rerunning into it continues where it stopped")
	sets := fs.StringArray("set", nil, "override a key of every run's config: key=value (repeatable)")
	parallel := fs.Int("parallel", 1, "runs at once, each a `ragen train` process with its share of the cores")
	tokPath := fs.String("tokenizer", tokenizer.DefaultQwenPath, "the real Qwen tokenizer.json the built-in model's vocabulary is carved from")
	modelArg := fs.String("model", "", "start the warm start from this model (a checkpoint folder, a .gguf file, or "+
		shortNames()+") instead of creating the built-in one")
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
	// Each check registered its run's custom_envs (an arm may redefine a
	// tag); the warm start runs in this process, with the base's.
	if err := warm.RegisterEnvs(); err != nil {
		return err
	}
	out := *outFlag
	if out == "" {
		out = filepath.Join("runs", spec.Name)
	}
	startModel := ""
	if *modelArg != "" {
		if startModel, err = resolveModel(*modelArg); err != nil {
			return err
		}
	} else if _, err := os.Stat(*tokPath); err != nil {
		return fmt.Errorf("--tokenizer %s: not found (run `make deps`, which fetches the Qwen tokenizer, or point --tokenizer at a Qwen tokenizer.json)", *tokPath)
	}
	if err := study.Claim(out, spec, *sets); err != nil {
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
	if startModel != "" {
		modelDir = startModel
	} else if !isCheckpoint(modelDir) {
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

	grid := study.Grid{Self: self, Spec: spec, Cells: cells, Sets: *sets, Out: out, WarmStart: warmDir, Parallel: *parallel, Stop: stop}
	if err := grid.Run(); err != nil {
		return err
	}
	if stop() {
		return fmt.Errorf("study interrupted; rerun the same command to continue (finished runs are kept in %s)", out)
	}
	sums, err := study.WriteSummary(out, spec, cells, time.Since(start))
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
