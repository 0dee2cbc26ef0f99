package main

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fakeLibtorch lays out the files findLibtorch looks at.
func fakeLibtorch(t *testing.T, cuda, cxx11 bool) string {
	t.Helper()
	root := t.TempDir()
	vh := filepath.Join(root, "include", "torch", "csrc", "api", "include", "torch", "version.h")
	must(t, os.MkdirAll(filepath.Dir(vh), 0o755))
	must(t, os.WriteFile(vh, []byte("#define TORCH_VERSION_MAJOR 2\n#define TORCH_VERSION_MINOR 1\n#define TORCH_VERSION_PATCH 2\n"), 0o644))
	lib := filepath.Join(root, "lib")
	must(t, os.MkdirAll(lib, 0o755))
	names := []string{"libtorch.so", "libtorch_cpu.so"}
	if cuda {
		names = append(names, "libtorch_cuda.so", "libc10_cuda.so")
	}
	for _, n := range names {
		must(t, os.WriteFile(filepath.Join(lib, n), nil, 0o644))
	}
	c10 := "_ZN3c105ErrorC2ENS_14SourceLocationESs"
	if cxx11 {
		c10 = "_ZN3c105ErrorC2ENS_14SourceLocationENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE"
	}
	must(t, os.WriteFile(filepath.Join(lib, "libc10.so"), []byte(c10), 0o644))
	return root
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func noPython() string { return "" }

func TestFindLibtorchCPUAndCUDA(t *testing.T) {
	cpu := fakeLibtorch(t, false, true)
	lt, err := findLibtorch(cpu, noPython, nil)
	if err != nil {
		t.Fatal(err)
	}
	if lt.Version != "2.1.2" || lt.CUDA || !lt.CXX11ABI || lt.Source != "$LIBTORCH" {
		t.Fatalf("cpu libtorch = %+v", lt)
	}
	flags := strings.Join(lt.cgoFlags(), "\n")
	for _, want := range []string{"-Wl,-rpath," + filepath.Join(cpu, "lib"), "-ltorch -ltorch_cpu -lc10", "-D_GLIBCXX_USE_CXX11_ABI=1", "-I" + filepath.Join(cpu, "include")} {
		if !strings.Contains(flags, want) {
			t.Errorf("cpu flags lack %q:\n%s", want, flags)
		}
	}
	if strings.Contains(flags, "cuda") {
		t.Errorf("cpu flags link CUDA:\n%s", flags)
	}

	gpu := fakeLibtorch(t, true, false)
	lt, err = findLibtorch("", func() string { return gpu }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !lt.CUDA || lt.CXX11ABI || lt.Source != "python torch" {
		t.Fatalf("cuda libtorch = %+v", lt)
	}
	flags = strings.Join(lt.cgoFlags(), "\n")
	for _, want := range []string{"-Wl,--no-as-needed -ltorch_cuda -lc10_cuda -ltorch", "-D_GLIBCXX_USE_CXX11_ABI=0"} {
		if !strings.Contains(flags, want) {
			t.Errorf("cuda flags lack %q:\n%s", want, flags)
		}
	}
}

func TestFindLibtorchErrors(t *testing.T) {
	if _, err := findLibtorch("", noPython, []sysRoot{{"/nonexistent/include", "/nonexistent/lib"}}); !errors.Is(err, errNoLibtorch) {
		t.Errorf("nothing installed: err = %v, want errNoLibtorch", err)
	}
	bad := t.TempDir()
	_, err := findLibtorch(bad, noPython, nil)
	if err == nil || !strings.Contains(err.Error(), "$LIBTORCH="+bad) || !strings.Contains(err.Error(), "version.h") {
		t.Errorf("bad $LIBTORCH: err = %v, want one naming the folder and the missing header", err)
	}
	// A system root with headers but no libraries is skipped.
	root := fakeLibtorch(t, false, true)
	must(t, os.Remove(filepath.Join(root, "lib", "libtorch_cpu.so")))
	if _, err := findLibtorch("", noPython, []sysRoot{{filepath.Join(root, "include"), filepath.Join(root, "lib")}}); !errors.Is(err, errNoLibtorch) {
		t.Errorf("incomplete system libtorch: err = %v", err)
	}
}

// The shim's flags follow what the machine has: Gloo when gloo's headers
// for this libtorch are there, NCCL only for a CUDA libtorch with nccl.h.
func TestC10dFlags(t *testing.T) {
	lt := Libtorch{Include: "/opt/libtorch/include", LibDir: "/opt/libtorch/lib", CXX11ABI: true}
	if f := lt.c10dFlags("", false)[0]; !strings.Contains(f, "-DRAGEN_NO_GLOO") || strings.Contains(f, "SRCDIR") || strings.Contains(f, "NCCL") {
		t.Errorf("no headers: %s", f)
	}
	if f := lt.c10dFlags("/usr/include", true)[0]; !strings.Contains(f, "-DUSE_C10D_GLOO") || strings.Contains(f, "-I/usr/include ") || strings.Contains(f, "NCCL") {
		t.Errorf("CPU libtorch with the system's gloo: %s", f)
	}
	if f := lt.c10dFlags("/opt/gloo/include", false)[0]; !strings.Contains(f, "-I/opt/gloo/include -DUSE_C10D_GLOO") {
		t.Errorf("gloo headers elsewhere: %s", f)
	}
	lt.CUDA = true
	if f := lt.c10dFlags(lt.Include, true)[0]; !strings.Contains(f, "-DRAGEN_NCCL") || !strings.Contains(f, "-I/opt/libtorch/include ") || strings.Count(f, "-I/opt/libtorch/include ") != 1 {
		t.Errorf("CUDA libtorch with nccl.h: %s", f)
	}
	if f := lt.c10dFlags(lt.Include, true)[2]; !strings.Contains(f, "-ltorch_cuda") {
		t.Errorf("CUDA link flags: %s", f)
	}
}

// Gloo's headers are used only when they are shown to be the gloo that
// libtorch was built with.
func TestGlooHeaders(t *testing.T) {
	lt := Libtorch{Include: "/t/include", LibDir: "/t/lib", Version: "2.1.2", Source: "python torch"}
	for _, c := range []struct {
		name string
		f    glooFacts
		dir  string
		why  []string
	}{
		{"bundled with libtorch", glooFacts{Bundled: true, System: "/usr/include"}, "/t/include", nil},
		{"debian: libtorch loads the system's libgloo", glooFacts{SharedGloo: true, System: "/usr/include"}, "/usr/include", nil},
		{"debian without libgloo-dev", glooFacts{SharedGloo: true}, "", []string{"libgloo-dev"}},
		{"pypi wheel, system headers", glooFacts{System: "/usr/include", SystemLib: "/usr/lib/libgloo.so", VtableDiffs: []string{"gloo::rendezvous::Store 13 vs 8 entries"}}, "",
			[]string{"libtorch 2.1.2 (python torch) has gloo compiled in", "/usr/include/gloo are the system's gloo", "/usr/lib/libgloo.so's: gloo::rendezvous::Store 13 vs 8 entries"}},
		{"pypi wheel, no headers", glooFacts{}, "", []string{"ships no gloo headers"}},
	} {
		dir, why := lt.glooHeaders(c.f)
		if dir != c.dir || (dir == "") != (why != "") {
			t.Errorf("%s: headers %q (%q), want %q", c.name, dir, why, c.dir)
		}
		for _, w := range c.why {
			if !strings.Contains(why, w) {
				t.Errorf("%s: reason %q lacks %q", c.name, why, w)
			}
		}
	}
}

// PyPI's wheels are built with the old string ABI but carry pieces of
// libstdc++ whose names mention std::__cxx11; only c10's own names decide.
func TestStringABIFromC10Names(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name, syms string
		want       bool
		fails      bool
	}{
		{"pypi wheel", "_ZGTtNSt11logic_errorC1ERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE\x00_ZN3c106detail14torchCheckFailEPKcS2_jRKSs\x00", false, false},
		{"cxx11 build", "_ZN3c106detail14torchCheckFailEPKcS2_jRKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE\x00_ZN3c106detail14torchCheckFailEPKcS2_jS2_\x00", true, false},
		{"no string in c10's names", "_ZN3c106detail14torchCheckFailEPKcS2_jS2_\x00", false, true},
		{"both", "_ZN3c101fERKSs\x00_ZN3c101gERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE\x00", false, true},
	}
	for _, c := range cases {
		lib := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".so")
		must(t, os.WriteFile(lib, []byte(c.syms), 0o644))
		got, err := usesCXX11ABI(lib)
		if c.fails {
			if err == nil || !strings.Contains(err.Error(), lib) {
				t.Errorf("%s: err = %v, want one naming %s", c.name, err, lib)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: cxx11 = %v, %v; want %v", c.name, got, err, c.want)
		}
	}
}

func TestDemangleNested(t *testing.T) {
	for in, want := range map[string]string{
		"N4gloo10rendezvous5StoreE": "gloo::rendezvous::Store",
		"N4gloo9transport6DeviceE":  "gloo::transport::Device",
		"N4gloo9rendezvousE":        "N4gloo9rendezvousE", // a length past the end
		"St9exception":              "St9exception",
	} {
		if got := demangleNested(in); got != want {
			t.Errorf("demangleNested(%q) = %q, want %q", in, got, want)
		}
	}
}

// The CUDA-graph shim is compiled in only for a CUDA libtorch with
// CUDAGraph.h and complete CUDA runtime headers; otherwise the stub says
// which is missing.
func TestCUDAGraphSetup(t *testing.T) {
	root := t.TempDir()
	inc := filepath.Join(root, "torch", "include")
	must(t, os.MkdirAll(filepath.Join(inc, "ATen", "cuda"), 0o755))
	lt := Libtorch{Include: inc, LibDir: filepath.Join(root, "torch", "lib"), Version: "2.11.0", Source: "python torch"}
	if _, why := lt.cudaGraphSetup(nil); !strings.Contains(why, "CPU-only build") {
		t.Errorf("CPU libtorch: why = %q", why)
	}
	lt.CUDA = true
	if _, why := lt.cudaGraphSetup(nil); !strings.Contains(why, "CUDAGraph.h") {
		t.Errorf("no CUDAGraph.h: why = %q", why)
	}
	must(t, os.WriteFile(filepath.Join(inc, "ATen", "cuda", "CUDAGraph.h"), nil, 0o644))
	wheel := filepath.Join(root, "nvidia", "cu13", "include")
	must(t, os.MkdirAll(wheel, 0o755))
	must(t, os.WriteFile(filepath.Join(wheel, "cuda_runtime_api.h"), nil, 0o644))
	cands := lt.cudaHeaderCandidates()
	if !slices.Contains(cands, wheel) {
		t.Fatalf("candidates %v miss the nvidia wheel's %s", cands, wheel)
	}
	if dir, why := lt.cudaGraphSetup([]string{wheel}); dir != "" || !strings.Contains(why, "nvidia-cuda-crt") {
		t.Errorf("runtime headers without crt/: dir %q, why %q", dir, why)
	}
	must(t, os.MkdirAll(filepath.Join(wheel, "crt"), 0o755))
	must(t, os.WriteFile(filepath.Join(wheel, "crt", "host_config.h"), nil, 0o644))
	dir, why := lt.cudaGraphSetup([]string{"/nonexistent", wheel})
	if dir != wheel || why != "" {
		t.Fatalf("complete headers: dir %q, why %q", dir, why)
	}
	if f := lt.cudaGraphFlags(dir)[0]; !strings.Contains(f, "-I"+wheel+" -DRAGEN_CUDA_GRAPHS") || strings.Contains(f, "SRCDIR") {
		t.Errorf("flags: %s", f)
	}
	if f := lt.cudaGraphFlags("")[0]; strings.Contains(f, "RAGEN_CUDA_GRAPHS") {
		t.Errorf("stub flags: %s", f)
	}
}
