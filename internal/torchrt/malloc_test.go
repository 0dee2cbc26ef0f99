package torchrt

import (
	"os"
	"os/exec"
	"runtime"
	"testing"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"
)

// The main goroutine keeps the process's first thread, so every test here
// runs its cgo calls on another one, as a training run's goroutines may:
// glibc used to give such threads arenas of their own, where a large block
// was unmapped on free whatever the threshold (seen in CI, never here, where
// the test goroutine happened to run on the first thread).
func init() { runtime.LockOSThread() }

// Freed blocks stay in the heap (that is the point of keeping them) until
// ReleaseFreeMemory hands their pages back; a second release within
// releaseEvery does nothing. It runs in a child process: after a release,
// reused free blocks fault their pages back in, which a later test that
// follows this process's resident set would count as growth.
func TestReleaseFreeMemory(t *testing.T) {
	if os.Getenv("RAGEN_TEST_RELEASE_CHILD") != "1" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestReleaseFreeMemory$", "-test.v")
		cmd.Env = append(os.Environ(), "RAGEN_TEST_RELEASE_CHILD=1")
		out, err := cmd.CombinedOutput()
		t.Logf("child process:\n%s", out)
		if err != nil {
			t.Fatalf("child process: %v", err)
		}
		return
	}
	if !keepingBlocks {
		t.Skip("RAGEN_MALLOC_DEFAULTS=1: glibc returns large blocks itself")
	}
	const n = 64 << 20 // 256 MB of fp32, below the 1 GiB mmap threshold: from the heap
	big := Must(ts.Ones([]int64{n}, gotch.Float, gotch.CPU))
	keep := Must(ts.Ones([]int64{16}, gotch.Float, gotch.CPU)) // above it, so the top of the heap is not free
	defer keep.MustDrop()
	big.MustDrop()
	held := ReadMemory().Resident
	lastRelease = lastRelease.AddDate(-1, 0, 0)
	ReleaseFreeMemory()
	released := ReadMemory().Resident
	t.Logf("resident after freeing 256 MB: %.0f MB, after the release %.0f MB", mb(held), mb(released))
	if held-released < 200<<20 {
		t.Fatalf("the release handed back %.0f MB of a freed 256 MB block", mb(held-released))
	}
	again := Must(ts.Ones([]int64{n}, gotch.Float, gotch.CPU))
	again.MustDrop()
	before := ReadMemory().Resident
	ReleaseFreeMemory() // within releaseEvery of the last one
	if after := ReadMemory().Resident; before-after > 64<<20 {
		t.Fatalf("a second release within %s handed back %.0f MB", releaseEvery, mb(before-after))
	}
}
