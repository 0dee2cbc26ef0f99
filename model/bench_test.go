package model

import (
	"fmt"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"

	"github.com/ragen-go/ragen/internal/torchrt"
)

// bench50M is the ~50M-parameter CI-sized configuration (tied embeddings,
// GQA 8/2 heads, 32k vocabulary): 47.4M parameters.
func bench50M() Config {
	eos := 1
	return Config{
		ModelType: "qwen2", HiddenSize: 512, IntermediateSize: 1536, NumHiddenLayers: 10,
		NumAttentionHeads: 8, NumKeyValueHeads: 2, RopeTheta: 1e6, RMSNormEps: 1e-6,
		VocabSize: 32768, MaxPositionEmbeddings: 4096, TieWordEmbeddings: true, HiddenAct: "silu", EOSTokenID: TokenIDs{eos},
	}
}

// forwardFLOPs estimates the matmul FLOPs of a forward over T new tokens
// attending S keys per sequence, with the lm head on `heads` positions.
func forwardFLOPs(c Config, B, T, S, heads int) float64 {
	d, I, L := float64(c.HiddenSize), float64(c.IntermediateSize), float64(c.NumHiddenLayers)
	hd := float64(c.HeadDimension())
	q, kv := float64(c.NumAttentionHeads)*hd, float64(c.NumKeyValueHeads)*hd
	perTok := 2 * L * (d*q + 2*d*kv + q*d + 3*d*I)
	attn := 2 * L * 2 * float64(T) * float64(S) * q // scores and weighted values
	return float64(B)*(float64(T)*perTok+attn) + float64(B*heads)*2*d*float64(c.VocabSize)
}

func loadBench(b *testing.B) *CausalLM {
	b.Helper()
	runtime.LockOSThread()
	dir := filepath.Join(b.TempDir(), "bench50m")
	if err := WriteRandomCheckpoint(dir, bench50M(), InitOptions{Seed: 1}); err != nil {
		b.Fatal(err)
	}
	m, err := LoadCausalLM(dir, Options{Device: gotch.CPU, DType: gotch.Float})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(m.Drop)
	return m
}

// BenchmarkMatmulPeak measures the fp32 1024³ matmul rate the other
// figures are compared against.
func BenchmarkMatmulPeak(b *testing.B) {
	x := must(ts.Randn([]int64{1024, 1024}, gotch.Float, gotch.CPU))
	defer x.MustDrop()
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		y := must(x.Matmul(x, false))
		y.MustDrop()
	}
	b.ReportMetric(2*1024*1024*1024*float64(b.N)/time.Since(start).Seconds()/1e9, "GFLOP/s")
}

func prompts(B, T int) [][]int {
	ps := make([][]int, B)
	for i := range ps {
		ps[i] = make([]int, T)
		for j := range ps[i] {
			ps[i][j] = 2 + (i*131+j*17)%30000
		}
	}
	return ps
}

// BenchmarkPrefill: 128-token prompts, one generated token.
func BenchmarkPrefill(b *testing.B) {
	m := loadBench(b)
	for _, B := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("batch=%d", B), func(b *testing.B) {
			ps := prompts(B, 128)
			start := time.Now()
			for range b.N {
				if _, err := m.Generate(ps, GenerateOptions{MaxNewTokens: 1}); err != nil {
					b.Fatal(err)
				}
			}
			sec := time.Since(start).Seconds()
			b.ReportMetric(float64(B*128*b.N)/sec, "tokens/s")
			b.ReportMetric(forwardFLOPs(m.Cfg, B, 128, 128, 1)*float64(b.N)/sec/1e9, "GFLOP/s")
		})
	}
}

// BenchmarkDecode: after a 64-token prompt, 64 new tokens per sequence
// (EOS never fires: no stop ids), through the dynamic KV cache and the
// static one (GenerateOptions.StaticCache); reports decode tokens/s.
func BenchmarkDecode(b *testing.B) {
	m := loadBench(b)
	const P, N = 64, 64
	for _, kind := range []string{"dynamic", "static"} {
		for _, B := range []int{1, 16, 64} {
			b.Run(fmt.Sprintf("cache=%s/batch=%d", kind, B), func(b *testing.B) {
				ps := prompts(B, P)
				static := kind == "static"
				var decodeSec float64
				for range b.N {
					t0 := time.Now()
					if _, err := m.Generate(ps, GenerateOptions{MaxNewTokens: 1, StaticCache: static}); err != nil {
						b.Fatal(err)
					}
					t1 := time.Now()
					if _, err := m.Generate(ps, GenerateOptions{MaxNewTokens: N, StaticCache: static}); err != nil {
						b.Fatal(err)
					}
					decodeSec += time.Since(t1).Seconds() - t1.Sub(t0).Seconds()
				}
				flops := 0.0
				for k := 1; k < N; k++ {
					flops += forwardFLOPs(m.Cfg, B, 1, P+k, 1)
				}
				b.ReportMetric(float64(B*(N-1)*b.N)/decodeSec, "tokens/s")
				b.ReportMetric(flops*float64(b.N)/decodeSec/1e9, "GFLOP/s")
			})
		}
	}
}

// attentionPaths are the two attention paths, SDPA first; SDPA is skipped
// where libtorch lacks it.
var attentionPaths = []struct {
	name string
	sdpa bool
}{{"sdpa", true}, {"matmul", false}}

