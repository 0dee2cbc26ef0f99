package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
)

// The C++ standard is the one libtorch's headers ask for: torch/all.h stops
// with "#error C++<n> or later compatible compiler is required" below it.
// That is C++14 in 1.13, C++17 in 2.1 to 2.11 and C++20 in 2.15 (which uses
// std::strong_ordering, requires-clauses and string_view::starts_with).
// gotch's own code needs C++17, the floor.
var cplusplusRe = regexp.MustCompile(`__cplusplus < (\d{4})(\d{2})L`)

// requiredCXXStd reads the standard the libtorch under include requires,
// as a -std value; "" when it asks for C++17 or less (or cannot be read).
func requiredCXXStd(include string) string {
	src, err := os.ReadFile(filepath.Join(include, "torch", "csrc", "api", "include", "torch", "all.h"))
	if err != nil {
		return ""
	}
	year := 0
	for _, m := range cplusplusRe.FindAllStringSubmatch(string(src), -1) {
		if y, _ := strconv.Atoi(m[1]); y > year {
			year = y
		}
	}
	if year <= 2017 {
		return ""
	}
	return "c++" + strconv.Itoa(year%100)
}

func (lt Libtorch) cxxStd() string {
	if lt.CXXStd == "" {
		return "c++17"
	}
	return lt.CXXStd
}
