package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragen-go/ragen/gguf"
	"github.com/ragen-go/ragen/model/ggufmodel"
	"github.com/ragen-go/ragen/tokenizer/tokenizertest"
)

// tinyGGUF writes a one-layer llama GGUF with SmolLM2's tokenizer metadata,
// edited by edit (which may change the metadata and the tensors' types).
func tinyGGUF(t *testing.T, name string, edit func(meta []gguf.KV, tensors []gguf.TensorSpec) ([]gguf.KV, []gguf.TensorSpec)) string {
	t.Helper()
	smol, err := gguf.Open(tokenizertest.SmolLM2Path(t))
	if err != nil {
		t.Fatal(err)
	}
	defer smol.Close()
	var tok []gguf.KV
	for _, kv := range smol.Meta {
		if strings.HasPrefix(kv.Key, "tokenizer.") {
			tok = append(tok, kv)
		}
	}
	path := filepath.Join(t.TempDir(), name)
	s := ggufmodel.Spec{Arch: ggufmodel.ArchLlama, Name: "tiny", ContextLength: 64, Hidden: 32, FFN: 256, Layers: 1,
		Heads: 2, KVHeads: 1, HeadDim: 16, VocabSize: 49152, RopeTheta: 1e4, RMSNormEps: 1e-5, Tokenizer: tok, Type: gguf.F32}
	shapes := map[string][]int64{
		"model.embed_tokens.weight": {49152, 32}, "model.norm.weight": {32},
		"model.layers.0.input_layernorm.weight": {32}, "model.layers.0.post_attention_layernorm.weight": {32},
		"model.layers.0.self_attn.q_proj.weight": {32, 32}, "model.layers.0.self_attn.k_proj.weight": {16, 32},
		"model.layers.0.self_attn.v_proj.weight": {16, 32}, "model.layers.0.self_attn.o_proj.weight": {32, 32},
		"model.layers.0.mlp.gate_proj.weight": {256, 32}, "model.layers.0.mlp.up_proj.weight": {256, 32},
		"model.layers.0.mlp.down_proj.weight": {32, 256},
	}
	var tensors []ggufmodel.Tensor
	for n, sh := range shapes {
		size := int(sh[0])
		if len(sh) == 2 {
			size *= int(sh[1])
		}
		tensors = append(tensors, ggufmodel.Tensor{Name: n, Shape: sh, Data: func() ([]float32, error) {
			v := make([]float32, size)
			for i := range v {
				v[i] = float32(i%7) / 70
			}
			return v, nil
		}})
	}
	if err := ggufmodel.Write(path, s, tensors); err != nil {
		t.Fatal(err)
	}
	if edit == nil {
		return path
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	meta := append([]gguf.KV(nil), f.Meta...)
	var specs []gguf.TensorSpec
	for _, ti := range f.Tensors {
		specs = append(specs, gguf.TensorSpec{Name: ti.Name, Shape: ti.Shape(), Type: ti.Type, Raw: append([]byte(nil), ti.Bytes()...)})
	}
	f.Close()
	meta, specs = edit(meta, specs)
	if err := gguf.WriteFile(path, meta, specs); err != nil {
		t.Fatal(err)
	}
	return path
}

// setMeta replaces the value of key.
func setMeta(meta []gguf.KV, key string, v any) []gguf.KV {
	for i := range meta {
		if meta[i].Key == key {
			meta[i].Value = v
		}
	}
	return meta
}

// A bad GGUF file is refused with one line naming it, never a panic: one
// that is not GGUF, one with a tensor type ragen cannot read, one with an
// unknown pre-tokenizer, and one whose chat template uses a construct the
// renderer does not support.
func TestGGUFErrors(t *testing.T) {
	notGGUF := filepath.Join(t.TempDir(), "notes.gguf")
	if err := os.WriteFile(notGGUF, []byte("these are my notes, not a model"), 0o644); err != nil {
		t.Fatal(err)
	}
	iq := tinyGGUF(t, "iq.gguf", func(meta []gguf.KV, ts []gguf.TensorSpec) ([]gguf.KV, []gguf.TensorSpec) {
		for i := range ts {
			if ts[i].Name == "blk.0.ffn_down.weight" {
				// IQ2_XXS: 66 bytes per block of 256; 32 rows of 256 are 32 blocks.
				ts[i].Type, ts[i].Raw = gguf.IQ2_XXS, make([]byte, 32*66)
			}
		}
		return meta, ts
	})
	pre := tinyGGUF(t, "pre.gguf", func(meta []gguf.KV, ts []gguf.TensorSpec) ([]gguf.KV, []gguf.TensorSpec) {
		return setMeta(meta, "tokenizer.ggml.pre", "klingon"), ts
	})
	tmpl := tinyGGUF(t, "template.gguf", func(meta []gguf.KV, ts []gguf.TensorSpec) ([]gguf.KV, []gguf.TensorSpec) {
		return setMeta(meta, "tokenizer.chat_template", "{% for m in messages %}\n{{ m.content | wordwrap(20) }}{% endfor %}"), ts
	})
	layers := tinyGGUF(t, "layers.gguf", func(meta []gguf.KV, ts []gguf.TensorSpec) ([]gguf.KV, []gguf.TensorSpec) {
		return setMeta(meta, "llama.block_count", uint32(1<<20)), ts
	})
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"block count", []string{"--model", layers, "--prompt-ids", "1"}, []string{layers, "llama.block_count 1048576 does not match its tensors, which hold 1 layers"}},
		{"not GGUF", []string{"--model", notGGUF, "--prompt-ids", "1"}, []string{notGGUF}},
		{"tensor type", []string{"--model", iq, "--prompt-ids", "1"}, []string{iq, "IQ2_XXS", "supported: "}},
		{"pre-tokenizer", []string{"--model", pre, "--prompt", "hi"}, []string{pre, `tokenizer.ggml.pre "klingon" is not supported`}},
		{"template", []string{"--model", tmpl, "--chat", "--prompt", "hi"}, []string{tmpl, "line 2", `the filter "wordwrap" is not supported`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runGen(tc.args...)
			lines := strings.Split(strings.TrimSpace(errOut), "\n")
			last := lines[len(lines)-1]
			if code == 0 || strings.Contains(errOut, "panic") || strings.Contains(errOut, "goroutine ") {
				t.Fatalf("exit %d, stderr %q; want a clean error", code, errOut)
			}
			t.Log(last)
			for _, w := range tc.want {
				if !strings.Contains(last, w) {
					t.Errorf("error %q does not say %q", last, w)
				}
			}
		})
	}
	// The tiny file itself works, without its tokenizer and with it.
	ok := tinyGGUF(t, "ok.gguf", nil)
	if code, _, errOut := runGen("--model", ok, "--chat", "--prompt", "hi", "--max-new-tokens", "2"); code != 0 {
		t.Fatalf("a valid GGUF: exit %d, %s", code, errOut)
	}
}
