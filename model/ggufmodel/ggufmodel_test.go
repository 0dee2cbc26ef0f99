package ggufmodel

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ragen-go/ragen/gguf"
)

// TestPermute pins llama.cpp's q/k row order on one head of width 4 and
// checks that unpermute inverts permute on several heads with two columns.
func TestPermute(t *testing.T) {
	// HuggingFace rows r0..r3 of a width-4 head: the halves (r0, r1) and
	// (r2, r3) rotate together. llama.cpp wants the pairs adjacent:
	// r0, r2, r1, r3.
	got := permute([]float32{0, 1, 2, 3}, 1, 1)
	if want := []float32{0, 2, 1, 3}; !slices.Equal(got, want) {
		t.Fatalf("permute = %v, want %v", got, want)
	}
	data := make([]float32, 3*8*2) // 3 heads of width 8, 2 columns
	for i := range data {
		data[i] = float32(i)
	}
	if back := unpermute(permute(data, 3, 2), 3, 2); !slices.Equal(back, data) {
		t.Fatalf("unpermute(permute(x)) = %v, want x", back)
	}
}

func TestNames(t *testing.T) {
	for hf, want := range map[string]string{
		"model.embed_tokens.weight":                      "token_embd.weight",
		"lm_head.weight":                                 "output.weight",
		"model.layers.12.self_attn.o_proj.bias":          "blk.12.attn_output.bias",
		"model.layers.0.post_attention_layernorm.weight": "ffn_norm.weight",
	} {
		got, ok := ToGGUF(hf)
		if hf == "model.layers.0.post_attention_layernorm.weight" {
			want = "blk.0." + want
		}
		if !ok || got != want {
			t.Errorf("ToGGUF(%s) = %q, %v; want %q", hf, got, ok, want)
			continue
		}
		if back, err := fromGGUF(got, 13); err != nil || back != hf {
			t.Errorf("fromGGUF(%s) = %q, %v; want %q", got, back, err, hf)
		}
	}
	for _, bad := range []string{"blk.2.attn_q.weight", "blk.x.attn_q.weight", "blk.01.attn_q.weight", "blk.0.ffn_gate_exps.weight", "rope_factors_long.weight"} {
		if _, err := fromGGUF(bad, 2); err == nil {
			t.Errorf("fromGGUF(%s) accepted a tensor a 2-layer model does not have", bad)
		}
	}
}

// tinyTensors are random HuggingFace weights of a 2-layer model.
func tinyTensors(s Spec, qkvBias, oBias, mlpBias, tied bool) map[string][]int64 {
	d, hd := int64(s.Hidden), int64(s.HeadDim)
	q, kv, f, v := int64(s.Heads)*hd, int64(s.KVHeads)*hd, int64(s.FFN), int64(s.VocabSize)
	m := map[string][]int64{"model.embed_tokens.weight": {v, d}, "model.norm.weight": {d}}
	if !tied {
		m["lm_head.weight"] = []int64{v, d}
	}
	for i := range s.Layers {
		p := "model.layers." + string(rune('0'+i)) + "."
		lin := func(name string, out, in int64, bias bool) {
			m[p+name+".weight"] = []int64{out, in}
			if bias {
				m[p+name+".bias"] = []int64{out}
			}
		}
		m[p+"input_layernorm.weight"] = []int64{d}
		m[p+"post_attention_layernorm.weight"] = []int64{d}
		lin("self_attn.q_proj", q, d, qkvBias)
		lin("self_attn.k_proj", kv, d, qkvBias)
		lin("self_attn.v_proj", kv, d, qkvBias)
		lin("self_attn.o_proj", d, q, oBias)
		lin("mlp.gate_proj", f, d, mlpBias)
		lin("mlp.up_proj", f, d, mlpBias)
		lin("mlp.down_proj", d, f, mlpBias)
	}
	return m
}

func randomData(shapes map[string][]int64, seed uint64) map[string][]float32 {
	r := rand.New(rand.NewPCG(seed, 1))
	out := map[string][]float32{}
	for name, sh := range shapes {
		n := int64(1)
		for _, x := range sh {
			n *= x
		}
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		out[name] = v
	}
	return out
}

func tokenizerMeta(n int) []gguf.KV {
	toks := make([]string, n)
	for i := range toks {
		toks[i] = "t" + string(rune('a'+i%26))
	}
	return []gguf.KV{{Key: "tokenizer.ggml.model", Value: "gpt2"}, {Key: "tokenizer.ggml.tokens", Value: toks},
		{Key: "tokenizer.ggml.bos_token_id", Value: uint32(1)}, {Key: "tokenizer.ggml.eos_token_id", Value: uint32(2)}}
}

