package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/rs/zerolog/log"

	"github.com/ragen-go/ragen/internal/torchrt"
)

// All libtorch work of a command happens on the main goroutine, locked to
// its OS thread from the start: grad mode and gotch's error slot are
// thread-local.
func init() { runtime.LockOSThread() }

// setupRuntime sets the libtorch thread counts once, before any work.
func setupRuntime() (torchrt.Threads, error) {
	th, err := torchrt.ConfigureThreads(torchrt.GPUCount() > 0)
	if err != nil {
		return th, err
	}
	log.Debug().Int("torch_threads", th.Torch).Int("blas_threads", th.BLAS).Msg("libtorch threads")
	return th, nil
}

// checkModelDir refuses a --model that is not a checkpoint folder, before
// any work starts.
func checkModelDir(dir string) error {
	if dir == "" {
		return errors.New("--model is required")
	}
	if _, err := os.Stat(filepath.Join(dir, "config.json")); err != nil {
		return fmt.Errorf("--model %s: not a checkpoint folder (no config.json)", dir)
	}
	return nil
}
