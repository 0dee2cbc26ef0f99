package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The -std follows torch/all.h's own check (texts as in 1.13, 2.11, 2.15).
func TestRequiredCXXStd(t *testing.T) {
	for _, c := range []struct{ check, want string }{
		{"#if !defined(_MSC_VER) && __cplusplus < 201402L\n#error C++14 or later compatible compiler is required to use PyTorch.\n#endif\n", "c++17"},
		{"#if !defined(_MSC_VER) && __cplusplus < 201703L\n#error C++17 or later compatible compiler is required to use PyTorch.\n#endif\n", "c++17"},
		{"#if (defined(_MSVC_LANG) && _MSVC_LANG < 202002L) || \\\n    (!defined(_MSVC_LANG) && __cplusplus < 202002L)\n#error C++20 or later compatible compiler is required to use PyTorch.\n#endif\n", "c++20"},
	} {
		root := fakeLibtorch(t, false, true)
		all := filepath.Join(root, "include", "torch", "csrc", "api", "include", "torch", "all.h")
		must(t, os.WriteFile(all, []byte("#pragma once\n"+c.check+"#include <torch/autograd.h>\n"), 0o644))
		lt, err := findLibtorch(root, noPython, nil)
		if err != nil {
			t.Fatal(err)
		}
		flags := strings.Join(lt.cgoFlags(), "\n")
		if !strings.Contains(flags, "-std="+c.want+" ") || strings.Count(flags, "-std=") != 1 {
			t.Errorf("%q: flags\n%s\nwant -std=%s", c.check, flags, c.want)
		}
	}
	// No all.h (a fake or stripped tree): C++17.
	lt, err := findLibtorch(fakeLibtorch(t, false, true), noPython, nil)
	if err != nil {
		t.Fatal(err)
	}
	if lt.cxxStd() != "c++17" {
		t.Errorf("without all.h: %s", lt.cxxStd())
	}
}
