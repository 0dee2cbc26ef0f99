package main

import (
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

func TestLockThreads(t *testing.T) {
	src := `package ts

// #include "stdlib.h"
import "C"

import (
  "unsafe"
  lib "github.com/sugarme/gotch/libtch"
)

func(ts *Tensor) Abs(del bool)(retVal *Tensor, err error) {
  ptr := (*lib.Ctensor)(C.malloc(8))
  lib.AtgAbs(ptr, ts.ctensor)
  if err = TorchErr(); err != nil {
    return retVal, err
  }
  return newTensor(*ptr), nil
}

func (ts *Tensor) MustAbs() *Tensor { t, _ := ts.Abs(false); return t }

func closure() error { f := func() error { return TorchErr() }; return f() }

func TorchErr() error { return nil }
`
	got, n, err := lockThreads(src)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("locked %d functions, want 2 (Abs and closure)", n)
	}
	if _, err := parser.ParseFile(token.NewFileSet(), "", got, 0); err != nil {
		t.Fatalf("result does not parse: %v\n%s", err, got)
	}
	for _, want := range []string{
		"package ts\n\nimport \"runtime\"\n",
		"// #include \"stdlib.h\"\nimport \"C\"", // the cgo preamble stays attached
		"(retVal *Tensor, err error) {" + lockStmts + "\n  ptr :=",
		"func closure() error {" + lockStmts + " f :=",
		"func TorchErr() error { return nil }",
		"func (ts *Tensor) MustAbs() *Tensor { t, _",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("result lacks %q:\n%s", want, got)
		}
	}

	// A file that imports runtime already gets no second import.
	withRuntime := strings.Replace(src, "import (\n", "import (\n  \"runtime\"\n", 1)
	got, _, err = lockThreads(withRuntime)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(got, `"runtime"`) != 1 {
		t.Errorf("runtime imported twice:\n%s", got)
	}
	if _, _, err := lockThreads("package ts\nimport rt \"runtime\"\nfunc f() { TorchErr() }\n"); err == nil {
		t.Error("a renamed runtime import was accepted")
	}
}
