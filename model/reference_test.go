package model

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/ragen-go/ragen/model/reference"
	"github.com/ragen-go/ragen/model/safetensors"
)

// Two independent implementations must agree: the gotch model and the
// plain-Go reference, on tied and untied, single-file and sharded
// checkpoints, Qwen2 and Llama (biases on and off, an explicit head_dim
// wider than hidden/heads, llama3 rotary scaling), at every non-padding
// position of a left-padded batch.
func TestLogitsMatchReference(t *testing.T) {
	llama := func(tied bool, edit func(c *Config)) Config {
		c := tinyConfig(tied)
		c.ModelType, c.Architectures = ArchLlama, nil
		if edit != nil {
			edit(&c)
		}
		return c
	}
	for _, tc := range []struct {
		name  string
		cfg   Config
		shard int64
	}{
		{"untied", tinyConfig(false), 0},
		{"tied", tinyConfig(true), 0},
		{"untied-sharded", tinyConfig(false), 20_000},
		{"tied-sharded", tinyConfig(true), 20_000},
		{"llama-tied", llama(true, nil), 0},
		{"llama-biases-untied-sharded", llama(false, func(c *Config) { c.AttentionBias, c.MLPBias = true, true }), 20_000},
		{"llama-head-dim", llama(true, func(c *Config) { c.HeadDim = 16 }), 0},
		{"llama3-rope", llama(false, func(c *Config) {
			// Original context 16 puts this head's 8 wavelengths (6 to 2·10⁴
			// positions) in all three of the scaling's regimes.
			c.HeadDim = 16
			c.Rope = RopeScaling{Type: "llama3", Factor: 8, LowFreqFactor: 1, HighFreqFactor: 4, OriginalMaxPositionEmbeddings: 16}
		}), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeTinyConfig(t, tc.cfg, tc.shard)
			if tc.shard > 0 {
				if _, err := os.Stat(filepath.Join(dir, "model.safetensors.index.json")); err != nil {
					t.Fatalf("sharded checkpoint has no index: %v", err)
				}
			}
			ck, err := safetensors.OpenDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer ck.Close()
			rcfg, err := reference.LoadConfig(dir)
			if err != nil {
				t.Fatal(err)
			}
			if (tc.cfg.Rope.Type != "") != (rcfg.RopeScaling != nil) {
				t.Fatalf("config.json's rope_scaling %+v does not say %+v", rcfg.RopeScaling, tc.cfg.Rope)
			}
			ref, err := reference.Load(rcfg, ck)
			if err != nil {
				t.Fatal(err)
			}
			ids, mask := padded(testSeqs)
			want, err := ref.Forward(ids, mask)
			if err != nil {
				t.Fatal(err)
			}
			got := fullLogits(t, loadTiny(t, dir), testSeqs)
			worst := 0.0
			for b := range ids {
				for j := range ids[b] {
					if mask[b][j] == 1 {
						worst = math.Max(worst, maxAbsDiff(got[b][j], want[b][j]))
					}
				}
			}
			t.Logf("max |logit difference| = %.2g", worst)
			if worst > 1e-4 {
				t.Fatalf("gotch and reference logits differ by %.3g (> 1e-4)", worst)
			}
		})
	}
}

// padded returns the plain-slice left-padded batch the reference takes.
func padded(seqs [][]int) ([][]int, [][]int) {
	L := 0
	for _, s := range seqs {
		L = max(L, len(s))
	}
	ids, mask := make([][]int, len(seqs)), make([][]int, len(seqs))
	for b, s := range seqs {
		ids[b], mask[b] = make([]int, L), make([]int, L)
		for j, id := range s {
			ids[b][L-len(s)+j], mask[b][L-len(s)+j] = id, 1
		}
	}
	return ids, mask
}
