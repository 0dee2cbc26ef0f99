package gguf

import (
	"math"
	"os"
	"testing"
)

// smolLM2 is a real GGUF model in the repository's model cache:
// SmolLM2-135M-Instruct quantized to Q4_1 by llama.cpp (Q4_1, Q8_0 and F32
// tensors). Tests that need it skip without it.
const smolLM2 = "../.cache/models/SmolLM2-135M-Instruct.Q4_1.gguf"

func openSmolLM2(t testing.TB) *File {
	t.Helper()
	if _, err := os.Stat(smolLM2); err != nil {
		t.Skipf("no model file: %v", err)
	}
	f, err := Open(smolLM2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestSmolLM2 reads the real model's header and a few of its tensors;
// the expected bits are gguf-py's dequantization (parity/gguf_test.go
// compares every tensor).
func TestSmolLM2(t *testing.T) {
	f := openSmolLM2(t)
	if len(f.Meta) != 33 || len(f.Tensors) != 272 || f.Version != 3 {
		t.Fatalf("%d keys, %d tensors, version %d", len(f.Meta), len(f.Tensors), f.Version)
	}
	arch, err1 := f.String("general.architecture")
	blocks, err2 := f.Uint("llama.block_count")
	eps, err3 := f.Float("llama.attention.layer_norm_rms_epsilon")
	tokens, err4 := f.Strings("tokenizer.ggml.tokens")
	merges, err5 := f.Strings("tokenizer.ggml.merges")
	types, err6 := f.Ints("tokenizer.ggml.token_type")
	for _, err := range []error{err1, err2, err3, err4, err5, err6} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if arch != "llama" || blocks != 30 || eps != float64(float32(1e-5)) || len(tokens) != 49152 || len(merges) != 48900 || len(types) != 49152 || tokens[2] != "<|im_end|>" {
		t.Errorf("arch %s, %d blocks, eps %g, %d tokens, %d merges, %d token types, token 2 %q", arch, blocks, eps, len(tokens), len(merges), len(types), tokens[2])
	}
	counts := map[Type]int{}
	for _, tt := range f.Tensors {
		counts[tt.Type]++
	}
	if counts[Q4_1] != 210 || counts[F32] != 61 || counts[Q8_0] != 1 {
		t.Errorf("tensor types %v", counts)
	}
	cases := []struct {
		name  string
		typ   Type
		shape []int64
		bits  map[int]uint32 // element index -> gguf-py's float32 bits
	}{
		{"token_embd.weight", Q8_0, []int64{49152, 576}, map[int]uint32{0: 0xbdda3400, 1: 0x3d071400, 345: 0x3ae7c000, 28311551: 0xbd2ad000}},
		{"blk.0.attn_norm.weight", F32, []int64{576}, map[int]uint32{0: 0x3c650000, 1: 0x3cc30000, 345: 0x3dbf0000, 575: 0xbd1d0000}},
		{"blk.0.ffn_down.weight", Q4_1, []int64{576, 1536}, map[int]uint32{0: 0xbea96000, 1: 0x3eb13000, 345: 0x3e172000, 884735: 0xbe39b800}},
	}
	for _, c := range cases {
		tt, ok := f.Tensor(c.name)
		if !ok {
			t.Fatalf("no tensor %s", c.name)
		}
		if tt.Type != c.typ || len(tt.Shape()) != len(c.shape) || tt.Shape()[0] != c.shape[0] {
			t.Errorf("%s: %v %v, want %v %v", c.name, tt.Type, tt.Shape(), c.typ, c.shape)
		}
		x, err := tt.Float32()
		if err != nil {
			t.Fatal(err)
		}
		for i, want := range c.bits {
			if got := math.Float32bits(x[i]); got != want {
				t.Errorf("%s[%d] = %#08x, gguf-py %#08x", c.name, i, got, want)
			}
		}
	}
}

// BenchmarkSmolLM2 opens and parses the real model and dequantizes all
// of its 134.5M elements.
func BenchmarkSmolLM2(b *testing.B) {
	openSmolLM2(b) // skip without the file
	for b.Loop() {
		f, err := Open(smolLM2)
		if err != nil {
			b.Fatal(err)
		}
		for _, tt := range f.Tensors {
			if _, err := tt.Float32(); err != nil {
				b.Fatal(err)
			}
		}
		f.Close()
	}
}
