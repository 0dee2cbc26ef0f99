package main

import (
	"fmt"
	"os"
	"regexp"
)

// gotch passes an absent optional tensor (ts.None) as a handle to an
// undefined tensor, and its generated wrappers hand that on as
// (x ? *x : torch::Tensor()): an optional that holds an undefined tensor,
// not an empty one. libtorch 2.x does not always read that as absent:
// scaled_dot_product_attention with such a mask fails in 2.1.2 and 2.11
// ("Expected attn_mask dtype to be bool ..., but got attn_mask.dtype:
// nullptr (uninitialized)"), so SDPA was never used. Passing c10::nullopt
// for a missing or undefined tensor is what ts.None means. 1.13 has no SDPA
// and its wrappers are left as they are.
var optionalTensorRe = regexp.MustCompile(`\((\w+) \? \*(\w+) : torch::Tensor\(\)\)`)

// absentTensorsAsNullopt rewrites every optional tensor argument of the
// generated wrappers and returns the count.
func absentTensorsAsNullopt(src string) (string, int, error) {
	n := 0
	var bad string
	out := optionalTensorRe.ReplaceAllStringFunc(src, func(m string) string {
		g := optionalTensorRe.FindStringSubmatch(m)
		if g[1] != g[2] {
			bad = m
			return m
		}
		n++
		return fmt.Sprintf("(%s && %s->defined() ? c10::optional<torch::Tensor>(*%s) : c10::nullopt)", g[1], g[1], g[1])
	})
	if bad != "" {
		return "", 0, fmt.Errorf("unexpected optional tensor argument %q", bad)
	}
	return out, n, nil
}

// passAbsentTensorsAsNullopt applies absentTensorsAsNullopt to the generated
// wrappers for libtorch 2 and later.
func passAbsentTensorsAsNullopt(gen string, lt Libtorch) error {
	if versionBefore(lt.Version, 2, 0) {
		return nil
	}
	src, err := os.ReadFile(gen)
	if err != nil {
		return err
	}
	out, n, err := absentTensorsAsNullopt(string(src))
	if err != nil {
		return fmt.Errorf("%s: %w", gen, err)
	}
	if n == 0 {
		return fmt.Errorf("%s: no optional tensor arguments found to pass as nullopt", gen)
	}
	fmt.Printf("gotchprep: %d optional tensor arguments pass ts.None as c10::nullopt\n", n)
	return os.WriteFile(gen, []byte(out), 0o644)
}
