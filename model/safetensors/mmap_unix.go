//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package safetensors

import (
	"os"
	"syscall"
)

// mapFile maps size bytes of f read-only and shared: pages come from the
// page cache on first touch and are never copied into the Go heap.
func mapFile(f *os.File, size int64) ([]byte, func() error, error) {
	if size == 0 { // mmap rejects an empty length; parseHeader reports the file
		return []byte{}, func() error { return nil }, nil
	}
	if int64(int(size)) != size {
		return nil, nil, errTooLarge
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return b, func() error { return syscall.Munmap(b) }, nil
}
