package bench

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ragen-go/ragen/internal/torchrt"
)

// memoryFigures are the high-water marks of one measurement.
type memoryFigures struct {
	PeakRSS int64 `json:"peak_rss_bytes"`
	PeakGPU int64 `json:"peak_gpu_bytes"`
}

// memoryWatch measures one measurement's peaks: the resident high-water
// mark is reset first (Linux's clear_refs "5"), and on a GPU the process's
// device memory is polled from nvidia-smi, since gotch exposes no CUDA
// allocator statistics.
type memoryWatch struct {
	gpu  bool
	stop chan struct{}
	done sync.WaitGroup
	max  int64
}

func watchMemory(gpu bool) *memoryWatch {
	resetPeakRSS()
	w := &memoryWatch{gpu: gpu, stop: make(chan struct{})}
	if gpu {
		w.done.Go(func() {
			t := time.NewTicker(250 * time.Millisecond)
			defer t.Stop()
			for {
				if n := gpuMemory(os.Getpid()); n > w.max {
					w.max = n
				}
				select {
				case <-w.stop:
					return
				case <-t.C:
				}
			}
		})
	}
	return w
}

// end stops the watch and returns the peaks.
func (w *memoryWatch) end() memoryFigures {
	close(w.stop)
	w.done.Wait()
	return memoryFigures{PeakRSS: torchrt.ReadMemory().Peak, PeakGPU: w.max}
}

// resetPeakRSS resets VmHWM to the current resident size; a no-op where
// the kernel does not offer it.
func resetPeakRSS() {
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// gpuMemory is the device memory nvidia-smi reports for process pid, in
// bytes (0 when unknown).
func gpuMemory(pid int) int64 {
	out, err := exec.Command("nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits").Output()
	if err != nil {
		return 0
	}
	var total int64
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Split(sc.Text(), ",")
		if len(f) != 2 {
			continue
		}
		p, err1 := strconv.Atoi(strings.TrimSpace(f[0]))
		mib, err2 := strconv.ParseInt(strings.TrimSpace(f[1]), 10, 64)
		if err1 == nil && err2 == nil && p == pid {
			total += mib << 20
		}
	}
	return total
}
