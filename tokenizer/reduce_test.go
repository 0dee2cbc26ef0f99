package tokenizer

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ragen-go/ragen/tokenizer/tokenizertest"
)

// A reduction keeps the domain's encodings exactly (mapped), decodes any
// reduced ids to the base text, and still encodes text from outside the
// domain losslessly.
func TestReduce(t *testing.T) {
	base, err := Load(tokenizertest.Path(t))
	if err != nil {
		t.Fatal(err)
	}
	domain := []string{
		"<|im_start|>user\nYou are solving the FrozenLake puzzle.\n_P__\n_O_O\n<|im_end|>\n",
		"<think>The goal is down and to the right.</think><answer>Down || Right</answer><|im_end|>",
		"Turn 2:\nState:\nphoenix: 0.1 points\nReward:\n0.25\n",
	}
	dir := t.TempDir()
	red, err := base.Reduce(domain, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d of %d tokens kept", len(red.IDs), red.BaseSize)
	if len(red.IDs) < 256+26 || len(red.IDs) > 2000 || red.BaseSize != base.VocabSize() {
		t.Fatalf("kept %d of %d tokens", len(red.IDs), red.BaseSize)
	}
	rt, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if red.IDs[rt.EOS()] != base.EOS() {
		t.Fatalf("eos %d maps to %d, base eos %d", rt.EOS(), red.IDs[rt.EOS()], base.EOS())
	}
	for _, text := range append(domain, "Zebra crossings ∑ 日本語 🙂 are far outside the domain") {
		ids := rt.Encode(text)
		got, err := rt.Decode(ids)
		if err != nil || got != text {
			t.Fatalf("%q round-trips to %q (%v)", text, got, err)
		}
		mapped := make([]int, len(ids))
		for k, r := range ids {
			mapped[k] = red.IDs[r]
		}
		if viaBase, _ := base.Decode(mapped); viaBase != text {
			t.Fatalf("mapped ids decode to %q with the base tokenizer", viaBase)
		}
	}
	if got, ok, err := LoadReduction(dir); err != nil || !ok || !slices.Equal(got.IDs, red.IDs) {
		t.Fatalf("LoadReduction: %v %v", ok, err)
	}
}

// Without domain text there is nothing to reduce to: a clear error, no
// tokenizer written.
func TestReduceNoText(t *testing.T) {
	base, err := Load(tokenizertest.Path(t))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "out")
	if _, err := base.Reduce(nil, dir); err == nil || !strings.Contains(err.Error(), "no domain text") {
		t.Fatalf("got %v, want the no-domain-text error", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("a tokenizer folder was written: %v", err)
	}
}
