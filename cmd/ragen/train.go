package main

import (
	"io"

	"github.com/rs/zerolog/log"

	"github.com/ragen-go/ragen/internal/torchrt"
	"github.com/ragen-go/ragen/starpo"
)

func init() {
	register(command{name: "train", summary: "train a checkpoint with StarPO(-S) on the configured environments", run: runTrain})
}

func runTrain(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("train", stderr)
	rf := addRunFlags(fs, "", "preset YAML (configs/*.yaml); RAGEN's base defaults when empty", "run folder (default runs/<name>)")
	dir := fs.String("model", "", "HuggingFace checkpoint folder to start from")
	resume := fs.Bool("resume", false, "continue from the run folder's latest checkpoint")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	cfg, out, opts, err := rf.loadFor(*dir, "")
	if err != nil {
		return err
	}
	run, err := starpo.NewRun(cfg, *dir, out, opts)
	if err != nil {
		return err
	}
	defer run.Close()
	stop, release := onInterrupt("finishing this step, then saving a checkpoint")
	defer release()
	run.Stop = stop
	log.Info().Str("config", *rf.cfgPath).Str("model", *dir).Str("out", out).Str("device", torchrt.DeviceName(opts.Device)).Int("steps", cfg.Steps).Msg("training")
	return run.Execute(*resume)
}
