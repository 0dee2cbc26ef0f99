package main

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"

	"github.com/ragen-go/ragen/internal/buildinfo"
	"github.com/ragen-go/ragen/internal/torchrt"
)

func init() {
	register(command{name: "version", summary: "print the version, libtorch, device and thread settings", run: runVersion})
}

// versionReport is what `ragen version --json` prints.
type versionReport struct {
	Version string `json:"version"`
	Go      string `json:"go"`
	torchrt.Info
}

func runVersion(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("version", stderr)
	asJSON := fs.Bool("json", false, "print one JSON object")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	if _, err := setupRuntime(); err != nil {
		return err
	}
	r := versionReport{Version: buildinfo.Version(), Go: runtime.Version(), Info: torchrt.Describe()}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(r)
	}
	blas := fmt.Sprint(r.Threads.BLAS)
	if r.Threads.BLAS < 0 {
		blas = "n/a (BLAS is not OpenBLAS)"
	} else {
		blas += ", kernels " + r.BLASCore
	}
	cuda := "CPU-only build"
	if r.CUDALinked {
		cuda = "CUDA libraries linked"
	}
	_, err := fmt.Fprintf(stdout, `ragen %s (%s)
libtorch %s (%s, %s; found as %s)
device   %s (%d GPU(s) visible)
threads  torch %d, OpenBLAS %s
gotch    v0.9.1, %d wrappers stubbed for this libtorch
`, r.Version, r.Go, r.LibtorchVersion, cuda, r.LibtorchDir, r.LibtorchSource, r.Device, r.GPUCount, r.Threads.Torch, blas, r.StubbedWrappers)
	return err
}
