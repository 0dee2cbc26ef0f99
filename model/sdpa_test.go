package model

import (
	"fmt"
	"math"
	"testing"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/prepared"
	"github.com/sugarme/gotch/ts"

	"github.com/ragen-go/ragen/internal/torchrt"
)

// The fp32 tolerances of SDPA against the matmul–softmax path. libtorch's
// math kernel scales q and k by hd^-¼ each instead of q by hd^-½ and sums
// in another order, so the two agree to rounding, not bit for bit.
const (
	sdpaLogitTol = 2e-5 // absolute, on logits of magnitude ~1–10
	sdpaGradTol  = 2e-5 // relative to the largest entry of each gradient
)

// needSDPA skips a test when the linked libtorch has no
// scaled_dot_product_attention (1.13, where the rest of the suite runs).
func needSDPA(t testing.TB) {
	t.Helper()
	if !torchrt.HasSDPA() {
		t.Skipf("libtorch %s has no scaled_dot_product_attention (it came with 2.0): only the matmul path runs here", prepared.LibtorchVersion)
	}
}

// onPath runs fn with m's attention on SDPA or on the matmul path.
func onPath(t testing.TB, m *CausalLM, sdpa bool, fn func()) {
	t.Helper()
	if err := m.SetSDPA(sdpa); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := m.SetSDPA(torchrt.HasSDPA()); err != nil {
			t.Fatal(err)
		}
	}()
	fn()
}

// sdpaSeqs is a left-padded batch: a full row (plain causal), two padded
// ones, lengths that are no multiple of the test's attention block.
func sdpaSeqs() [][]int {
	seqs := [][]int{make([]int, 22), make([]int, 15), make([]int, 9)}
	for b, s := range seqs {
		for j := range s {
			s[j] = 1 + (b*29+j*13)%60
		}
	}
	return seqs
}

func gradsClose(t *testing.T, what string, got, want map[string][]float32) {
	t.Helper()
	worst := 0.0
	for name, w := range want {
		scale := 0.0
		for _, g := range w {
			scale = math.Max(scale, math.Abs(float64(g)))
		}
		if scale == 0 {
			t.Fatalf("%s: %s has a zero gradient: the comparison shows nothing", what, name)
		}
		d := maxAbsDiff(got[name], w) / scale
		worst = math.Max(worst, d)
		if d > sdpaGradTol {
			t.Errorf("%s: %s gradient differs by %.3g of its largest entry %.3g", what, name, d, scale)
		}
	}
	t.Logf("%s: gradients agree within %.2g (relative)", what, worst)
}

// SDPA gives the matmul path's logits at every real position of a
// left-padded batch, and the same gradient of every weight, both against
// the one-block eager path and against the block-causal one that long
// training sequences take (blocks of 4 here).
func TestSDPAMatchesMatmulForwardAndBackward(t *testing.T) {
	needSDPA(t)
	dir, _ := writeTiny(t, false, 0)
	m := loadTiny(t, dir)
	if err := SetTrainable(m.Params(), true); err != nil {
		t.Fatal(err)
	}
	seqs := sdpaSeqs()
	ids, mask, L := batch(seqs)
	defer dropAll(ids, mask)
	B, V := int64(len(seqs)), int64(m.Cfg.VocabSize)
	// Weights on real positions only: a padding query sees no key, and
	// what it gets (a mean over masked keys) is no path's business.
	torchrt.ManualSeed(3)
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
	var sdpaZ []float32
	var sdpaG map[string][]float32
	onPath(t, m, true, func() { sdpaZ, sdpaG = run() })
	for _, block := range []int64{0, 4} {
		what := fmt.Sprintf("matmul path, attention block %d", block)
		if block == 0 {
			what = "matmul path, one block"
		}
		var z []float32
		var g map[string][]float32
		onPath(t, m, false, func() { withAttentionBlock(block, func() { z, g = run() }) })
		worst := 0.0
		for b, seq := range seqs {
			for j := L - len(seq); j < L; j++ {
				at := (b*L + j) * int(V)
				d := maxAbsDiff(sdpaZ[at:at+int(V)], z[at:at+int(V)])
				worst = math.Max(worst, d)
				if d > sdpaLogitTol {
					t.Fatalf("%s: sequence %d position %d: SDPA logits differ by %.3g", what, b, j, d)
				}
			}
		}
		t.Logf("%s: logits agree within %.2g", what, worst)
		if worst == 0 {
			t.Fatalf("%s: the logits are bit-identical to SDPA's: both runs took one path", what)
		}
		gradsClose(t, what, sdpaG, g)
	}
}

