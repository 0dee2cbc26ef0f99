package main

import (
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sync/atomic"

	"github.com/rs/zerolog/log"

	"github.com/ragen-go/ragen/internal/torchrt"
	"github.com/ragen-go/ragen/starpo"
	"github.com/ragen-go/ragen/starpo/config"
)

func init() {
	register(command{name: "train", summary: "train a checkpoint with StarPO(-S) on the configured environments", run: runTrain})
}

func runTrain(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("train", stderr)
	cfgPath := fs.String("config", "", "preset YAML (configs/*.yaml); RAGEN's base defaults when empty")
	dir := fs.String("model", "", "HuggingFace checkpoint folder to start from")
	out := fs.String("out", "", "run folder (default runs/<name>)")
	sets := fs.StringArray("set", nil, "override a config key: key=value (repeatable)")
	resume := fs.Bool("resume", false, "continue from the run folder's latest checkpoint")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	cfg, err := config.Load(*cfgPath, *sets)
	if err != nil {
		return err
	}
	if err := checkModelDir(*dir); err != nil {
		return err
	}
	if *out == "" {
		*out = filepath.Join("runs", cfg.Name)
	}
	opts, err := modelOptions(cfg.DType, cfg.Device, "dtype", "device")
	if err != nil {
		return err
	}
	run, err := starpo.NewRun(cfg, *dir, *out, opts)
	if err != nil {
		return err
	}
	defer run.Close()
	var interrupted atomic.Bool
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	defer signal.Stop(sig)
	go func() {
		if _, ok := <-sig; ok {
			interrupted.Store(true)
			log.Warn().Msg("Ctrl-C: finishing this step, then saving a checkpoint")
		}
	}()
	run.Stop = interrupted.Load
	log.Info().Str("config", *cfgPath).Str("model", *dir).Str("out", *out).Str("device", torchrt.DeviceName(opts.Device)).Int("steps", cfg.Steps).Msg("training")
	return run.Execute(*resume)
}
