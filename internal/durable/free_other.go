//go:build !(linux || darwin || freebsd)

package durable

import "errors"

// Free is unknown on this system: errors.ErrUnsupported.
func Free(dir string) (uint64, error) { return 0, errors.ErrUnsupported }
