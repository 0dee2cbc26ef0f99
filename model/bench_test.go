package model

import (
	"fmt"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"
)

// bench50M is the ~50M-parameter CI-sized configuration (tied embeddings,
// GQA 8/2 heads, 32k vocabulary): 47.4M parameters.
func bench50M() Config {
	eos := 1
	return Config{
		ModelType: "qwen2", HiddenSize: 512, IntermediateSize: 1536, NumHiddenLayers: 10,
		NumAttentionHeads: 8, NumKeyValueHeads: 2, RopeTheta: 1e6, RMSNormEps: 1e-6,
		VocabSize: 32768, MaxPositionEmbeddings: 4096, TieWordEmbeddings: true, HiddenAct: "silu", EOSTokenID: &eos,
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
// (EOS never fires: no stop ids), KV cache on; reports decode tokens/s.
func BenchmarkDecode(b *testing.B) {
	m := loadBench(b)
	const P, N = 64, 64
	for _, B := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("batch=%d", B), func(b *testing.B) {
			ps := prompts(B, P)
			var decodeSec float64
			for range b.N {
				t0 := time.Now()
				if _, err := m.Generate(ps, GenerateOptions{MaxNewTokens: 1}); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if _, err := m.Generate(ps, GenerateOptions{MaxNewTokens: N}); err != nil {
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
