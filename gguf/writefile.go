package gguf

import (
	"io"

	"github.com/ragen-go/ragen/internal/durable"
)

// WriteFile writes a GGUF file (see Write) to path atomically: it writes
// a temporary file in the same folder, syncs it to disk and renames it
// over path, so that a crash or an error leaves either the old file or
// the complete new one, never a torn one.
func WriteFile(path string, meta []KV, tensors []TensorSpec) error {
	var inner error // write's own errors already name the file
	err := durable.Write(path, 0o644, func(w io.Writer) error {
		inner = write(w, path, meta, tensors)
		return inner
	})
	if err != nil && err != inner {
		return newError(path, nil, "%w", err)
	}
	return err
}
