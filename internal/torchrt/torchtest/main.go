// Package torchtest is the TestMain of packages that run libtorch work.
package torchtest

import (
	"fmt"
	"os"
	"runtime"
	"testing"

	"github.com/ragen-go/ragen/internal/torchrt"
)

// Main runs a package's tests and benchmarks with the binary's OpenBLAS
// kernels and thread settings, from a goroutine locked to its OS thread.
// Tests that run on their own goroutine still lock it themselves (grad mode
// and gotch's error slot are per thread).
func Main(m *testing.M) {
	torchrt.RestartWithFastBLAS()
	runtime.LockOSThread()
	if _, err := torchrt.ConfigureThreads(false); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Exit(m.Run())
}
