package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Gloo's headers count only beside the libtorch's own: a pip libtorch on a
// machine with Debian's libgloo-dev must not pick /usr/include/gloo.
func TestShimGlooHeadersComeFromTheLibtorchTree(t *testing.T) {
	root := fakeLibtorch(t, false, true)
	lt, err := findLibtorch(root, noPython, nil)
	if err != nil {
		t.Fatal(err)
	}
	gloo := filepath.Join("gloo", "algorithm.h")
	if lt.shimHeader(gloo) {
		t.Fatalf("gloo headers found for a libtorch that ships none (from outside %s)", lt.Include)
	}
	if f := lt.c10dFlags(lt.shimHeader)[0]; !strings.Contains(f, "-DRAGEN_NO_GLOO") {
		t.Errorf("flags without gloo headers: %s", f)
	}
	must(t, os.MkdirAll(filepath.Join(lt.Include, "gloo"), 0o755))
	must(t, os.WriteFile(filepath.Join(lt.Include, gloo), nil, 0o644))
	if !lt.shimHeader(gloo) {
		t.Errorf("gloo headers in %s not found", lt.Include)
	}
	if _, err := os.Stat("/usr/include/gloo/algorithm.h"); err == nil {
		sys := Libtorch{Include: "/usr/include"}
		if !sys.shimHeader(gloo) {
			t.Errorf("the system libtorch does not see /usr/include/gloo")
		}
	}
}
