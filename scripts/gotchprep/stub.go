package main

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// wrapper is one generated C++ function of torch_api_generated.cpp.h.
type wrapper struct {
	name       string // e.g. atg__foo
	returnType string // e.g. "void", "int64_t", "tensor *"
	start, end int    // 0-based line indices of the signature and the closing brace
}

var wrapperStartRe = regexp.MustCompile(`^([A-Za-z_][\w \t\*]*?)\s*\b(atg_\w+)\(.*\)\s*\{\s*$`)

// parseWrappers finds every top-level atg_ function in the generated file. A
// function starts at a line in column 0 that declares it and ends at the next
// line that is exactly "}".
func parseWrappers(lines []string) ([]wrapper, error) {
	var ws []wrapper
	for i := 0; i < len(lines); i++ {
		m := wrapperStartRe.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		w := wrapper{name: m[2], returnType: strings.TrimSpace(m[1]), start: i, end: -1}
		for j := i + 1; j < len(lines); j++ {
			if lines[j] == "}" {
				w.end = j
				break
			}
		}
		if w.end < 0 {
			return nil, fmt.Errorf("wrapper %s at line %d has no closing brace", w.name, i+1)
		}
		ws = append(ws, w)
		i = w.end
	}
	if len(ws) == 0 {
		return nil, fmt.Errorf("no atg_ wrappers found")
	}
	return ws, nil
}

// errLineRe matches a compiler diagnostic located in the generated file: an
// error itself, or the "required from here" line of a template instantiation
// chain whose error is reported inside a libtorch header.
var errLineRe = regexp.MustCompile(`torch_api_generated\.cpp\.h:(\d+):\d+:\s+(error:|required from)`)

// failingWrappers maps the compiler's diagnostics to the wrappers that
// contain them. It also returns the diagnostics it could not place, which
// mean the failure is outside the generated wrappers and cannot be stubbed.
func failingWrappers(ws []wrapper, diagnostics string) (names []string, unplaced []string) {
	set := map[string]bool{}
	for _, line := range strings.Split(diagnostics, "\n") {
		m := errLineRe.FindStringSubmatch(line)
		if m == nil {
			if strings.Contains(line, "error:") {
				unplaced = append(unplaced, line)
			}
			continue
		}
		n, _ := strconv.Atoi(m[1])
		idx := sort.Search(len(ws), func(i int) bool { return ws[i].end >= n-1 })
		if idx < len(ws) && ws[idx].start <= n-1 {
			set[ws[idx].name] = true
		} else {
			unplaced = append(unplaced, line)
		}
	}
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, unplaced
}

// stubWrappers replaces the bodies of the named wrappers with one that records
// gotch's error "<name> is not available in this libtorch", so the Go side
// returns it as an error from the op instead of failing to build.
func stubWrappers(lines []string, ws []wrapper, names []string, version string) []string {
	stub := map[string]bool{}
	for _, n := range names {
		stub[n] = true
	}
	out := make([]string, 0, len(lines))
	prev := 0
	for _, w := range ws {
		if !stub[w.name] {
			continue
		}
		out = append(out, lines[prev:w.start+1]...)
		out = append(out,
			"  // Stubbed by ragen's gotchprep: this wrapper does not compile against libtorch "+version+".",
			"  PROTECT(",
			fmt.Sprintf("    throw std::runtime_error(%q);", w.name+" is not available in this libtorch ("+version+")"),
			"  )",
		)
		if w.returnType != "void" {
			out = append(out, "  return 0;")
		}
		out = append(out, "}")
		prev = w.end + 1
	}
	return append(out, lines[prev:]...)
}
