//go:build unix

package gguf

import (
	"errors"
	"math"
	"os"

	"golang.org/x/sys/unix"
)

// mmap maps size bytes of fh read-only and shared: the page cache serves
// the tensors and several processes loading one model share it.
func mmap(fh *os.File, size int64) ([]byte, func() error, error) {
	if size > math.MaxInt {
		return nil, nil, errors.New("file too large to map")
	}
	data, err := unix.Mmap(int(fh.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return data, func() error { return unix.Munmap(data) }, nil
}
