package model

import (
	"math"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"

	"github.com/ragen-go/ragen/internal/torchrt"
)

// tinyConfig is a Qwen2 shape small enough for plain-Go references: GQA
// with 2 query heads per kv head, untied unless asked.
func tinyConfig(tied bool) Config {
	eos := 1
	return Config{
		ModelType: "qwen2", Architectures: []string{"Qwen2ForCausalLM"},
		HiddenSize: 32, IntermediateSize: 48, NumHiddenLayers: 2,
		NumAttentionHeads: 4, NumKeyValueHeads: 2, RopeTheta: 10000, RMSNormEps: 1e-6,
		VocabSize: 64, MaxPositionEmbeddings: 128, TieWordEmbeddings: tied,
		TorchDtype: "float32", HiddenAct: "silu", EOSTokenID: TokenIDs{eos},
	}
}

// writeTiny writes a random tiny Qwen2 checkpoint in HuggingFace's layout.
func writeTiny(t *testing.T, tied bool, shardBytes int64) (string, Config) {
	t.Helper()
	cfg := tinyConfig(tied)
	return writeTinyConfig(t, cfg, shardBytes), cfg
}

// writeTinyConfig writes a random checkpoint of cfg in HuggingFace's layout.
func writeTinyConfig(t *testing.T, cfg Config, shardBytes int64) string {
	t.Helper()
	// libtorch's grad mode and gotch's error slot are per OS thread: keep
	// this test's goroutine on one (its thread ends with it).
	runtime.LockOSThread()
	dir := filepath.Join(t.TempDir(), "ckpt")
	if err := WriteRandomCheckpoint(dir, cfg, InitOptions{Seed: 7, Std: 0.2, BiasStd: 0.1, NormNoise: 0.1, ShardBytes: shardBytes}); err != nil {
		t.Fatal(err)
	}
	return dir
}

func loadTiny(t *testing.T, dir string) *CausalLM {
	t.Helper()
	m, err := LoadCausalLM(dir, Options{Device: gotch.CPU, DType: gotch.Float})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Drop)
	return m
}

// batch makes left-padded ids and mask tensors.
func batch(seqs [][]int) (ids, mask *ts.Tensor, L int) {
	for _, s := range seqs {
		L = max(L, len(s))
	}
	B := len(seqs)
	iv, mv := make([]int64, B*L), make([]int64, B*L)
	for b, s := range seqs {
		off := L - len(s)
		for j, id := range s {
			iv[b*L+off+j], mv[b*L+off+j] = int64(id), 1
		}
	}
	return torchrt.Matrix(iv, int64(B), int64(L), gotch.CPU), torchrt.Matrix(mv, int64(B), int64(L), gotch.CPU), L
}

// fullLogits runs a whole left-padded batch through the model: [B][T][V].
func fullLogits(t *testing.T, m *CausalLM, seqs [][]int) [][][]float32 {
	t.Helper()
	ids, mask, L := batch(seqs)
	defer dropAll(ids, mask)
	pos, err := PositionsFromMask(mask)
	if err != nil {
		t.Fatal(err)
	}
	bias, err := AttentionBias(mask, int64(L), m.DType)
	if err != nil {
		t.Fatal(err)
	}
	defer dropAll(pos, bias)
	var flat []float32
	func() {
		var err error
		defer torchrt.Catch(&err, "test forward")
		h := m.Forward(Inputs{IDs: ids, Positions: pos, Bias: bias}, nil)
		l := m.Logits(h)
		flat = Float32s(l)
		dropAll(h, l)
		if err != nil {
			t.Fatal(err)
		}
	}()
	V := m.Cfg.VocabSize
	out := make([][][]float32, len(seqs))
	for b := range seqs {
		out[b] = make([][]float32, L)
		for j := range L {
			out[b][j] = flat[(b*L+j)*V : (b*L+j+1)*V]
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

// padded returns the plain-slice left-padded batch of seqs.
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
