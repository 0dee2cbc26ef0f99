package torchrt

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdint.h>

// Defined in gotch's libtch (torch_api.cpp), which has no Go binding for them.
void at_manual_seed(int64_t seed);
int at_get_num_threads();

void at_set_num_threads(int n);

// OpenBLAS is reached through libtorch's BLAS dependency, when it is the
// BLAS in use; look its thread setters up at run time.
static int blas_set_threads(int n) {
	void (*set)(int) = (void (*)(int))dlsym(RTLD_DEFAULT, "openblas_set_num_threads");
	if (!set) return 0;
	set(n);
	return 1;
}
static int blas_is_openblas(void) {
	return dlsym(RTLD_DEFAULT, "openblas_set_num_threads") != 0;
}
static int blas_get_threads(void) {
	int (*get)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "openblas_get_num_threads");
	return get ? get() : -1;
}
*/
import "C"

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
)

// Threads is the thread configuration of the libtorch runtime.
type Threads struct {
	Torch int `json:"torch"` // libtorch intra-op (OpenMP) threads
	BLAS  int `json:"blas"`  // OpenBLAS threads; -1 when OpenBLAS is not the BLAS in use
}

// Cores is how many cores the two pools occupy: the larger count, since
// an op runs in one pool or the other. A peer given as many threads in
// its single pool gets the same cores.
func (t Threads) Cores() int { return max(t.Torch, t.BLAS) }

// ConfigureThreads sets the thread counts once at start-up (defaultThreads
// gives the defaults). $RAGEN_TORCH_THREADS and $RAGEN_BLAS_THREADS override
// them. The ranks of a job on one machine ($LOCAL_WORLD_SIZE) split the
// cores.
func ConfigureThreads(gpu bool) (Threads, error) {
	cores := runtime.NumCPU()
	// Several ranks of a data-parallel job on one machine share its cores
	// (LOCAL_WORLD_SIZE, set by torchrun and ragen launch).
	if n, err := envInt("LOCAL_WORLD_SIZE", 1); err == nil && n > 1 {
		cores = max(1, cores/n)
	}
	torchN, blasN := defaultThreads(cores, gpu, C.blas_is_openblas() != 0)
	var err error
	if torchN, err = envInt("RAGEN_TORCH_THREADS", torchN); err != nil {
		return Threads{}, err
	}
	if blasN, err = envInt("RAGEN_BLAS_THREADS", blasN); err != nil {
		return Threads{}, err
	}
	C.at_set_num_threads(C.int(torchN))
	C.blas_set_threads(C.int(blasN))
	return CurrentThreads(), nil
}

// defaultThreads splits cores between libtorch's OpenMP pool and
// OpenBLAS's. With OpenBLAS as the BLAS (Debian's libtorch) on the CPU,
// OpenMP keeps 1 thread and OpenBLAS takes every core: measured on 2-core
// machines, an fp32 GEMM ran fastest so (368 GFLOP/s against 312 when both
// pools spin on the same cores). Without OpenBLAS (PyPI's libtorch, whose
// MKL runs on the OpenMP pool), and on a GPU, the OpenMP pool takes every
// core; blas is then unused.
func defaultThreads(cores int, gpu, openblas bool) (torch, blas int) {
	if gpu || !openblas {
		return cores, cores
	}
	return 1, cores
}

// CurrentThreads reads the thread counts in force.
func CurrentThreads() Threads {
	return Threads{Torch: int(C.at_get_num_threads()), BLAS: int(C.blas_get_threads())}
}

func envInt(name string, def int) (int, error) {
	v := os.Getenv(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("$%s=%q is not a positive thread count", name, v)
	}
	return n, nil
}

// ManualSeed seeds libtorch's global generators (CPU and CUDA).
func ManualSeed(seed int64) {
	C.at_manual_seed(C.int64_t(seed))
}
