package model

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sugarme/gotch"

	"github.com/ragen-go/ragen/gguf"
	"github.com/ragen-go/ragen/model/ggufmodel"
	"github.com/ragen-go/ragen/model/safetensors"
)

func TestConfigErrors(t *testing.T) {
	base := `"hidden_size":32,"intermediate_size":48,"num_hidden_layers":2,"num_attention_heads":4,"num_key_value_heads":2,"rope_theta":10000,"rms_norm_eps":1e-6,"vocab_size":64,"max_position_embeddings":128`
	for _, tc := range []struct{ json, want string }{
		{`{"model_type":"gemma",` + base + `}`, `model_type "gemma" is not supported`},
		{`{"model_type":"llama",` + base + `,"rope_scaling":{"rope_type":"llama3","factor":8}}`, "rope_type llama3 needs"},
		{`{"model_type":"llama",` + base + `,"rope_scaling":{"rope_type":"llama3","factor":8,"low_freq_factor":4,"high_freq_factor":1,"original_max_position_embeddings":64}}`, "low_freq_factor < high_freq_factor"},
		{`{"model_type":"llama",` + base + `,"rope_scaling":{"rope_type":"llama3","factor":8,"low_freq_factor":1,"high_freq_factor":4,"original_max_position_embeddings":64},"rope_parameters":{"rope_type":"default","rope_theta":10000}}`, "rope_scaling and rope_parameters disagree"},
		{`{"model_type":"llama",` + base + `,"pretraining_tp":2}`, "pretraining_tp 2"},
		{`{"model_type":"llama",` + base + `,"head_dim":-8}`, "head_dim must be a positive integer"},
		{`{"model_type":"llama",` + base + `,"eos_token_id":[2,64]}`, "eos_token_id 64 is outside the vocabulary"},
		{`{"model_type":"llama",` + base + `,"eos_token_id":"x"}`, "eos_token_id"},
		{`{"model_type":"qwen2",` + base + `,"attention_bias":true}`, "attention_bias and mlp_bias are Llama settings"},
		{`{"model_type":"qwen2",` + base + `,"use_sliding_window":true}`, "use_sliding_window"},
		{`{"model_type":"qwen2",` + base + `,"rope_scaling":{"type":"yarn","factor":4}}`, "rope_scaling"},
		{`{"model_type":"qwen2",` + strings.Replace(base, `"num_key_value_heads":2`, `"num_key_value_heads":3`, 1) + `}`, "num_key_value_heads 3"},
		{`{"model_type":"qwen2",` + strings.Replace(base, `"hidden_size":32`, `"hidden_size":0`, 1) + `}`, "hidden_size must be a positive integer"},
		{`{"model_type":"qwen2",` + base + `,"hidden_act":"gelu"}`, `hidden_act "gelu"`},
		{`{"model_type":"qwen2",` + base + `,"torch_dtype":"int8"}`, `torch_dtype "int8"`},
		{`{"model_type": qwen2}`, "not a valid config.json"},
		// Sizes past the bounds are refused before anything is built from them.
		{`{"model_type":"qwen2",` + strings.Replace(base, `"num_hidden_layers":2`, `"num_hidden_layers":1000000000`, 1) + `}`,
			"num_hidden_layers 1000000000 is more than this implementation accepts (at most 1024)"},
		{`{"model_type":"qwen2",` + strings.Replace(base, `"hidden_size":32`, `"hidden_size":131072`, 1) + `}`, "hidden_size 131072 is more than"},
		{`{"model_type":"qwen2",` + strings.Replace(base, `"intermediate_size":48`, `"intermediate_size":4000000000`, 1) + `}`, "intermediate_size 4000000000 is more than"},
		{`{"model_type":"qwen2",` + strings.Replace(base, `"num_attention_heads":4`, `"num_attention_heads":4096`, 1) + `}`, "num_attention_heads 4096 is more than"},
		{`{"model_type":"qwen2",` + strings.Replace(base, `"vocab_size":64`, `"vocab_size":5000000`, 1) + `}`, "vocab_size 5000000 is more than"},
		{`{"model_type":"qwen2",` + strings.Replace(base, `"max_position_embeddings":128`, `"max_position_embeddings":100000000000`, 1) + `}`, "max_position_embeddings 100000000000 is more than"},
		{`{"model_type":"llama",` + base + `,"head_dim":100000}`, "head_dim 100000 is more than"},
		{`{"model_type":"llama",` + base + `,"head_dim":0}`, "head_dim must be a positive integer, got 0"},
		{`{"model_type":"llama",` + base + `,"head_dim":-1}`, "head_dim must be a positive integer, got -1"},
		{`{"model_type":"llama",` + base + `,"eos_token_id":-1}`, "eos_token_id -1 is outside the vocabulary"},
		{`{"model_type":"llama",` + base + `,"eos_token_id":64}`, "eos_token_id 64 is outside the vocabulary (vocab_size 64)"},
		{`{"model_type":"llama",` + base + `,"bos_token_id":1000}`, "bos_token_id 1000 is outside the vocabulary"},
	} {
		_, err := ParseConfig([]byte(tc.json))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one mentioning %q", tc.json, err, tc.want)
		}
	}
	if _, err := ParseConfig([]byte(`{"model_type":"qwen2",` + base + `}`)); err != nil {
		t.Errorf("valid config rejected: %v", err)
	}
	// A null head_dim is an absent one: d / heads.
	if c, err := ParseConfig([]byte(`{"model_type":"llama",` + base + `,"head_dim":null}`)); err != nil || c.HeadDimension() != 8 {
		t.Errorf("head_dim null: head dimension %d, %v; want 8", c.HeadDimension(), err)
	}
	// Llama 3.2's own config.json keys: eos as a list, rope_scaling llama3,
	// explicit head_dim, mlp_bias and attention_bias false.
	c, err := ParseConfig([]byte(`{"model_type":"llama",` + base + `,"head_dim":8,"attention_bias":false,"mlp_bias":false,` +
		`"eos_token_id":[1,3,5],"bos_token_id":0,"pretraining_tp":1,"rope_scaling":{"factor":32.0,"high_freq_factor":4.0,` +
		`"low_freq_factor":1.0,"original_max_position_embeddings":8192,"rope_type":"llama3"}}`))
	if err != nil {
		t.Fatalf("Llama 3.2 config rejected: %v", err)
	}
	if len(c.EOSTokenID) != 3 || c.Rope.Type != "llama3" || c.Rope.Factor != 32 || c.HeadDimension() != 8 {
		t.Errorf("parsed %+v", c)
	}
}

