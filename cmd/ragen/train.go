package main

import (
	"fmt"
	"io"
	"time"

	"github.com/rs/zerolog"
	"github.com/rs/zerolog/log"
	"github.com/sugarme/gotch"

	"github.com/ragen-go/ragen/dist"
	"github.com/ragen-go/ragen/dist/c10d"
	"github.com/ragen-go/ragen/internal/torchrt"
	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/starpo"
)

func init() {
	register(command{name: "train", summary: "train a checkpoint with StarPO(-S) on the configured environments", run: runTrain})
}

func runTrain(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("train", stderr)
	rf := addRunFlags(fs, "", "preset YAML (configs/*.yaml); RAGEN's base defaults when empty", "run folder (default runs/<name>)")
	dir := fs.String("model", "", modelHelp)
	resume := fs.Bool("resume", false, "continue from the run folder's latest checkpoint")
	skipVerify := fs.Bool("skip-verify", false, "load the checkpoint --resume continues from, and a --model folder ragen wrote, even if their files do not match their manifest.json")
	checkEvery := fs.Int("check-every", 10, "data parallel: compare the ranks' weights every N steps (and always at the end); 0 = only at the end")
	timeout := fs.Duration("dist-timeout", 10*time.Minute, "data parallel: how long a rank waits for the others (joining, or in any collective) before failing")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	if *checkEvery < 0 {
		return fmt.Errorf("--check-every %d is negative", *checkEvery)
	}
	if *timeout <= 0 {
		return fmt.Errorf("--dist-timeout %v is not positive", *timeout)
	}
	cfg, out, path, opts, err := rf.loadFor(*dir, "")
	if err != nil {
		return err
	}
	if err := verifyModel(path, *skipVerify); err != nil {
		return err
	}
	comm, opts, err := joinJob(opts, *timeout)
	if err != nil {
		return err
	}
	defer comm.Close()
	run, err := starpo.NewRun(cfg, path, out, opts, comm)
	if err != nil {
		return err
	}
	defer run.Close()
	run.CheckEvery, run.SkipVerify = *checkEvery, *skipVerify
	stop, release := onInterrupt("finishing this step, then saving a checkpoint")
	defer release()
	run.Stop = stop
	log.Info().Str("config", *rf.cfgPath).Str("model", path).Str("out", out).Str("device", torchrt.DeviceName(opts.Device)).Int("steps", cfg.Steps).Int("ranks", comm.World()).Msg("training")
	return run.Execute(*resume)
}

// joinJob joins the data-parallel job the environment describes (RANK,
// WORLD_SIZE, …; see dist), or returns nil to train alone. A rank on CUDA
// takes device LOCAL_RANK and NCCL; on CPU, Gloo. Ranks other than 0 log
// warnings and errors only, tagged with their rank.
func joinJob(opts model.Options, timeout time.Duration) (*dist.Comm, model.Options, error) {
	env, err := dist.EnvFromOS()
	if err != nil {
		return nil, opts, err
	}
	if !env.Distributed() {
		return nil, opts, nil
	}
	backend := c10d.Gloo
	if opts.Device.IsCuda() {
		opts.Device = gotch.CudaBuilder(uint(env.LocalRank))
		backend = c10d.NCCL
	}
	log.Logger = log.Logger.With().Int("rank", env.Rank).Logger()
	if env.Rank != 0 {
		log.Logger = log.Logger.Level(max(zerolog.WarnLevel, log.Logger.GetLevel()))
	}
	t0 := time.Now()
	comm, err := dist.Init(env, dist.Options{Timeout: timeout, Backend: backend})
	if err != nil {
		return nil, opts, err
	}
	log.Info().Int("world", env.WorldSize).Str("backend", backend.String()).Str("master", fmt.Sprintf("%s:%d", env.MasterAddr, env.MasterPort)).Dur("took", time.Since(t0)).Msg("joined the data-parallel job")
	return comm, opts, nil
}