// TestRoundTrip writes random Llama and Qwen2 weights as GGUF and reads
// them back: the config says what the writer was told, and every tensor
// comes back under its name in HuggingFace's layout, exactly in F32 and
// within the encoding's rounding in F16 and Q8_0.
func TestRoundTrip(t *testing.T) {
	base := Spec{Name: "tiny", ContextLength: 128, Hidden: 64, FFN: 96, Layers: 2, Heads: 4, KVHeads: 2,
		HeadDim: 16, VocabSize: 40, RopeTheta: 5e5, RMSNormEps: 1e-5}
	for _, tc := range []struct {
		name              string
		arch              string
		typ               gguf.Type
		qkv, o, mlp, tied bool
		headDim           int
		llama3            bool
		tol               float64
	}{
		{"llama-f32-tied", ArchLlama, gguf.F32, false, false, false, true, 16, false, 0},
		{"llama-biases-f16", ArchLlama, gguf.F16, true, true, true, false, 16, false, 2e-3},
		{"llama3-head_dim-q8_0", ArchLlama, gguf.Q8_0, false, false, false, true, 32, true, 0.05},
		{"qwen2-bf16", ArchQwen2, gguf.BF16, true, false, false, false, 16, false, 2e-2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := base
			s.Arch, s.Type, s.HeadDim = tc.arch, tc.typ, tc.headDim
			s.Tokenizer = tokenizerMeta(s.VocabSize)
			if tc.llama3 {
				s.Llama3, s.Llama3Original = [3]float64{8, 1, 4}, 64
			}
			shapes := tinyTensors(s, tc.qkv, tc.o, tc.mlp, tc.tied)
			data := randomData(shapes, 3)
			var tensors []Tensor
			for name, sh := range shapes {
				v := data[name]
				tensors = append(tensors, Tensor{Name: name, Shape: sh, Data: func() ([]float32, error) { return v, nil }})
			}
			path := filepath.Join(t.TempDir(), "m.gguf")
			if err := Write(path, s, tensors); err != nil {
				t.Fatal(err)
			}
			m, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			c := m.Config
			if c["model_type"] != tc.arch || c["tie_word_embeddings"] != tc.tied || c["num_key_value_heads"] != 2 ||
				c["hidden_size"] != 64 || c["vocab_size"] != 40 || c["rope_theta"] != 5e5 || c["eos_token_id"] != 2 {
				t.Errorf("config %v", c)
			}
			if tc.arch == ArchLlama && (c["attention_bias"] == true) != tc.qkv || (c["mlp_bias"] == true) != tc.mlp {
				t.Errorf("biases: config %v, want attention %v mlp %v", c, tc.qkv, tc.mlp)
			}
			if hd, ok := c["head_dim"]; (tc.headDim != 16) != ok || (ok && hd != tc.headDim) {
				t.Errorf("head_dim %v, want %d", hd, tc.headDim)
			}
			if rs, ok := c["rope_scaling"].(map[string]any); tc.llama3 != ok ||
				(ok && (rs["factor"] != 8.0 || math.Abs(rs["low_freq_factor"].(float64)-1) > 1e-6 ||
					math.Abs(rs["high_freq_factor"].(float64)-4) > 1e-6 || rs["original_max_position_embeddings"] != 64)) {
				t.Errorf("rope_scaling %v, want llama3 factor 8, low 1, high 4, original 64: %v", c["rope_scaling"], tc.llama3)
			}
			if !slices.Equal(m.Names(), sortedKeys(shapes)) {
				t.Fatalf("names %v, want %v", m.Names(), sortedKeys(shapes))
			}
			worst := 0.0
			for name, want := range data {
				got, err := m.Float32(name)
				if err != nil {
					t.Fatal(err)
				}
				for i := range want {
					worst = max(worst, math.Abs(float64(got[i]-want[i])))
				}
			}
			if worst > tc.tol {
				t.Errorf("largest difference %.3g, want at most %.3g for %s", worst, tc.tol, tc.typ)
			}
		})
	}
}

func sortedKeys(m map[string][]int64) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// TestErrors: what the architecture cannot be is refused with a sentence
// naming the file and the key or tensor.
func TestErrors(t *testing.T) {
	s := Spec{Arch: ArchLlama, Name: "x", ContextLength: 16, Hidden: 32, FFN: 32, Layers: 1, Heads: 2, KVHeads: 2,
		HeadDim: 16, VocabSize: 8, RopeTheta: 1e4, RMSNormEps: 1e-5, Type: gguf.F32}
	write := func(t *testing.T, s Spec, shapes map[string][]int64) string {
		var tensors []Tensor
		for name, sh := range shapes {
			n := int64(1)
			for _, x := range sh {
				n *= x
			}
			tensors = append(tensors, Tensor{Name: name, Shape: sh, Data: func() ([]float32, error) { return make([]float32, n), nil }})
		}
		path := filepath.Join(t.TempDir(), "bad.gguf")
		if err := Write(path, s, tensors); err != nil {
			t.Fatal(err)
		}
		return path
	}
	onlyQ := tinyTensors(s, true, true, false, true)
	delete(onlyQ, "model.layers.0.self_attn.o_proj.bias")
	qwenO := tinyTensors(s, true, true, false, true)
	for _, tc := range []struct {
		name, want string
		path       func(t *testing.T) string
	}{
		{"llama biases on q/k/v only", "biases on all of q, k, v and o", func(t *testing.T) string { return write(t, s, onlyQ) }},
		{"qwen2 with an o bias", "o_proj or MLP bias", func(t *testing.T) string {
			q := s
			q.Arch = ArchQwen2
			return write(t, q, qwenO)
		}},
		{"no embedding", "no token_embd.weight", func(t *testing.T) string {
			sh := tinyTensors(s, false, false, false, true)
			delete(sh, "model.embed_tokens.weight")
			return write(t, s, sh)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.path(t)
			_, err := Open(path)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("err = %v, want one naming %s and saying %q", err, path, tc.want)
			}
		})
	}
}
