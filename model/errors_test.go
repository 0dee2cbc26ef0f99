package model

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sugarme/gotch"

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
	} {
		_, err := ParseConfig([]byte(tc.json))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one mentioning %q", tc.json, err, tc.want)
		}
	}
	if _, err := ParseConfig([]byte(`{"model_type":"qwen2",` + base + `}`)); err != nil {
		t.Errorf("valid config rejected: %v", err)
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
