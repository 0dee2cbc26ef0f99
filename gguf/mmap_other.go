//go:build !unix

package gguf

import (
	"errors"
	"os"
)

// mmap is not available here: Open reads the file instead.
func mmap(*os.File, int64) ([]byte, func() error, error) {
	return nil, nil, errors.New("no mmap on this platform")
}
