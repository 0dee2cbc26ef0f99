package tokenizer

import (
	"testing"

	tiktoken "github.com/pkoukk/tiktoken-go"
	"github.com/ragen-go/ragen/tokenizer/tokenizertest"
	"golang.org/x/text/unicode/norm"
)

// Encoding throughput on about 1 MB of mixed text (see corpus). Run with
//
//	go test ./tokenizer/ -run '^$' -bench Encode -cpu 1
//
// "fast" is Encode: for Qwen's pattern, the hand-written splitter and this
// package's merge loop. "general" is the reference path, the file's pattern
// run by regexp2 and tiktoken-go's merges. "tiktoken" is a plain tiktoken-go
// setup for comparison: NFC, then EncodeOrdinary with Qwen's pattern (added
// tokens not recognised; tiktoken-go's Encode, which does recognise them,
// rescans the rest of the text after each one and takes about 30 s here).
func BenchmarkEncode(b *testing.B) {
	tk := qwen25(b)
	text := corpus(b, 1<<20)
	run := func(b *testing.B, encode func(string) []int) {
		b.SetBytes(int64(len(text)))
		b.ReportAllocs()
		b.ResetTimer()
		tokens := 0
		for i := 0; i < b.N; i++ {
			tokens += len(encode(text))
		}
		b.ReportMetric(float64(tokens)/b.Elapsed().Seconds(), "tokens/s")
	}
	b.Run("fast", func(b *testing.B) { run(b, tk.Encode) })
	b.Run("general", func(b *testing.B) { run(b, tk.encodeReference) })
	b.Run("tiktoken", func(b *testing.B) {
		core, err := tiktoken.NewCoreBPE(tk.pieces.ranks, map[string]int{}, qwen2Pattern)
		if err != nil {
			b.Fatal(err)
		}
		enc := tiktoken.NewTiktoken(core, nil, nil)
		run(b, func(s string) []int { return enc.EncodeOrdinary(norm.NFC.String(s)) })
	})
}

func BenchmarkLoad(b *testing.B) {
	p := tokenizertest.Path(b)
	for i := 0; i < b.N; i++ {
		if _, err := Load(p); err != nil {
			b.Fatal(err)
		}
	}
}
