package torchrt

import (
	"os"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/cpu"
)

// TestMain restarts the test binary with faster kernels as the ragen
// binary does, for TestBLASCoreNotGeneric to check.
func TestMain(m *testing.M) {
	RestartWithFastBLAS()
	os.Exit(m.Run())
}

func TestBetterBLASCore(t *testing.T) {
	if got := betterBLASCore("SkylakeX"); got != "" {
		t.Errorf("a known CPU's kernels were replaced by %q", got)
	}
	if got := betterBLASCore(""); got != "" {
		t.Errorf("without OpenBLAS: %q, want no change", got)
	}
	want := ""
	if runtime.GOARCH == "amd64" {
		switch {
		case cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512DQ && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512CD:
			want = "SkylakeX"
		case cpu.X86.HasAVX2 && cpu.X86.HasFMA:
			want = "Haswell"
		}
	}
	for _, name := range []string{"Prescott", "prescott"} {
		if got := betterBLASCore(name); got != want {
			t.Errorf("%s on this CPU: %q, want %q", name, got, want)
		}
	}
}

// TestBLASCoreNotGeneric checks the restart in TestMain took effect: this test
// process runs OpenBLAS's kernels for its CPU, not the generic fallback,
// unless the user forced the fallback.
func TestBLASCoreNotGeneric(t *testing.T) {
	core := BLASCore()
	if core == "" {
		t.Skip("OpenBLAS is not the BLAS in use")
	}
	t.Logf("OpenBLAS kernels: %s ($%s=%q)", core, blasCoreEnv, os.Getenv(blasCoreEnv))
	if betterBLASCore(core) != "" && !strings.EqualFold(os.Getenv(blasCoreEnv), core) {
		t.Fatalf("OpenBLAS runs its generic %s kernels on a CPU that has %s's", core, betterBLASCore(core))
	}
}
