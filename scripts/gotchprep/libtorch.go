package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// Libtorch describes one libtorch installation: where its headers and
// libraries are, which version it is and whether it can drive a GPU.
type Libtorch struct {
	Source   string // how it was found: "$LIBTORCH", "python torch" or "system"
	Include  string // directory holding torch/ and ATen/
	LibDir   string // directory holding libtorch.so and libc10.so
	Version  string // from torch/csrc/api/include/torch/version.h, e.g. "1.13.0"
	CUDA     bool   // libtorch_cuda.so is present
	CXX11ABI bool   // built with _GLIBCXX_USE_CXX11_ABI=1
	CXXStd   string // the -std its headers need, e.g. "c++20" (cxxstd.go); "" means c++17
}

// errNoLibtorch is returned by findLibtorch when nothing usable is found.
var errNoLibtorch = errors.New("no libtorch found")

// findLibtorch looks for libtorch in the documented order: $LIBTORCH, the
// libtorch bundled with an installed PyTorch, then the system one (Debian's
// libtorch-dev).
func findLibtorch(env string, pythonTorchDir func() string, systemRoots []sysRoot) (Libtorch, error) {
	if env != "" {
		lt, err := inspectRoot(env, filepath.Join(env, "include"), filepath.Join(env, "lib"), "$LIBTORCH")
		if err != nil {
			return Libtorch{}, fmt.Errorf("$LIBTORCH=%s: %w", env, err)
		}
		return lt, nil
	}
	if dir := pythonTorchDir(); dir != "" {
		if lt, err := inspectRoot(dir, filepath.Join(dir, "include"), filepath.Join(dir, "lib"), "python torch"); err == nil {
			return lt, nil
		}
	}
	for _, r := range systemRoots {
		if lt, err := inspectRoot(r.Include, r.Include, r.LibDir, "system"); err == nil {
			return lt, nil
		}
	}
	return Libtorch{}, errNoLibtorch
}

// sysRoot is a place where a distribution installs libtorch.
type sysRoot struct{ Include, LibDir string }

var defaultSystemRoots = []sysRoot{
	{"/usr/include", "/usr/lib/x86_64-linux-gnu"},
	{"/usr/include", "/usr/lib/aarch64-linux-gnu"},
	{"/usr/local/include", "/usr/local/lib"},
}

var versionRe = regexp.MustCompile(`#define TORCH_VERSION_(MAJOR|MINOR|PATCH) (\d+)`)

func inspectRoot(root, include, libDir, source string) (Libtorch, error) {
	lt := Libtorch{Source: source, Include: include, LibDir: libDir}
	vh := filepath.Join(include, "torch", "csrc", "api", "include", "torch", "version.h")
	src, err := os.ReadFile(vh)
	if err != nil {
		return lt, fmt.Errorf("no torch headers under %s (missing %s)", include, vh)
	}
	src = withHeaderOnlyVersion(include, src)
	parts := map[string]string{}
	for _, m := range versionRe.FindAllStringSubmatch(string(src), -1) {
		parts[m[1]] = m[2]
	}
	if parts["MAJOR"] == "" || parts["MINOR"] == "" {
		return lt, fmt.Errorf("%s does not define TORCH_VERSION_MAJOR/MINOR", vh)
	}
	lt.Version = parts["MAJOR"] + "." + parts["MINOR"] + "." + parts["PATCH"]
	c10 := filepath.Join(libDir, "libc10.so")
	for _, lib := range []string{"libtorch.so", "libtorch_cpu.so", "libc10.so"} {
		if _, err := os.Stat(filepath.Join(libDir, lib)); err != nil {
			return lt, fmt.Errorf("no %s in %s", lib, libDir)
		}
	}
	if _, err := os.Stat(filepath.Join(libDir, "libtorch_cuda.so")); err == nil {
		lt.CUDA = true
	}
	abi, err := usesCXX11ABI(c10)
	if err != nil {
		return lt, err
	}
	lt.CXX11ABI = abi
	lt.CXXStd = requiredCXXStd(include)
	return lt, nil
}

