package gguf

import (
	"os"
	"path/filepath"
)

// WriteFile writes a GGUF file (see Write) to path atomically: it writes
// a temporary file in the same folder, syncs it to disk and renames it
// over path, so that a crash or an error leaves either the old file or
// the complete new one, never a torn one.
func WriteFile(path string, meta []KV, tensors []TensorSpec) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return newError(path, nil, "%w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := write(tmp, path, meta, tensors); err != nil {
		return err
	}
	// CreateTemp makes the file private; a model is an ordinary file.
	if err := tmp.Chmod(0o644); err != nil {
		return newError(path, nil, "%w", err)
	}
	if err := tmp.Sync(); err != nil {
		return newError(path, nil, "syncing %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return newError(path, nil, "%w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return newError(path, nil, "%w", err)
	}
	// Make the rename itself durable; not every system can sync a folder.
	if dir, err := os.Open(filepath.Dir(path)); err == nil {
		dir.Sync()
		dir.Close()
	}
	return nil
}
