package safetensors

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
)

// File is an open safetensors file, mapped read-only into memory. Its
// methods may be called from several goroutines at once, except Close.
type File struct {
	path  string
	data  []byte // the whole file, nil once closed
	unmap func() error
	hdr   *header
}

// Open maps the file at path and validates its header: the header length,
// the JSON, every dtype, shape and byte range, and that the ranges tile the
// data buffer. Errors name the file and, where one is at fault, the tensor.
func Open(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening safetensors: %w", err)
	}
	defer f.Close() // the mapping outlives the descriptor
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("opening safetensors: %w", err)
	}
	data, unmap, err := mapFile(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: mapping %d bytes: %w", path, st.Size(), err)
	}
	hdr, err := parseHeader(data)
	if err != nil {
		unmap()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &File{path: path, data: data, unmap: unmap, hdr: hdr}, nil
}

// Path is the path the file was opened from.
func (f *File) Path() string { return f.path }

// Names lists the tensor names, sorted.
func (f *File) Names() []string { return slices.Clone(f.hdr.names) }

// Metadata is a copy of the header's "__metadata__" (nil when absent).
func (f *File) Metadata() map[string]string { return maps.Clone(f.hdr.metadata) }

// Info describes the named tensor.
func (f *File) Info(name string) (TensorInfo, error) {
	info, ok := f.hdr.tensors[name]
	if !ok {
		return TensorInfo{}, fmt.Errorf("%s: no tensor %q", f.path, name)
	}
	info.Shape = slices.Clone(info.Shape)
	return info, nil
}

// Bytes is the named tensor's raw little-endian data: a view of the
// mapping, not a copy. It is valid until Close and must not be written to
// (the mapping is read-only: a write faults). Copy it to keep it.
func (f *File) Bytes(name string) ([]byte, error) {
	if f.data == nil {
		return nil, fmt.Errorf("%s: reading tensor %q: file is closed", f.path, name)
	}
	info, ok := f.hdr.tensors[name]
	if !ok {
		return nil, fmt.Errorf("%s: no tensor %q", f.path, name)
	}
	begin, end := f.hdr.dataStart+info.Begin, f.hdr.dataStart+info.End
	return f.data[begin:end:end], nil
}

// Float32 is a newly allocated float32 copy of a BF16, F16 or F32 tensor.
func (f *File) Float32(name string) ([]float32, error) {
	b, err := f.Bytes(name)
	if err != nil {
		return nil, err
	}
	v, err := DecodeFloat32(f.hdr.tensors[name].DType, b)
	if err != nil {
		return nil, fmt.Errorf("%s: tensor %q: %w", f.path, name, err)
	}
	return v, nil
}

// Close unmaps the file; slices returned by Bytes must no longer be used.
// Closing twice is harmless.
func (f *File) Close() error {
	if f.data == nil {
		return nil
	}
	f.data = nil
	if err := f.unmap(); err != nil {
		return fmt.Errorf("%s: unmapping: %w", f.path, err)
	}
	return nil
}

var errTooLarge = errors.New("file too large to map on this platform")
