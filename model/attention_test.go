package model

import (
	"math"
	"testing"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"

	"github.com/ragen-go/ragen/internal/torchrt"
)

// withAttentionBlock runs fn with the block-causal path's query block set
// to n (0: one block, the plain eager path).
func withAttentionBlock(n int64, fn func()) {
	old := attentionBlock
	defer func() { attentionBlock = old }()
	attentionBlock = n
	if n == 0 {
		attentionBlock = math.MaxInt32
	}
	fn()
}

// Attending in query blocks over only the visible keys is the same
// computation as the whole score matrix: the same logits at every real
// position of a left-padded batch, the same gradients of every weight, and the same logits through
// the KV cache when a block of new tokens follows a cached prefix (S > T),
// with a last block shorter than the others.
func TestBlockCausalAttentionIsExact(t *testing.T) {
	dir, _ := writeTiny(t, false, 0)
	m := loadTiny(t, dir)
	// The blocks are the matmul path's; with libtorch 2.x the model loads
	// with SDPA, which would make both runs below the same.
	if err := m.SetSDPA(false); err != nil {
		t.Fatal(err)
	}
	if err := SetTrainable(m.Params(), true); err != nil {
		t.Fatal(err)
	}
	seqs := [][]int{make([]int, 22), make([]int, 15), make([]int, 9)}
	for b, s := range seqs {
		for j := range s {
			s[j] = 1 + (b*37+j*11)%60
		}
	}
	ids, mask, L := batch(seqs)
	defer dropAll(ids, mask)
	// The loss weighs real positions only: a padding query sees no key,
	// and its output (which nothing reads) depends on which masked keys
	// its block holds.
	B, V := int64(len(seqs)), int64(m.Cfg.VocabSize)
	real := must(must(mask.Totype(gotch.Float, false)).View([]int64{B, int64(L), 1}, true))
	w := must(must(ts.Randn([]int64{B, int64(L), V}, gotch.Float, gotch.CPU)).Mul(real, true))
	defer dropAll(real, w)
	run := func() (logits []float32, grads map[string][]float32) {
		var s scope
		defer s.Drop()
		pos := s.Op(PositionsFromMask(mask))
		bias := s.Keep(attentionBias(mask, int64(L), m.DType))
		z := s.Keep(m.Logits(s.Keep(m.Forward(Inputs{IDs: ids, Positions: pos, Bias: bias}, nil))))
		check(s.Op(s.Op(z.Mul(w, false)).Sum(gotch.Float, false)).Backward())
		return Float32s(z), paramGrads(t, m)
	}
	var wantZ, gotZ []float32
	var wantG, gotG map[string][]float32
	withAttentionBlock(0, func() { wantZ, wantG = run() })
	withAttentionBlock(4, func() { gotZ, gotG = run() })
	for b, seq := range seqs {
		for j := L - len(seq); j < L; j++ {
			at := (b*L + j) * int(V)
			if d := maxAbsDiff(gotZ[at:at+int(V)], wantZ[at:at+int(V)]); d > 1e-5 {
				t.Fatalf("sequence %d position %d: blocked logits differ from the whole score matrix's by %.3g", b, j, d)
			}
		}
	}
	for name, want := range wantG {
		scale := 1.0
		for _, g := range want {
			scale = max(scale, math.Abs(float64(g)))
		}
		if d := maxAbsDiff(gotG[name], want); d > 1e-5*scale {
			t.Fatalf("%s: blocked gradient differs by %.3g (largest %.3g)", name, d, scale)
		}
	}

	// A cached prefix of 8 tokens, then 14 new ones in blocks of 4.
	seq := seqs[0]
	full := fullLogits(t, m, [][]int{seq})[0]
	withAttentionBlock(4, func() {
		var s torchrt.Scope
		defer s.Drop()
		cache, err := NewCache(m.Cfg, 1, int64(len(seq)), m.DType, m.Device)
		if err != nil {
			t.Fatal(err)
		}
		defer cache.Drop()
		for _, part := range [][2]int{{0, 8}, {8, len(seq)}} {
			in := seq[part[0]:part[1]]
			ids, _, _ := batch([][]int{in})
			s.Keep(ids)
			ones, pos := make([]int64, part[1]), make([]int64, len(in))
			for i := range ones {
				ones[i] = 1
			}
			for i := range pos {
				pos[i] = int64(part[0] + i)
			}
			km := s.Keep(torchrt.Matrix(ones, 1, int64(part[1]), m.Device))
			bias := s.Keep(attentionBias(km, int64(len(in)), m.DType))
			l, err := m.LastLogits(Inputs{IDs: ids, Positions: s.Keep(torchrt.Matrix(pos, 1, int64(len(in)), m.Device)), Bias: bias}, cache)
			if err != nil {
				t.Fatal(err)
			}
			s.Keep(l)
			if d := maxAbsDiff(Float32s(l), full[part[1]-1]); d > 1e-5 {
				t.Fatalf("after %d cached tokens, %d new in blocks: logits differ from the full forward by %.3g", part[0], len(in), d)
			}
		}
	})
}
