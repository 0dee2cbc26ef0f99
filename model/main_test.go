package model

import (
	"fmt"
	"os"
	"runtime"
	"testing"

	"github.com/ragen-go/ragen/internal/torchrt"
)

// TestMain runs the package's tests and benchmarks with the thread settings
// the binary uses.
func TestMain(m *testing.M) {
	runtime.LockOSThread()
	if _, err := torchrt.ConfigureThreads(false); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Exit(m.Run())
}
