// Package reftest holds the model to its test oracle: a plain-Go Qwen2 and
// Llama forward pass (internal/reference), written from HuggingFace's
// modeling files and independent of any torch code. The oracle sits under
// this test-only package's internal/ so that no production code can
// import it.
package reftest

import (
	"math"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/sugarme/gotch"

	"github.com/ragen-go/ragen/internal/torchrt"
	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/model/reftest/internal/reference"
	"github.com/ragen-go/ragen/model/safetensors"
)

// testSeqs is a left-padded batch of three lengths.
var testSeqs = [][]int{{5, 9, 12, 3, 40, 7, 22}, {17, 2, 63, 8}, {33}}

// tinyConfig is a Qwen2 shape small enough for the plain-Go reference:
// GQA with 2 query heads per kv head, untied unless asked.
func tinyConfig(tied bool) model.Config {
	eos := 1
	return model.Config{
		ModelType: "qwen2", Architectures: []string{"Qwen2ForCausalLM"},
		HiddenSize: 32, IntermediateSize: 48, NumHiddenLayers: 2,
		NumAttentionHeads: 4, NumKeyValueHeads: 2, RopeTheta: 10000, RMSNormEps: 1e-6,
		VocabSize: 64, MaxPositionEmbeddings: 128, TieWordEmbeddings: tied,
		TorchDtype: "float32", HiddenAct: "silu", EOSTokenID: model.TokenIDs{eos},
	}
}

// Two independent implementations must agree: the gotch model and the
// plain-Go reference, on tied and untied, single-file and sharded
// checkpoints, Qwen2 and Llama (biases on and off, an explicit head_dim
// wider than hidden/heads, llama3 rotary scaling), at every non-padding
// position of a left-padded batch.
func TestLogitsMatchReference(t *testing.T) {
	llama := func(tied bool, edit func(c *model.Config)) model.Config {
		c := tinyConfig(tied)
		c.ModelType, c.Architectures = model.ArchLlama, nil
		if edit != nil {
			edit(&c)
		}
		return c
	}
	for _, tc := range []struct {
		name  string
		cfg   model.Config
		shard int64
	}{
		{"untied", tinyConfig(false), 0},
		{"tied", tinyConfig(true), 0},
		{"untied-sharded", tinyConfig(false), 20_000},
		{"tied-sharded", tinyConfig(true), 20_000},
		{"llama-tied", llama(true, nil), 0},
		{"llama-biases-untied-sharded", llama(false, func(c *model.Config) { c.AttentionBias, c.MLPBias = true, true }), 20_000},
		{"llama-head-dim", llama(true, func(c *model.Config) { c.HeadDim = 16 }), 0},
		{"llama3-rope", llama(false, func(c *model.Config) {
			// Original context 16 puts this head's 8 wavelengths (6 to 2·10⁴
			// positions) in all three of the scaling's regimes.
			c.HeadDim = 16
			c.Rope = model.RopeScaling{Type: "llama3", Factor: 8, LowFreqFactor: 1, HighFreqFactor: 4, OriginalMaxPositionEmbeddings: 16}
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
			got := fullLogits(t, dir, testSeqs)
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

// writeTinyConfig writes a random checkpoint of cfg in HuggingFace's
// layout, sharded into files of shardBytes when that is positive.
func writeTinyConfig(t *testing.T, cfg model.Config, shardBytes int64) string {
	t.Helper()
	// libtorch's grad mode and gotch's error slot are per OS thread: keep
	// this test's goroutine on one (its thread ends with it).
	runtime.LockOSThread()
	dir := filepath.Join(t.TempDir(), "ckpt")
	if err := model.WriteRandomCheckpoint(dir, cfg, model.InitOptions{Seed: 7, Std: 0.2, BiasStd: 0.1, NormNoise: 0.1, ShardBytes: shardBytes}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// fullLogits runs the checkpoint in dir on a whole left-padded batch:
// [B][T][V].
func fullLogits(t *testing.T, dir string, seqs [][]int) [][][]float32 {
	t.Helper()
	m, err := model.LoadCausalLM(dir, model.Options{Device: gotch.CPU, DType: gotch.Float})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Drop()
	ids, mask := padded(seqs)
	B, L := int64(len(ids)), int64(len(ids[0]))
	flatIDs, flatMask := make([]int64, 0, B*L), make([]int64, 0, B*L)
	for b := range ids {
		for j := range ids[b] {
			flatIDs, flatMask = append(flatIDs, int64(ids[b][j])), append(flatMask, int64(mask[b][j]))
		}
	}
	var flat []float32
	func() {
		var s torchrt.Scope
		defer s.Drop()
		defer torchrt.Catch(&err, "test forward")
		idT := s.Keep(torchrt.Matrix(flatIDs, B, L, gotch.CPU))
		maskT := s.Keep(torchrt.Matrix(flatMask, B, L, gotch.CPU))
		pos := s.Op(model.PositionsFromMask(maskT))
		bias := s.Op(model.AttentionBias(maskT, L, m.DType))
		h := s.Keep(m.Forward(model.Inputs{IDs: idT, Positions: pos, Bias: bias}, nil))
		flat = model.Float32s(s.Keep(m.Logits(h)))
	}()
	if err != nil {
		t.Fatal(err)
	}
	V := m.Cfg.VocabSize
	out := make([][][]float32, len(seqs))
	for b := range seqs {
		out[b] = make([][]float32, L)
		for j := range int(L) {
			out[b][j] = flat[(b*int(L)+j)*V : (b*int(L)+j+1)*V]
		}
	}
	return out
}

func maxAbsDiff(a, b []float32) float64 {
	d := 0.0
	for i := range a {
		d = math.Max(d, math.Abs(float64(a[i])-float64(b[i])))
	}
	return d
}
