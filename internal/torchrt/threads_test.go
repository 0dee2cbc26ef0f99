package torchrt

import (
	"runtime"
	"testing"
)

func TestDefaultThreads(t *testing.T) {
	for _, c := range []struct {
		name          string
		gpu, openblas bool
		torch, blas   int
	}{
		{"cpu, OpenBLAS: its pool takes the cores", false, true, 1, 4},
		{"cpu, MKL on OpenMP: the torch pool takes the cores", false, false, 4, 4},
		{"gpu", true, true, 4, 4},
		{"gpu without OpenBLAS", true, false, 4, 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			torch, blas := defaultThreads(4, c.gpu, c.openblas)
			if torch != c.torch || blas != c.blas {
				t.Errorf("defaultThreads(4, gpu=%v, openblas=%v) = %d, %d; want %d, %d", c.gpu, c.openblas, torch, blas, c.torch, c.blas)
			}
		})
	}
}

// TestConfigureThreadsLinked checks the defaults against the linked
// libtorch: whichever BLAS it carries, the CPU run gets every core.
func TestConfigureThreadsLinked(t *testing.T) {
	t.Setenv("RAGEN_TORCH_THREADS", "")
	t.Setenv("RAGEN_BLAS_THREADS", "")
	t.Setenv("LOCAL_WORLD_SIZE", "")
	th, err := ConfigureThreads(false)
	if err != nil {
		t.Fatal(err)
	}
	cores := runtime.NumCPU()
	if th.Cores() != cores {
		t.Errorf("ConfigureThreads(false) = %+v: %d cores in use, want all %d", th, th.Cores(), cores)
	}
	if th.BLAS > 0 && th.Torch != 1 {
		t.Errorf("with OpenBLAS the torch pool should keep 1 thread, got %+v", th)
	}
	t.Setenv("RAGEN_TORCH_THREADS", "1")
	if th, err = ConfigureThreads(false); err != nil || th.Torch != 1 {
		t.Errorf("$RAGEN_TORCH_THREADS=1: got %+v, %v", th, err)
	}
	t.Setenv("RAGEN_TORCH_THREADS", "")
	if _, err = ConfigureThreads(false); err != nil {
		t.Fatal(err)
	}
}
