package main

import (
	"fmt"
	"regexp"
	"strings"
)

// gotch v0.9.1 allocates the C slot that receives an op's output tensors
// with C.malloc(0) and never frees it: a leak on every op, and a heap
// overflow for ops with several outputs, which write N pointers into that
// zero-size block. fixSlots rewrites each such site to allocate N pointers and
// free them when the Go function returns (the outputs are copied out of the
// slot before that).

var (
	slotRe   = regexp.MustCompile(`^(\s*)(\w+) := \(\*lib\.(\w+)\)\(unsafe\.Pointer\(C\.malloc\(0\)\)\)\s*$`)
	offsetRe = regexp.MustCompile(`^\s*\w+ := \(\*lib\.\w+\)\(unsafe\.Pointer\(uintptr\(unsafe\.Pointer\(\w+\)\) \+ unsafe\.Sizeof\(\w+\)\)\)\s*$`)
)

// fixSlots returns the fixed source and the number of sites fixed.
func fixSlots(src string) (string, int, error) {
	lines := strings.Split(src, "\n")
	out := make([]string, 0, len(lines)+len(lines)/8)
	fixed := 0
	for i := 0; i < len(lines); i++ {
		m := slotRe.FindStringSubmatch(lines[i])
		if m == nil {
			out = append(out, lines[i])
			continue
		}
		indent, name, typ := m[1], m[2], m[3]
		j := i + 1
		for j < len(lines) && offsetRe.MatchString(lines[j]) {
			j++
		}
		n := j - i
		out = append(out, fmt.Sprintf("%s%s := (*lib.%s)(C.malloc(C.size_t(%d) * C.size_t(unsafe.Sizeof(uintptr(0)))))", indent, name, typ, n))
		out = append(out, lines[i+1:j]...)
		free := "defer C.free(unsafe.Pointer(" + name + "))"
		if !freedNext(lines[j:], free) {
			out = append(out, indent+free)
		}
		fixed++
		i = j - 1
	}
	res := strings.Join(out, "\n")
	if strings.Contains(stripComments(res), "C.malloc(0)") {
		return "", 0, fmt.Errorf("a C.malloc(0) site has a shape this tool does not know")
	}
	return res, fixed, nil
}

// freedNext reports whether the code right after a slot already frees it.
func freedNext(rest []string, free string) bool {
	for k := 0; k < len(rest) && k < 3; k++ {
		if strings.TrimSpace(rest[k]) == free {
			return true
		}
	}
	return false
}

func stripComments(src string) string {
	var b strings.Builder
	for _, l := range strings.Split(src, "\n") {
		if i := strings.Index(l, "//"); i >= 0 {
			l = l[:i]
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	// Block comments are rare in gotch's ts package; drop them too.
	return regexp.MustCompile(`(?s)/\*.*?\*/`).ReplaceAllString(b.String(), "")
}