// rewrite rewrites a checkpoint's single safetensors file through edit.
func rewrite(t *testing.T, dir string, edit func([]safetensors.Tensor) []safetensors.Tensor) {
	t.Helper()
	path := filepath.Join(dir, "model.safetensors")
	f, err := safetensors.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var ts []safetensors.Tensor
	for _, n := range f.Names() {
		info, _ := f.Info(n)
		b, _ := f.Bytes(n)
		ts = append(ts, safetensors.Tensor{Name: n, DType: info.DType, Shape: info.Shape, Data: append([]byte(nil), b...)})
	}
	f.Close()
	if err := safetensors.Write(path, edit(ts), nil); err != nil {
		t.Fatal(err)
	}
}

func TestLoadErrors(t *testing.T) {
	opt := Options{Device: gotch.CPU, DType: gotch.Float}
	if _, err := LoadCausalLM(filepath.Join(t.TempDir(), "nope"), opt); err == nil || !strings.Contains(err.Error(), "is neither a checkpoint folder nor a .gguf file") {
		t.Errorf("missing folder: %v", err)
	}
	cases := []struct {
		name string
		edit func([]safetensors.Tensor) []safetensors.Tensor
		want string
	}{
		{"missing", func(ts []safetensors.Tensor) []safetensors.Tensor {
			return drop(ts, "model.layers.1.mlp.up_proj.weight")
		}, "lacks tensor model.layers.1.mlp.up_proj.weight"},
		{"unexpected", func(ts []safetensors.Tensor) []safetensors.Tensor {
			return append(ts, safetensors.Tensor{Name: "model.extra.weight", DType: safetensors.F32, Shape: []int64{1}, Data: make([]byte, 4)})
		}, "unexpected tensor model.extra.weight"},
		{"shape", func(ts []safetensors.Tensor) []safetensors.Tensor {
			for i := range ts {
				if ts[i].Name == "model.norm.weight" {
					ts[i].Shape = []int64{16, 2}
				}
			}
			return ts
		}, "tensor model.norm.weight has shape [16 2], the config implies [32]"},
		{"dtype", func(ts []safetensors.Tensor) []safetensors.Tensor {
			for i := range ts {
				if ts[i].Name == "model.norm.weight" {
					ts[i].DType = safetensors.I32
				}
			}
			return ts
		}, "model.norm.weight: element type I32"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, _ := writeTiny(t, true, 0)
			rewrite(t, dir, tc.edit)
			_, err := LoadCausalLM(dir, opt)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
	// num_hidden_layers is held to the layers the tensors hold before the
	// loader lists a tensor per declared layer.
	for _, layers := range []int{3, 1, 1000} {
		t.Run(fmt.Sprintf("layers-%d", layers), func(t *testing.T) {
			dir, _ := writeTiny(t, true, 0)
			editConfig(t, dir, func(c map[string]any) { c["num_hidden_layers"] = layers })
			want := fmt.Sprintf("%s: num_hidden_layers %d does not match the checkpoint's tensors, which hold 2 layers",
				filepath.Join(dir, "config.json"), layers)
			if _, err := LoadCausalLM(dir, opt); err == nil || err.Error() != want {
				t.Errorf("LoadCausalLM: err = %v, want %q", err, want)
			}
			if _, err := LoadValueModel(dir, opt, 1); err == nil || err.Error() != want {
				t.Errorf("LoadValueModel: err = %v, want %q", err, want)
			}
		})
	}
	t.Run("tied-with-head", func(t *testing.T) {
		dir, _ := writeTiny(t, true, 0)
		rewrite(t, dir, func(ts []safetensors.Tensor) []safetensors.Tensor {
			return append(ts, safetensors.Tensor{Name: "lm_head.weight", DType: safetensors.F32, Shape: []int64{64, 32}, Data: make([]byte, 64*32*4)})
		})
		if _, err := LoadCausalLM(dir, opt); err == nil || !strings.Contains(err.Error(), "tie_word_embeddings") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("truncated", func(t *testing.T) {
		dir, _ := writeTiny(t, true, 0)
		p := filepath.Join(dir, "model.safetensors")
		st, _ := os.Stat(p)
		if err := os.Truncate(p, st.Size()-100); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadCausalLM(dir, opt); err == nil || !strings.Contains(err.Error(), "model.safetensors") {
			t.Fatalf("err = %v, want one naming the file", err)
		}
	})
}

func drop(ts []safetensors.Tensor, name string) []safetensors.Tensor {
	var out []safetensors.Tensor
	for _, t := range ts {
		if t.Name != name {
			out = append(out, t)
		}
	}
	return out
}

// editConfig rewrites a checkpoint's config.json through edit.
func editConfig(t *testing.T, dir string, edit func(map[string]any)) {
	t.Helper()
	path := filepath.Join(dir, "config.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	edit(c)
	if data, err = json.Marshal(c); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A GGUF file's metadata becomes a config.json that goes through the same
// checks, and its block_count is held to the layers its tensors hold.
func TestGGUFConfigChecked(t *testing.T) {
	spec := ggufmodel.Spec{Arch: ggufmodel.ArchLlama, Name: "x", ContextLength: 16, Hidden: 32, FFN: 32, Layers: 1,
		Heads: 2, KVHeads: 2, HeadDim: 16, VocabSize: 8, RopeTheta: 1e4, RMSNormEps: 1e-5, Type: gguf.F32}
	shapes := map[string][]int64{"model.embed_tokens.weight": {8, 32}, "model.norm.weight": {32},
		"model.layers.0.input_layernorm.weight": {32}, "model.layers.0.post_attention_layernorm.weight": {32}}
	for _, n := range []string{"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj", "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"} {
		shapes["model.layers.0."+n+".weight"] = []int64{32, 32}
	}
	write := func(t *testing.T, s ggufmodel.Spec) string {
		var tensors []ggufmodel.Tensor
		for name, sh := range shapes {
			n := sh[0]
			if len(sh) == 2 {
				n *= sh[1]
			}
			tensors = append(tensors, ggufmodel.Tensor{Name: name, Shape: sh, Data: func() ([]float32, error) { return make([]float32, n), nil }})
		}
		path := filepath.Join(t.TempDir(), "m.gguf")
		if err := ggufmodel.Write(path, s, tensors); err != nil {
			t.Fatal(err)
		}
		return path
	}
	if _, err := OpenConfig(write(t, spec)); err != nil {
		t.Fatalf("the valid file: %v", err)
	}
	for _, tc := range []struct {
		name string
		edit func(*ggufmodel.Spec)
		want string
	}{
		{"vocab", func(s *ggufmodel.Spec) { s.VocabSize = 1 << 23 }, "vocab_size 8388608 is more than this implementation accepts"},
		{"kv heads", func(s *ggufmodel.Spec) { s.KVHeads = 2048 }, "num_key_value_heads 2048 is more than"},
		{"layers", func(s *ggufmodel.Spec) { s.Layers = 1 << 20 }, "llama.block_count 1048576 does not match its tensors, which hold 1 layers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := spec
			tc.edit(&s)
			path := write(t, s)
			_, err := OpenConfig(path)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("err = %v, want one naming %s and saying %q", err, path, tc.want)
			}
		})
	}
}
