package main

import (
	"fmt"
	"runtime"

	"github.com/rs/zerolog/log"
	"github.com/spf13/pflag"

	"github.com/ragen-go/ragen/internal/torchrt"
	"github.com/ragen-go/ragen/model"
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

// placement is the --dtype/--device pair of commands that load a model.
type placement struct{ dtype, device *string }

func addPlacementFlags(fs *pflag.FlagSet) placement {
	return placement{
		dtype:  fs.String("dtype", "auto", "weights dtype: auto (bf16 on GPU, fp32 on CPU), fp32, bf16, fp16"),
		device: fs.String("device", "auto", "device: auto, cpu, cuda, cuda:N"),
	}
}

// options sets up the runtime and resolves the flags to model options.
func (p placement) options() (model.Options, error) {
	return modelOptions(*p.dtype, *p.device, "--dtype", "--device")
}

// modelOptions sets up the libtorch runtime and resolves a dtype and device
// (from flags or a config, named in errors as dtypeKey and deviceKey) to
// model options.
func modelOptions(dtype, device, dtypeKey, deviceKey string) (model.Options, error) {
	if _, err := setupRuntime(); err != nil {
		return model.Options{}, err
	}
	dev, err := torchrt.ParseDevice(device)
	if err != nil {
		return model.Options{}, fmt.Errorf("%s: %w", deviceKey, err)
	}
	dt, err := model.ParseDType(dtype, dev)
	if err != nil {
		return model.Options{}, fmt.Errorf("%s: %w", dtypeKey, err)
	}
	return model.Options{Device: dev, DType: dt}, nil
}
