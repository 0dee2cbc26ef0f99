package main

import (
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// c10dFlags are the cgo flags of ragen's c10d shim (dist/c10d): gotch's
// include and link flags, plus the macros that switch on the process
// groups this libtorch can offer. gloo is the folder holding the gloo
// headers that belong to this libtorch, or "" (see glooHeaders): the shim
// then builds with RAGEN_NO_GLOO and says so when a job starts.
func (lt Libtorch) c10dFlags(gloo string, haveNCCL bool) []string {
	fl := lt.cgoFlags()
	var defs []string
	switch gloo {
	case "":
		defs = append(defs, "-DRAGEN_NO_GLOO")
	case lt.Include, "/usr/include":
		defs = append(defs, "-DUSE_C10D_GLOO")
	default:
		defs = append(defs, "-I"+gloo, "-DUSE_C10D_GLOO")
	}
	if lt.CUDA && haveNCCL {
		defs = append(defs, "-DUSE_C10D_NCCL", "-DRAGEN_NCCL")
	}
	cpp := strings.Replace(fl[0], "-I${SRCDIR} ", "", 1) + " " + strings.Join(defs, " ")
	return []string{cpp, fl[1], fl[2]}
}

// glooFacts is what glooHeaders decides from.
type glooFacts struct {
	Bundled     bool   // lt.Include has gloo/ (the headers came with this libtorch)
	SharedGloo  bool   // libtorch_cpu.so loads gloo as a shared library (libgloo.so.N)
	System      string // a system include folder with gloo/, or ""
	SystemLib   string // the system's libgloo.so, or ""
	VtableDiffs []string
}

// glooHeaders returns the folder of gloo headers the shim may compile
// against, or "" and why not. ProcessGroupGloo.hpp includes gloo's headers,
// and inline code from them ends up in the shim, so they must be the gloo
// that libtorch was built with. That is shown when they came with this
// libtorch, or when libtorch loads the system's libgloo.so (Debian's
// libtorch and libgloo-dev). PyPI's wheels compile their own gloo in and
// ship no headers: the system's headers are then another gloo (torch 2.1.2's
// gloo::rendezvous::Store has five more virtual functions than Debian's).
func (lt Libtorch) glooHeaders(f glooFacts) (string, string) {
	switch {
	case f.Bundled:
		return lt.Include, ""
	case f.SharedGloo && f.System != "":
		return f.System, ""
	case f.SharedGloo:
		return "", "libtorch loads the system's libgloo, whose headers are not installed (Debian: apt-get install libgloo-dev, then make deps)"
	}
	why := fmt.Sprintf("libtorch %s (%s) has gloo compiled in and ships no gloo headers", lt.Version, lt.Source)
	if f.System != "" {
		why += fmt.Sprintf("; the ones in %s are the system's gloo, not libtorch's", filepath.Join(f.System, "gloo"))
	}
	if len(f.VtableDiffs) > 0 {
		why += " (virtual function tables that differ from " + f.SystemLib + "'s: " + strings.Join(f.VtableDiffs, ", ") + ")"
	}
	return "", why
}

// inspectGloo gathers glooFacts on this machine.
func (lt Libtorch) inspectGloo(systemIncludes, systemLibs []string) glooFacts {
	var f glooFacts
	_, err := os.Stat(filepath.Join(lt.Include, "gloo", "algorithm.h"))
	f.Bundled = err == nil
	for _, dir := range systemIncludes {
		if _, err := os.Stat(filepath.Join(dir, "gloo", "algorithm.h")); err == nil {
			f.System = dir
			break
		}
	}
	cpu := filepath.Join(lt.LibDir, "libtorch_cpu.so")
	if ef, err := elf.Open(cpu); err == nil {
		libs, _ := ef.ImportedLibraries()
		ef.Close()
		for _, l := range libs {
			if strings.HasPrefix(l, "libgloo.so") {
				f.SharedGloo = true
			}
		}
	}
	if f.Bundled || f.SharedGloo || f.System == "" {
		return f
	}
	for _, l := range systemLibs {
		if _, err := os.Stat(l); err == nil {
			f.SystemLib = l
			f.VtableDiffs = vtableDiffs(cpu, l, "_ZTVN4gloo")
			break
		}
	}
	return f
}

// vtableDiffs names the classes (mangled prefix) whose virtual function
// tables both libraries export with different sizes, with the number of
// slots in each.
func vtableDiffs(a, b, prefix string) []string {
	sa, sb := vtableSizes(a, prefix), vtableSizes(b, prefix)
	var diffs []string
	for name, n := range sa {
		if m, ok := sb[name]; ok && m != n {
			diffs = append(diffs, fmt.Sprintf("%s %d vs %d entries", demangleNested(strings.TrimPrefix(name, "_ZTV")), n/8, m/8))
		}
	}
	sort.Strings(diffs)
	return diffs
}

// demangleNested spells a mangled nested class name such as
// N4gloo10rendezvous5StoreE as gloo::rendezvous::Store; anything else is
// returned as it is.
func demangleNested(m string) string {
	if !strings.HasPrefix(m, "N") || !strings.HasSuffix(m, "E") {
		return m
	}
	rest, parts := m[1:len(m)-1], []string(nil)
	for rest != "" {
		n := 0
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
		size, err := strconv.Atoi(rest[:n])
		if n == 0 || err != nil || n+size > len(rest) {
			return m
		}
		parts, rest = append(parts, rest[n:n+size]), rest[n+size:]
	}
	return strings.Join(parts, "::")
}

func vtableSizes(lib, prefix string) map[string]uint64 {
	sizes := map[string]uint64{}
	ef, err := elf.Open(lib)
	if err != nil {
		return sizes
	}
	defer ef.Close()
	syms, _ := ef.DynamicSymbols()
	for _, s := range syms {
		if strings.HasPrefix(s.Name, prefix) && s.Section != elf.SHN_UNDEF {
			sizes[s.Name] = s.Size
		}
	}
	return sizes
}

// writeC10dFlags writes dir/cgo_flags.go for lt, and says when the shim is
// built without Gloo.
func writeC10dFlags(dir string, lt Libtorch) error {
	f := lt.inspectGloo([]string{"/usr/include", "/usr/local/include"},
		[]string{"/usr/lib/libgloo.so", "/usr/lib/x86_64-linux-gnu/libgloo.so", "/usr/lib/aarch64-linux-gnu/libgloo.so", "/usr/local/lib/libgloo.so"})
	gloo, why := lt.glooHeaders(f)
	if gloo == "" {
		fmt.Printf("gotchprep: the c10d shim is built without Gloo, so multi-process training on CPU is off: %s\n", why)
	}
	nccl := false
	for _, r := range []string{lt.Include, "/usr/include", "/usr/local/include", "/usr/local/cuda/include"} {
		if _, err := os.Stat(filepath.Join(r, "nccl.h")); err == nil {
			nccl = true
		}
	}
	var b strings.Builder
	b.WriteString("// Code generated by ragen's scripts/gotchprep; DO NOT EDIT.\n\npackage c10d\n\n")
	for _, l := range lt.c10dFlags(gloo, nccl) {
		b.WriteString("// " + l + "\n")
	}
	if gloo == "" {
		fmt.Fprintf(&b, "import \"C\"\n\n// noGloo says why this build has no Gloo.\nconst noGloo = %q\n", why)
	} else {
		b.WriteString("import \"C\"\n\n// noGloo says why this build has no Gloo (empty: it has).\nconst noGloo = \"\"\n")
	}
	path := filepath.Join(dir, "cgo_flags.go")
	if old, err := os.ReadFile(path); err == nil && string(old) == b.String() {
		return nil // unchanged: keep the build cache of the shim
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
