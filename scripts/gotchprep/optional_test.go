package main

import (
	"strings"
	"testing"
)

func TestAbsentTensorsAsNullopt(t *testing.T) {
	in := `    auto outputs__ = torch::scaled_dot_product_attention(*query, *key, *value, (attn_mask ? *attn_mask : torch::Tensor()), dropout_p, (bool)is_causal);
    auto outputs__ = torch::linear(*input, *weight, (bias ? *bias : torch::Tensor()));
    auto outputs__ = torch::abs(*self);`
	out, n, err := absentTensorsAsNullopt(in)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("%d rewrites, want 2", n)
	}
	for _, want := range []string{
		"*value, (attn_mask && attn_mask->defined() ? c10::optional<torch::Tensor>(*attn_mask) : c10::nullopt), dropout_p",
		"*weight, (bias && bias->defined() ? c10::optional<torch::Tensor>(*bias) : c10::nullopt));",
		"torch::abs(*self);",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("rewritten text lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "torch::Tensor()") {
		t.Errorf("an undefined tensor is still passed:\n%s", out)
	}
	if _, _, err := absentTensorsAsNullopt("(a ? *b : torch::Tensor())"); err == nil {
		t.Error("a test of one handle that passes another was rewritten without complaint")
	}
}

func TestVersionBefore(t *testing.T) {
	for _, c := range []struct {
		v            string
		major, minor int
		want         bool
	}{
		{"1.13.0", 2, 0, true},
		{"2.1.2", 2, 0, false},
		{"2.11.0", 2, 2, false},
		{"2.1.2", 2, 11, true},
		{"3.0.0", 2, 15, false},
		{"", 2, 0, true},
	} {
		if got := versionBefore(c.v, c.major, c.minor); got != c.want {
			t.Errorf("versionBefore(%q, %d, %d) = %t, want %t", c.v, c.major, c.minor, got, c.want)
		}
	}
}
