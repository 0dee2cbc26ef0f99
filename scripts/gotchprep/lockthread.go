package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
)

// libtorch reports a failed call through a thread_local error string
// (torch_last_err in libtch/torch_api.h) that gotch reads back with a second
// cgo call, TorchErr. A goroutine may change OS threads between the two
// calls: the error is then lost, the op's output slot is read although
// nothing was written to it, and the garbage handle crashes the process when
// it is freed (CI saw exactly that: a failed probe of a stubbed wrapper,
// then a segfault in TensorImpl's reset_ on a pointer equal to glibc's
// mangled free-list link). Worse, the stale error is reported later by an
// unrelated op on the first thread.
//
// lockThreads keeps every gotch function that checks TorchErr on one OS
// thread from its first statement to its return. LockOSThread nests and
// costs a few nanoseconds (no system call), against the microseconds of the
// cgo call it guards.
const lockStmts = "\n\truntime.LockOSThread()\n\tdefer runtime.UnlockOSThread()\n"

// lockThreads inserts lockStmts at the top of each function in src whose body
// calls TorchErr, except TorchErr itself, and imports runtime if needed.
func lockThreads(src string) (string, int, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, 0)
	if err != nil {
		return "", 0, err
	}
	imported := false
	for _, im := range f.Imports {
		if im.Path.Value == `"runtime"` {
			if im.Name != nil && im.Name.Name != "runtime" {
				return "", 0, fmt.Errorf("runtime is imported as %s", im.Name.Name)
			}
			imported = true
		}
	}
	var at []int // byte offsets just after each body's opening brace, in source order
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Body == nil || fn.Name.Name == "TorchErr" || !callsTorchErr(fn.Body) {
			continue
		}
		at = append(at, fset.Position(fn.Body.Lbrace).Offset+1)
	}
	if len(at) == 0 {
		return src, 0, nil
	}
	var b strings.Builder
	last := 0
	if !imported {
		// A second import declaration right after the package clause: the
		// cgo preamble stays attached to import "C".
		end := fset.Position(f.Name.End()).Offset
		b.WriteString(src[:end])
		b.WriteString("\n\nimport \"runtime\"\n")
		last = end
	}
	for _, off := range at {
		b.WriteString(src[last:off])
		b.WriteString(lockStmts)
		last = off
	}
	b.WriteString(src[last:])
	return b.String(), len(at), nil
}

// callsTorchErr reports whether body calls TorchErr, directly or in a
// closure.
func callsTorchErr(body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok {
			if id, ok := c.Fun.(*ast.Ident); ok && id.Name == "TorchErr" {
				found = true
			}
		}
		return !found
	})
	return found
}

// lockAllThreads applies lockThreads to gotch's tensor package.
func lockAllThreads(tsDir string) error {
	total, err := rewriteGoFiles(tsDir, "", lockThreads)
	if err != nil {
		return err
	}
	if total == 0 {
		return fmt.Errorf("no function in %s checks TorchErr", tsDir)
	}
	fmt.Printf("gotchprep: %d functions that check libtorch's thread-local error stay on one OS thread\n", total)
	return nil
}
