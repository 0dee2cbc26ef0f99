package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
)

// withHeaderOnlyVersion returns the text that holds libtorch's version
// macros. Up to 2.8 torch/csrc/api/include/torch/version.h defines them
// itself; from 2.9 it only includes <torch/headeronly/version.h>, which
// does. src is the former; when it includes the latter and that file is
// there, the latter's text is appended.
func withHeaderOnlyVersion(include string, src []byte) []byte {
	if !bytes.Contains(src, []byte("torch/headeronly/version.h")) {
		return src
	}
	ho, err := os.ReadFile(filepath.Join(include, "torch", "headeronly", "version.h"))
	if err != nil {
		return src
	}
	return append(append(append([]byte{}, src...), '\n'), ho...)
}

// versionBefore tells whether the libtorch version v ("2.11.0") is older
// than major.minor. An unreadable version counts as old.
func versionBefore(v string, major, minor int) bool {
	var ma, mi int
	if _, err := fmt.Sscanf(v, "%d.%d", &ma, &mi); err != nil {
		return true
	}
	return ma < major || ma == major && mi < minor
}
