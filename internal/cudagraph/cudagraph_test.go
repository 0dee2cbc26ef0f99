package cudagraph

import (
	"runtime"
	"strings"
	"testing"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/prepared"
	"github.com/sugarme/gotch/ts"
)

// On the CPU, asking for a graph is an error that names what is missing
// (a CUDA build and a CUDA device) and what this is, never a crash.
func TestCPUSaysWhatIsMissing(t *testing.T) {
	if err := Available(gotch.CPU); err == nil {
		t.Fatal("Available(CPU) = nil; CUDA graphs cannot run on the CPU")
	}
	g, err := New(gotch.CPU)
	if err == nil || g != nil {
		t.Fatalf("New(CPU) = %v, %v; want an error", g, err)
	}
	msg := err.Error()
	for _, want := range []string{"CUDA graphs need a CUDA build of libtorch and a CUDA device", "this is the CPU", "libtorch " + prepared.LibtorchVersion} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not say %q", msg, want)
		}
	}
	if !prepared.CUDA && !strings.Contains(msg, "CPU-only build") {
		t.Errorf("error %q does not say the libtorch is a CPU-only build", msg)
	}
	t.Log(msg)
}

// A build without CUDA graphs says why, and its shim, asked directly (past
// the Go-side device check), answers every call with an error.
func TestStubShimAnswersWithAnError(t *testing.T) {
	if Compiled() {
		t.Skip("this build has CUDA graphs compiled in")
	}
	if NotCompiled() == "" {
		t.Fatal("a build without CUDA graphs must say why (noGraphs is empty)")
	}
	g, err := newOn(0)
	if err == nil || g != nil || !strings.Contains(err.Error(), "this build has no CUDA graphs") {
		t.Fatalf("stub shim: New = %v, %v; want the stub's error", g, err)
	}
	var empty Graph
	if err := empty.Replay(); err == nil {
		t.Error("Replay of an empty graph must fail")
	}
	empty.Free() // a graph never made frees nothing
}

// With a CUDA device and graphs compiled in, a captured step replays:
// an in-place add captured once, replayed three times, adds four times
// (the capture itself does not run it).
func TestReplayRepeatsTheCapturedWork(t *testing.T) {
	dev := gotch.CudaIfAvailable()
	if err := Available(dev); err != nil {
		t.Skip(err)
	}
	replayOnDevice(t, dev)
}

func replayOnDevice(t *testing.T, dev gotch.Device) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	x, err := ts.Zeros([]int64{4}, gotch.Float, dev)
	if err != nil {
		t.Fatal(err)
	}
	defer x.MustDrop()
	g, err := New(dev)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Free()
	add := func() error { return x.AddScalar_(ts.FloatScalar(1)) }
	if err := g.OnSideStream(add); err != nil { // warm-up: runs
		t.Fatal(err)
	}
	if err := g.Capture(add); err != nil { // recorded, not run
		t.Fatal(err)
	}
	for range 3 {
		if err := g.Replay(); err != nil {
			t.Fatal(err)
		}
	}
	cpu, err := x.ToDevice(gotch.CPU, gotch.Float, false, true, false)
	if err != nil {
		t.Fatal(err)
	}
	defer cpu.MustDrop()
	got := cpu.Float64Values()
	for i, v := range got {
		if v != 4 {
			t.Fatalf("x[%d] = %g after a warm-up and 3 replays, want 4", i, v)
		}
	}
}
