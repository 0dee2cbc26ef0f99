package torchrt

/*
#include <malloc.h>
static int keep_large_blocks(int mmapThreshold, int trimThreshold) {
	return mallopt(M_MMAP_THRESHOLD, mmapThreshold) && mallopt(M_TRIM_THRESHOLD, trimThreshold);
}
static void release_free(void) { malloc_trim(0); }
*/
import "C"

import (
	"os"
	"sync"
	"time"
)

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

var (
	keepingBlocks bool
	releaseMu     sync.Mutex
	lastRelease   time.Time
)

// releaseEvery spaces the releases: the next call re-faults the pages it
// needs, about 0.2 s for a batch-64 decode call of the 50M benchmark
// preset (4% of it), so at most one release every 30 s costs under 1%.
const releaseEvery = 30 * time.Second

func init() {
	if os.Getenv("RAGEN_MALLOC_DEFAULTS") == "1" {
		return
	}
	keepingBlocks = C.keep_large_blocks(C.int(mmapThreshold), C.int(trimThreshold)) != 0
}

// ReleaseFreeMemory hands the heap's free pages back to the system
// (malloc_trim), at most once every releaseEvery. Kept blocks are reused
// within a generate call or a training step, where thousands of
// activations come and go; across calls the heap would otherwise only
// grow, as fragmentation leaves free pages that no later block fits (a
// 10-minute batch-64 decode loop crept from 1.08 to 1.24 GB; with the
// release it stays at 0.38 GB). Call it at such coarse boundaries.
func ReleaseFreeMemory() {
	if !keepingBlocks {
		return
	}
	releaseMu.Lock()
	defer releaseMu.Unlock()
	if time.Since(lastRelease) < releaseEvery {
		return
	}
	ReleaseFreeMemoryNow()
	lastRelease = time.Now()
}

// ReleaseFreeMemoryNow releases at once: what stays resident afterwards is
// live memory, which is what a leak check should follow.
func ReleaseFreeMemoryNow() {
	if keepingBlocks {
		C.release_free()
	}
}
