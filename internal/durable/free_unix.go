//go:build linux || darwin || freebsd

package durable

import "syscall"

// Free is the number of bytes an unprivileged process may still write on
// the file system holding dir.
func Free(dir string) (uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return uint64(st.Bavail) * uint64(st.Bsize), nil
}
