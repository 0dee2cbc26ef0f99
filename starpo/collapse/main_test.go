package collapse

import (
	"os"
	"testing"

	"github.com/ragen-go/ragen/internal/torchrt"
)

// TestMain gives the tests OpenBLAS's kernels for this CPU, as main does.
func TestMain(m *testing.M) {
	torchrt.RestartWithFastBLAS()
	os.Exit(m.Run())
}
