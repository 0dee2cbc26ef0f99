package torchrt

/*
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

// Set at load time, before the Go runtime starts its threads (runc's
// nsenter uses the same constructor hook): glibc gives each new thread that
// allocates its own arena, and the arena limit is read when a thread first
// allocates, so mallopt from a Go init function comes too late for threads
// that already have one.
static int ragen_keeping_blocks;

__attribute__((constructor)) static void ragen_keep_large_blocks(void) {
	const char *d = getenv("RAGEN_MALLOC_DEFAULTS");
	if (d != NULL && strcmp(d, "1") == 0) return;
	ragen_keeping_blocks = mallopt(M_ARENA_MAX, 1) &&
		mallopt(M_MMAP_THRESHOLD, 1 << 30) &&
		mallopt(M_TRIM_THRESHOLD, 2147483647);
}
static int keeping_blocks(void) { return ragen_keeping_blocks; }
static void release_free(void) { malloc_trim(0); }
*/
import "C"

import (
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
// trimming it only above 2 GiB (the largest setting) lets them be reused;
// PyTorch users get the same effect from jemalloc or tcmalloc.
//
// All threads share glibc's main arena (M_ARENA_MAX 1). A Go program's
// cgo calls run on whichever OS thread the goroutine has, and every other
// thread gets an arena of its own whose heaps are at most 64 MB, so a
// larger block there is mapped and unmapped each time whatever the
// threshold, and each arena keeps its own free blocks: which blocks were
// kept, and how much memory a run held, depended on the scheduler (CI saw
// a freed 256 MB block unmapped at once, and 120 MB more resident in the
// optimiser's leak check). One arena costs a lock per allocation; tensor
// allocations are per operation, not per element, and small ones are served
// from glibc's per-thread cache without it.
//
// RAGEN_MALLOC_DEFAULTS=1 keeps glibc's defaults.

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
	keepingBlocks = C.keeping_blocks() != 0
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