// usesCXX11ABI tells whether a library was built with the C++11 string ABI,
// from the mangled names of c10's own functions that take a std::string:
// std::__cxx11::basic_string is "NSt7__cxx1112basic_string...", the old
// string is "Ss". Only names in namespace c10 count: PyPI's wheels (old ABI)
// carry pieces of libstdc++ whose names mention std::__cxx11 all the same.
func usesCXX11ABI(lib string) (bool, error) {
	data, err := os.ReadFile(lib)
	if err != nil {
		return false, fmt.Errorf("reading %s: %w", lib, err)
	}
	var cxx11, old int
	for _, name := range c10SymbolRe.FindAll(data, -1) {
		switch {
		case bytes.Contains(name, []byte("St7__cxx11")):
			cxx11++
		case bytes.Contains(name, []byte("Ss")):
			old++
		}
	}
	switch {
	case cxx11 > 0 && old == 0:
		return true, nil
	case old > 0 && cxx11 == 0:
		return false, nil
	}
	return false, fmt.Errorf("cannot tell the C++ string ABI of %s: %d c10 symbols use std::__cxx11::string and %d the old std::string", lib, cxx11, old)
}

// c10SymbolRe matches a mangled name in namespace c10 in a symbol table.
var c10SymbolRe = regexp.MustCompile(`_ZN3c10[A-Za-z0-9_]+`)

// pythonTorch returns the directory of an installed PyTorch package, or "".
func pythonTorch() string {
	for _, py := range []string{"python3", "python"} {
		out, err := exec.Command(py, "-c", "import os, torch; print(os.path.dirname(torch.__file__))").Output()
		if err == nil {
			return strings.TrimSpace(string(out))
		}
	}
	return ""
}

// cgoFlags returns the #cgo lines for libtch/lib.go. This is the one place
// where the CPU/CUDA choice is made: with libtorch_cuda.so present the CUDA
// libraries are linked with --no-as-needed, because nothing in gotch calls
// them directly and the linker would otherwise drop them, leaving
// CudaIfAvailable() on the CPU.
func (lt Libtorch) cgoFlags() []string {
	abi := "0"
	if lt.CXX11ABI {
		abi = "1"
	}
	inc := []string{"-I${SRCDIR}"}
	if lt.Include != "/usr/include" { // -I on a system directory would reorder include_next
		inc = append(inc, "-I"+lt.Include)
	}
	inc = append(inc, "-I"+filepath.Join(lt.Include, "torch", "csrc", "api", "include"))
	libs := "-ltorch -ltorch_cpu -lc10"
	if lt.CUDA {
		libs = "-ltorch_cuda -lc10_cuda " + libs
	}
	return []string{
		"#cgo CPPFLAGS: " + strings.Join(inc, " ") + " -D_GLIBCXX_USE_CXX11_ABI=" + abi,
		"#cgo CXXFLAGS: -std=" + lt.cxxStd() + " -O2 -Wall -Wno-unused-variable -Wno-unused-function -Wno-deprecated-declarations -Wno-sign-compare",
		"#cgo LDFLAGS: -L" + lt.LibDir + " -Wl,-rpath," + lt.LibDir + " -Wl,--no-as-needed " + libs + " -Wl,--as-needed -lstdc++",
	}
}

// syntaxArgs are the g++ arguments that check torch_api.cpp the way cgo will
// compile it.
func (lt Libtorch) syntaxArgs(libtchDir string) []string {
	var args []string
	for _, line := range lt.cgoFlags()[:2] {
		for _, f := range strings.Fields(line)[2:] {
			if strings.HasPrefix(f, "-W") || f == "-O2" {
				continue
			}
			args = append(args, strings.ReplaceAll(f, "${SRCDIR}", libtchDir))
		}
	}
	return append(args, "-fsyntax-only", "-w", "-fmax-errors=0", filepath.Join(libtchDir, "torch_api.cpp"))
}
