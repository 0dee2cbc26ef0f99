package main

import (
	"strings"
	"testing"
)

func TestFixSlots(t *testing.T) {
	src := `package ts

func(ts *Tensor) Abs(del bool)(retVal *Tensor, err error) {
  ptr := (*lib.Ctensor)(unsafe.Pointer(C.malloc(0)))
  lib.AtgAbs(ptr, ts.ctensor)
  retVal = newTensor(*ptr, "Abs")
  return retVal, err
}

func(ts *Tensor) Svd(some bool, del bool)(retVal0 *Tensor, retVal1 *Tensor, retVal2 *Tensor, err error) {
  ctensorPtr0 := (*lib.Ctensor)(unsafe.Pointer(C.malloc(0)))
  ctensorPtr1 := (*lib.Ctensor)(unsafe.Pointer(uintptr(unsafe.Pointer(ctensorPtr0)) + unsafe.Sizeof(ctensorPtr0)))
  ctensorPtr2 := (*lib.Ctensor)(unsafe.Pointer(uintptr(unsafe.Pointer(ctensorPtr1)) + unsafe.Sizeof(ctensorPtr0)))
  lib.AtgSvd(ctensorPtr0, ts.ctensor)
  return
}

func loop(inputs []*Tensor) {
	for i := 0; i < len(inputs); i++ {
		outputPtr := (*lib.Ctensor)(unsafe.Pointer(C.malloc(0)))
		defer C.free(unsafe.Pointer(outputPtr))
	}
}
// ptr := (*lib.Ctensor)(unsafe.Pointer(C.malloc(0)))
`
	got, n, err := fixSlots(src)
	if err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Errorf("fixed %d sites, want 3", n)
	}
	for _, s := range []string{
		"  ptr := (*lib.Ctensor)(C.malloc(C.size_t(1) * C.size_t(unsafe.Sizeof(uintptr(0)))))\n  defer C.free(unsafe.Pointer(ptr))\n  lib.AtgAbs",
		"ctensorPtr0 := (*lib.Ctensor)(C.malloc(C.size_t(3) * C.size_t(unsafe.Sizeof(uintptr(0)))))",
		"+ unsafe.Sizeof(ctensorPtr0)))\n  defer C.free(unsafe.Pointer(ctensorPtr0))\n  lib.AtgSvd",
		"outputPtr := (*lib.Ctensor)(C.malloc(C.size_t(1) * C.size_t(unsafe.Sizeof(uintptr(0)))))\n\t\tdefer C.free(unsafe.Pointer(outputPtr))\n\t}",
		"// ptr := (*lib.Ctensor)(unsafe.Pointer(C.malloc(0)))", // comments stay
	} {
		if !strings.Contains(got, s) {
			t.Errorf("fixed source lacks %q:\n%s", s, got)
		}
	}
	if c := strings.Count(got, "defer C.free(unsafe.Pointer(outputPtr))"); c != 1 {
		t.Errorf("outputPtr freed %d times, want once", c)
	}

	if _, _, err := fixSlots("x := C.malloc(0)\n"); err == nil {
		t.Error("an unknown malloc(0) shape was accepted")
	}
}

func TestRemoveBallast(t *testing.T) {
	src := "func newTensor() {\n\tx := new(Tensor)\n\tx.d = new(bigStruct)\n\treturn x\n}\n"
	got, err := removeBallast(src)
	if err != nil || strings.Contains(got, "new(bigStruct)") || !strings.Contains(got, "x := new(Tensor)") {
		t.Fatalf("removeBallast = %q, %v", got, err)
	}
	if _, err := removeBallast("package ts\n"); err == nil {
		t.Fatal("a tensor.go without the ballast line was accepted")
	}
}

func TestFreeOldHandles(t *testing.T) {
	src := "func(ts *Tensor) Add_(other *Tensor)(err error) {\n  lib.AtgAdd_(ptr, ts.ctensor, other.ctensor)\n  ts.ctensor = *ptr\n  return err\n}\n"
	got, n, err := freeOldHandles(src)
	if err != nil || n != 1 || !strings.Contains(got, "  lib.AtFree(ts.ctensor)\n  ts.ctensor = *ptr\n") {
		t.Fatalf("freeOldHandles = %q, %d, %v", got, n, err)
	}
	if _, _, err := freeOldHandles("package ts\n"); err == nil {
		t.Fatal("a file without handle swaps was accepted")
	}
}
