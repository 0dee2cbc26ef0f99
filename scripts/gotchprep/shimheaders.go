package main

import (
	"os"
	"path/filepath"
	"strings"
)

// shimHeader tells whether the c10d shim can include rel for lt.
//
// Gloo's headers must come from the tree that holds this libtorch's own
// headers: ProcessGroupGloo.hpp defines classes inline on top of gloo's
// (GlooStore overrides gloo::rendezvous::Store's virtuals, the options hold
// gloo devices), so headers of another gloo commit than the one built into
// libtorch_cpu.so compile into code with other vtables and layouts than the
// library's. Debian's libgloo-dev (/usr/include/gloo) is the gloo of
// Debian's libtorch-dev; PyPI's torch ships no gloo headers at all, so a
// pip libtorch gets a shim without Gloo (RAGEN_NO_GLOO), which says so when
// a job asks for it. nccl.h is a stable C API: any copy will do.
func (lt Libtorch) shimHeader(rel string) bool {
	roots := []string{lt.Include}
	if !strings.HasPrefix(rel, "gloo"+string(filepath.Separator)) {
		roots = append(roots, "/usr/include", "/usr/local/include", "/usr/local/cuda/include")
	}
	for _, r := range roots {
		if _, err := os.Stat(filepath.Join(r, rel)); err == nil {
			return true
		}
	}
	return false
}
