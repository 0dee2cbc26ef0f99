package main

import (
	"fmt"
	"os"
	"strings"
)

// handleSwap is how gotch's generated in-place ops adopt the handle that
// libtorch returns: the previous handle (a heap torch::Tensor referring to
// the same storage) was overwritten without being freed.
const handleSwap = "  ts.ctensor = *ptr\n"

// freeOldHandles frees the previous handle before the swap. Both handles
// refer to the same tensor, so this only drops one reference.
func freeOldHandles(src string) (string, int, error) {
	n := strings.Count(src, handleSwap)
	if n == 0 {
		return "", 0, fmt.Errorf("no in-place handle swaps (%q) found", strings.TrimSpace(handleSwap))
	}
	return strings.ReplaceAll(src, handleSwap, "  lib.AtFree(ts.ctensor)\n"+handleSwap), n, nil
}

func freeReplacedHandles(path string) error {
	src, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out, n, err := freeOldHandles(string(src))
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	fmt.Printf("gotchprep: in-place ops free the replaced handle (%d sites)\n", n)
	return os.WriteFile(path, []byte(out), 0o644)
}