// The trainer's forward (ScoreForTraining: the backbone with autograd,
// the head in chunks) gives the same log-probabilities, entropies and
// weight gradients on SDPA as on the block-causal matmul path.
func TestSDPAMatchesMatmulTrainingPass(t *testing.T) {
	needSDPA(t)
	dir, _ := writeTiny(t, true, 0)
	m := loadTiny(t, dir)
	if err := SetTrainable(m.Params(), true); err != nil {
		t.Fatal(err)
	}
	seqs := sdpaSeqs()
	ids, mask, L := batch(seqs)
	defer dropAll(ids, mask)
	B := int64(len(seqs))
	torchrt.ManualSeed(4)
	a := must(ts.Randn([]int64{B, int64(L - 1)}, gotch.Float, gotch.CPU))
	b := must(ts.Randn([]int64{B, int64(L - 1)}, gotch.Float, gotch.CPU))
	// The loss mask: the real positions that predict a token (with left
	// padding the token after a real one is real). A padding position sees
	// no key, so its log-probability is no path's business.
	only := must(must(mask.Narrow(1, 0, int64(L-1), false)).Totype(gotch.Float, true))
	defer dropAll(a, b, only)
	run := func() (lp, h []float32, grads map[string][]float32) {
		sc, err := m.ScoreForTraining(ids, mask, only, 5)
		if err != nil {
			t.Fatal(err)
		}
		defer sc.Drop()
		var s scope
		defer s.Drop()
		loss := s.Op(s.Op(s.Op(sc.LogProbs.Mul(a, false)).Sum(gotch.Float, false)).Add(s.Op(s.Op(sc.Entropy.Mul(b, false)).Sum(gotch.Float, false)), false))
		check(loss.Backward())
		if err := sc.Backward(); err != nil {
			t.Fatal(err)
		}
		return Float32s(sc.LogProbs), Float32s(sc.Entropy), paramGrads(t, m)
	}
	var lp1, h1, lp2, h2 []float32
	var g1, g2 map[string][]float32
	onPath(t, m, true, func() { lp1, h1, g1 = run() })
	onPath(t, m, false, func() { withAttentionBlock(4, func() { lp2, h2, g2 = run() }) })
	dlp, dh := maxAbsDiff(lp1, lp2), maxAbsDiff(h1, h2)
	t.Logf("log-probabilities agree within %.2g, entropies within %.2g", dlp, dh)
	if dlp > sdpaLogitTol || dh > sdpaLogitTol {
		t.Errorf("log-probabilities differ by %.3g, entropies by %.3g, want ≤ %g", dlp, dh, sdpaLogitTol)
	}
	if dlp == 0 && dh == 0 {
		t.Fatal("the scores are bit-identical on both paths: both runs took one path")
	}
	gradsClose(t, "training pass", g1, g2)
}

// Prefill of a left-padded batch into the KV cache, then several decode
// steps, give the same logits on SDPA as on the matmul path at every step.
// Decoding is where SDPA's own causal flag would be wrong (top-left
// aligned): the explicit bias must carry the mask.
func TestSDPAMatchesMatmulWithKVCache(t *testing.T) {
	needSDPA(t)
	dir, _ := writeTiny(t, false, 0)
	m := loadTiny(t, dir)
	seqs := sdpaSeqs()
	const steps = 6
	run := func() [][]float32 {
		var s torchrt.Scope
		defer s.Drop()
		ids, mask, L := batch(seqs)
		s.Keep(ids)
		s.Keep(mask)
		B := int64(len(seqs))
		cache, err := NewCache(m.Cfg, B, int64(L+steps), m.DType, m.Device)
		if err != nil {
			t.Fatal(err)
		}
		defer cache.Drop()
		keys := mask
		pos := s.Op(PositionsFromMask(mask))
		in := Inputs{IDs: ids, Positions: pos, Bias: s.Keep(attentionBias(keys, int64(L), m.DType))}
		var out [][]float32
		for step := 0; ; step++ {
			l, err := m.LastLogits(in, cache)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, Float32s(s.Keep(l)))
			if step == steps {
				return out
			}
			// The same next tokens on both paths (not each path's argmax),
			// so that a difference cannot hide behind a different token.
			next := make([]int64, B)
			for b := range next {
				next[b] = int64(1 + (b*7+step*5)%60)
			}
			last := s.Op(in.Positions.Narrow(1, size(in.Positions)[1]-1, 1, false))
			ones := s.Op(ts.Ones([]int64{B, 1}, gotch.Int64, m.Device))
			keys = s.Op(ts.Cat([]*ts.Tensor{keys, ones}, 1))
			in = Inputs{
				IDs:       s.Keep(torchrt.Matrix(next, B, 1, m.Device)),
				Positions: s.Op(last.AddScalar(ts.IntScalar(1), false)),
				Bias:      s.Keep(attentionBias(keys, 1, m.DType)),
			}
		}
	}
	var sdpa, eager [][]float32
	onPath(t, m, true, func() { sdpa = run() })
	onPath(t, m, false, func() { eager = run() })
	worst := 0.0
	for step := range sdpa {
		d := maxAbsDiff(sdpa[step], eager[step])
		worst = math.Max(worst, d)
		if d > sdpaLogitTol {
			t.Errorf("decode step %d (0 is the prefill): SDPA logits differ by %.3g", step, d)
		}
	}
	t.Logf("prefill and %d decode steps: logits agree within %.2g", steps, worst)
	if worst == 0 {
		t.Fatal("the logits are bit-identical on both paths: both runs took one path")
	}
}

// A model loads on SDPA exactly when libtorch has it; SetSDPA refuses SDPA
// where libtorch lacks it (1.13) and otherwise moves every layer.
func TestSetSDPA(t *testing.T) {
	dir, _ := writeTiny(t, false, 0)
	m := loadTiny(t, dir)
	for _, l := range m.Layers {
		if l.Attn.SDPA != torchrt.HasSDPA() {
			t.Fatalf("loaded with SDPA %v, libtorch has it: %v", l.Attn.SDPA, torchrt.HasSDPA())
		}
	}
	err := m.SetSDPA(true)
	if !torchrt.HasSDPA() {
		if err == nil {
			t.Fatal("SetSDPA(true) succeeded on a libtorch without SDPA")
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range m.Layers {
		if !l.Attn.SDPA {
			t.Fatal("SetSDPA(true) left a layer on the matmul path")
		}
	}
}
