package torchrt

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stddef.h>

// OpenBLAS's name for the kernels it chose at load time; NULL when
// OpenBLAS is not the BLAS in use.
static const char* blas_corename(void) {
	char* (*f)(void) = (char* (*)(void))dlsym(RTLD_DEFAULT, "openblas_get_corename");
	return f ? f() : NULL;
}
*/
import "C"

import (
	"os"
	"runtime"
	"strings"
	"syscall"

	"golang.org/x/sys/cpu"
)

// BLASCore is the name of the kernel set OpenBLAS chose ("SkylakeX",
// "Haswell", ...), or "" when OpenBLAS is not the BLAS in use.
func BLASCore() string {
	if p := C.blas_corename(); p != nil {
		return C.GoString(p)
	}
	return ""
}

// blasCoreEnv is the variable OpenBLAS reads once, when it is loaded, to
// choose its kernels instead of detecting the CPU.
const blasCoreEnv = "OPENBLAS_CORETYPE"

// betterBLASCore returns the kernel set to force when OpenBLAS fell back to
// its generic SSE3 kernels ("Prescott") on a CPU that has AVX2 or AVX-512,
// and "" otherwise. OpenBLAS recognises CPUs by their model numbers, so a
// release older than the CPU does not know it: Debian 12's OpenBLAS 0.3.21
// on an Intel Xeon of family 6 model 207 (Emerald Rapids) picks Prescott
// and multiplies fp32 matrices at 49 GFLOP/s on 2 cores, against 180 with
// SkylakeX (measured with `ragen bench --parts peak`), which roughly halves
// the built-in job's SFT step time.
func betterBLASCore(chosen string) string {
	if runtime.GOARCH != "amd64" || !strings.EqualFold(chosen, "Prescott") {
		return ""
	}
	switch {
	case cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512DQ && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512CD:
		return "SkylakeX"
	case cpu.X86.HasAVX2 && cpu.X86.HasFMA:
		return "Haswell"
	}
	return ""
}

// RestartWithFastBLAS restarts the process with $OPENBLAS_CORETYPE set
// when OpenBLAS chose kernels far below what the CPU can run (see
// betterBLASCore). The variable only works at load time, which is before
// any Go code runs, so the process executes itself again, once: the
// restarted one finds the variable set and goes on. A user who sets
// $OPENBLAS_CORETYPE keeps that choice; when the restart fails, the process
// goes on with the slower kernels.
//
// main calls it first, before any other work (a restart does not return);
// so do the TestMains of packages whose tests multiply matrices
// (torchtest.Main). Importing this package restarts nothing.
func RestartWithFastBLAS() {
	if _, set := os.LookupEnv(blasCoreEnv); set {
		return
	}
	core := betterBLASCore(BLASCore())
	if core == "" {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	env := append(os.Environ(), blasCoreEnv+"="+core)
	_ = syscall.Exec(exe, os.Args, env)
}
