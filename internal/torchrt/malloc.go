package torchrt

/*
#include <malloc.h>
static int keep_large_blocks(int mmapThreshold, int trimThreshold) {
	return mallopt(M_MMAP_THRESHOLD, mmapThreshold) && mallopt(M_TRIM_THRESHOLD, trimThreshold);
}
*/
import "C"

import "os"

// libtorch's CPU allocator is plain malloc. glibc serves blocks above the
// mmap threshold (at most 32 MB, adjusted dynamically) with a fresh mmap and
// returns them on free, so every large activation (an attention score
// matrix, a batch of logits) costs page faults to zero new memory. Rollouts
// and updates allocate such tensors thousands of times a step: a 64-episode
// FrozenLake rollout spent more time in the kernel than computing (22 s
// system against 14 s user). Serving blocks up to 1 GiB from the heap and
// trimming it only above 2 GiB (the largest setting) lets them be reused; PyTorch users get the
// same effect from jemalloc or tcmalloc. RAGEN_MALLOC_DEFAULTS=1 keeps
// glibc's defaults.
const (
	mmapThreshold = 1 << 30
	trimThreshold = 1<<31 - 1
)

func init() {
	if os.Getenv("RAGEN_MALLOC_DEFAULTS") == "1" {
		return
	}
	C.keep_large_blocks(C.int(mmapThreshold), C.int(trimThreshold))
}
