// Package cudagraph records the CUDA kernels of one fixed-shape step of
// libtorch work and launches them again with a single call, through
// libtorch's at::cuda::CUDAGraph (shim.cpp, compiled by cgo beside gotch
// with the flags scripts/gotchprep writes into cgo_flags.go). A decode step
// at batch 128 of a 0.5B model launches ~400 small kernels; replayed as a
// graph, it costs one launch.
//
// Replay reads and writes the very memory the capture saw: inputs must be
// copied into the tensors the captured step read, in place, and outputs
// read from the tensors it wrote. Nothing in a captured step may wait for
// the host (no .item(), no copy to the CPU) or allocate from the host.
//
// The shim compiles against any libtorch; without a CUDA build (or without
// the CUDA headers) it is a stub, and every entry point returns an error
// that says so.
package cudagraph

// #include <stdlib.h>
// #include "shim.h"
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/prepared"
)

// Compiled tells whether this build has CUDA graphs (a CUDA libtorch with
// its headers); NotCompiled says why not.
func Compiled() bool { return C.rg_graph_compiled() != 0 }

// NotCompiled says why this build has no CUDA graphs ("" when it has).
func NotCompiled() string { return noGraphs }

// Available returns nil when graphs can be captured on dev, and otherwise
// an error that names the device and the build.
func Available(dev gotch.Device) error {
	if dev.IsCuda() && Compiled() {
		return nil
	}
	this := fmt.Sprintf("the %s", deviceName(dev))
	build := fmt.Sprintf("libtorch %s", prepared.LibtorchVersion)
	switch {
	case !prepared.CUDA:
		build += " (a CPU-only build)"
	case !Compiled():
		build += " (a CUDA build, but " + noGraphs + ")"
	}
	return fmt.Errorf("CUDA graphs need a CUDA build of libtorch and a CUDA device; this is %s with %s", this, build)
}

func deviceName(dev gotch.Device) string {
	if dev.IsCuda() {
		return fmt.Sprintf("device cuda:%d", dev.Value)
	}
	return "CPU"
}

// check turns the shim's error message into a Go error and frees it.
func check(what string, msg *C.char) error {
	if msg == nil {
		return nil
	}
	defer C.free(unsafe.Pointer(msg))
	return fmt.Errorf("cuda graph %s: %s", what, C.GoString(msg))
}

// Graph is one captured step. Its methods must run on the OS thread that
// does the rest of the libtorch work (the current stream is per thread).
type Graph struct {
	p        C.rg_graph
	captured bool
}

// New returns an empty graph for dev, or Available's error.
func New(dev gotch.Device) (*Graph, error) {
	if err := Available(dev); err != nil {
		return nil, err
	}
	return newOn(dev.Value)
}

// newOn asks the shim itself, without the device check (the tests call it
// to see that a stub build answers with an error).
func newOn(device int) (*Graph, error) {
	g := &Graph{}
	if err := check("new", C.rg_graph_new(C.int(device), &g.p)); err != nil {
		return nil, err
	}
	return g, nil
}

// OnSideStream runs f with the graph's side stream current (the device
// synchronised before and after): warm-up runs belong there, so that
// libtorch's lazily made per-stream state (cuBLAS workspaces) exists
// before the capture, as PyTorch's torch.cuda.graph does.
func (g *Graph) OnSideStream(f func() error) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := check("enter", C.rg_graph_enter(g.p)); err != nil {
		return err
	}
	defer func() { err = errors.Join(err, check("leave", C.rg_graph_leave(g.p))) }()
	return f()
}

// Capture records f's kernels on the side stream; f's tensor work is not
// done until Replay. A capture that fails (f's error, or an op that
// waited for the host) leaves the graph empty.
func (g *Graph) Capture(f func() error) error {
	if g.captured {
		return errors.New("cuda graph: already captured (Reset first)")
	}
	return g.OnSideStream(func() error {
		if err := check("capture", C.rg_graph_capture_begin(g.p)); err != nil {
			return err
		}
		ferr := f()
		if err := check("capture", C.rg_graph_capture_end(g.p)); err != nil || ferr != nil {
			return errors.Join(ferr, err)
		}
		g.captured = true
		return nil
	})
}

// Replay launches the captured kernels on the current stream.
func (g *Graph) Replay() error {
	if !g.captured {
		return errors.New("cuda graph: nothing captured to replay")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return check("replay", C.rg_graph_replay(g.p))
}

// Free releases the graph and its memory pool.
func (g *Graph) Free() {
	if g == nil || g.p == nil {
		return
	}
	if g.captured {
		C.free(unsafe.Pointer(C.rg_graph_reset(g.p)))
	}
	C.rg_graph_free(g.p)
	g.p = nil
}
