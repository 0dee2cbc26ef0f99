package torchrt

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// Memory is this process's resident memory, in bytes.
type Memory struct {
	Resident int64 `json:"rss_bytes"`      // now (VmRSS)
	Peak     int64 `json:"peak_rss_bytes"` // high-water mark (VmHWM)
}

// ReadMemory reads the resident set of this process from /proc; zeroes where
// /proc is not available.
func ReadMemory() Memory {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return Memory{}
	}
	defer f.Close()
	var m Memory
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "VmRSS:"):
			m.Resident = kib(line)
		case strings.HasPrefix(line, "VmHWM:"):
			m.Peak = kib(line)
		}
	}
	return m
}

func kib(line string) int64 {
	f := strings.Fields(line)
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.ParseInt(f[1], 10, 64)
	return n * 1024
}
