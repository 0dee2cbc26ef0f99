// Package buildinfo says which ragen this is, as the Go toolchain stamped
// the binary.
package buildinfo

import "runtime/debug"

// Version is the main module's version: a tag, or devel+<revision> for a
// build from a work tree, or (devel) when the toolchain recorded neither.
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && (v == "" || v == "(devel)") {
			v = "devel+" + s.Value[:min(12, len(s.Value))]
		}
	}
	if v == "" {
		v = "(devel)"
	}
	return v
}
