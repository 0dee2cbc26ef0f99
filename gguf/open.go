package gguf

import (
	"io"
	"os"
)

// Open memory-maps the file at path read-only and parses it; where the
// file cannot be mapped (another OS, a pipe, a file system without mmap)
// it reads it into memory instead. Close releases it.
//
// The tensors' Bytes are views into the map: a file truncated by another
// process while mapped makes reading them fault, as with any mmap.
func Open(path string) (*File, error) {
	data, release, err := load(path)
	if err != nil {
		return nil, newError(path, nil, "%w", err)
	}
	f, err := Parse(data, path)
	if err != nil {
		release()
		return nil, err
	}
	f.unmap = release
	return f, nil
}

// Close releases the file's memory map. The tensors' Bytes are invalid
// afterwards, and Float32 fails; the metadata stays readable.
func (f *File) Close() error {
	f.data = nil
	release := f.unmap
	f.unmap = nil
	if release == nil {
		return nil
	}
	if err := release(); err != nil {
		return newError(f.Name, nil, "unmapping: %w", err)
	}
	return nil
}

// load maps or reads the file at path; release frees what it returns.
func load(path string) (data []byte, release func() error, err error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer fh.Close() // a mapping outlives the descriptor
	fi, err := fh.Stat()
	if err != nil {
		return nil, nil, err
	}
	noop := func() error { return nil }
	if fi.Mode().IsRegular() && fi.Size() > 0 {
		if data, release, err := mmap(fh, fi.Size()); err == nil {
			return data, release, nil
		}
	}
	data, err = io.ReadAll(fh)
	if err != nil {
		return nil, nil, err
	}
	return data, noop, nil
}