// BenchmarkAttentionPath compares SDPA with the matmul–softmax path on the
// 50M preset: prefill (one forward over B prompts of T tokens and the head
// on the last position) and a training step (ScoreForTraining and its
// backward over B sequences of T tokens, head and loss on the last 64
// positions, as a response after a prompt). The matmul path takes query
// blocks of 128 from T = 256 on.
//
//	go test -run '^$' -bench AttentionPath -benchtime 3x ./model/
func BenchmarkAttentionPath(b *testing.B) {
	m := loadBench(b)
	defer func() {
		if err := m.SetSDPA(torchrt.HasSDPA()); err != nil {
			b.Fatal(err)
		}
	}()
	path := func(b *testing.B, sdpa bool) {
		if sdpa && !torchrt.HasSDPA() {
			b.Skip("this libtorch has no scaled_dot_product_attention")
		}
		if err := m.SetSDPA(sdpa); err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range []struct{ B, T int }{{1, 128}, {8, 128}, {1, 512}, {8, 512}} {
		for _, p := range attentionPaths {
			b.Run(fmt.Sprintf("prefill/B=%d/T=%d/%s", c.B, c.T, p.name), func(b *testing.B) {
				path(b, p.sdpa)
				ps := prompts(c.B, c.T)
				for range b.N {
					if _, err := m.Generate(ps, GenerateOptions{MaxNewTokens: 1}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
	if err := SetTrainable(m.Params(), true); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct{ B, T int }{{4, 256}, {2, 512}} {
		for _, p := range attentionPaths {
			b.Run(fmt.Sprintf("train/B=%d/T=%d/%s", c.B, c.T, p.name), func(b *testing.B) {
				path(b, p.sdpa)
				for range b.N {
					trainStep(b, m, c.B, c.T, 64)
				}
			})
		}
	}
}

// trainStep is one training forward and backward: a summed log-probability
// of the last n positions of B sequences of T tokens.
func trainStep(b *testing.B, m *CausalLM, B, T, n int) {
	var s torchrt.Scope
	defer s.Drop()
	ids, ones := make([]int64, B*T), make([]int64, B*T)
	sel := make([]float32, B*(T-1))
	for i, p := range prompts(B, T) {
		for j, id := range p {
			ids[i*T+j], ones[i*T+j] = int64(id), 1
		}
		for j := T - 1 - n; j < T-1; j++ {
			sel[i*(T-1)+j] = 1
		}
	}
	idT := s.Keep(torchrt.Matrix(ids, int64(B), int64(T), gotch.CPU))
	mask := s.Keep(torchrt.Matrix(ones, int64(B), int64(T), gotch.CPU))
	only := s.Keep(torchrt.Matrix(sel, int64(B), int64(T-1), gotch.CPU))
	sc, err := m.ScoreForTraining(idT, mask, only, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer sc.Drop()
	loss := s.Op(sc.LogProbs.Sum(gotch.Float, false))
	check(loss.Backward())
	if err := sc.Backward(); err != nil {
		b.Fatal(err)
	}
	for _, p := range m.Params() {
		if g := gradOrNil(p.T); g != nil {
			check(g.Zero_())
			g.MustDrop()
		}
	}
}

// BenchmarkEagerOp is what one eager libtorch op costs through gotch on a
// decoding-sized row (SmolLM2's 576), its result freed: the unit of the
// work between the products of a decoded token (docs/benchmarks.md, "The
// levers, measured").
func BenchmarkEagerOp(b *testing.B) {
	x := ts.MustOnes([]int64{1, 1, 576}, gotch.Float, gotch.CPU)
	defer x.MustDrop()
	b.Run("view", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			x.MustView([]int64{576}, false).MustDrop()
		}
	})
	b.Run("add", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			x.MustAddScalar(ts.FloatScalar(1), false).MustDrop()
		}
	})
}

// BenchmarkDecodeTensors counts the tensors one decoded token creates on
// SmolLM2-135M-Instruct (make deps fetches it), batch 1, through the eager
// layers and through the single-row step (rowstep.go): the eager ops per
// token, reported as tensors/token.
func BenchmarkDecodeTensors(b *testing.B) {
	const gguf = "../.cache/models/SmolLM2-135M-Instruct.Q4_1.gguf"
	m, err := LoadCausalLM(gguf, Options{Device: gotch.CPU, DType: gotch.Float})
	if err != nil {
		b.Skipf("%s: %v (make deps fetches it)", gguf, err)
	}
	defer m.Drop()
	gen := func(n int) int64 {
		c0 := ts.TensorCount
		if _, err := m.Generate([][]int{{1, 2, 3, 4}}, GenerateOptions{MaxNewTokens: n, Seed: 1}); err != nil {
			b.Fatal(err)
		}
		return ts.TensorCount - c0
	}
	for _, row := range []bool{false, true} {
		name := map[bool]string{false: "eager", true: "row"}[row]
		b.Run(name, func(b *testing.B) {
			var perTok float64
			withRowSteps(row, func() {
				for i := 0; i < b.N; i++ {
					short, long := gen(2), gen(12)
					perTok = float64(long-short) / 10
				}
			})
			b.ReportMetric(perTok, "tensors/token")
		})
	}
}
