package main

import (
	"os"
	"path/filepath"
	"testing"
)

// From libtorch 2.9 the API's version.h only includes the header-only one,
// which holds the numbers (as in PyPI's torch 2.11.0).
func TestVersionFromHeaderOnlyHeader(t *testing.T) {
	root := fakeLibtorch(t, true, true)
	inc := filepath.Join(root, "include")
	must(t, os.WriteFile(filepath.Join(inc, "torch", "csrc", "api", "include", "torch", "version.h"),
		[]byte("#if !defined(TORCH_STABLE_ONLY) && !defined(TORCH_TARGET_VERSION)\n#include <torch/headeronly/version.h>\n#endif\n"), 0o644))
	if _, err := findLibtorch(root, noPython, nil); err == nil {
		t.Fatal("found a version with the header-only header missing")
	}
	ho := filepath.Join(inc, "torch", "headeronly", "version.h")
	must(t, os.MkdirAll(filepath.Dir(ho), 0o755))
	must(t, os.WriteFile(ho, []byte("#define TORCH_VERSION_MAJOR 2\n#define TORCH_VERSION_MINOR 11\n#define TORCH_VERSION_PATCH 0\n#define TORCH_VERSION_ABI_TAG 0\n"), 0o644))
	lt, err := findLibtorch(root, noPython, nil)
	if err != nil {
		t.Fatal(err)
	}
	if lt.Version != "2.11.0" || !lt.CUDA {
		t.Errorf("libtorch = %+v, want 2.11.0 with CUDA", lt)
	}
}
