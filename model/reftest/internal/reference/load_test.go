package reference

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ragen-go/ragen/model/safetensors"
)

// rewrite copies the checkpoint in src to a new folder, letting edit change
// the tensor list, and returns the new folder (config.json copied as is).
func rewrite(t *testing.T, src string, edit func([]safetensors.Tensor) []safetensors.Tensor) string {
	t.Helper()
	ck, err := safetensors.OpenDir(src)
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	var ts []safetensors.Tensor
	for _, name := range ck.Names() {
		info, _ := ck.Info(name)
		b, _ := ck.Bytes(name)
		ts = append(ts, safetensors.Tensor{Name: name, DType: info.DType, Shape: info.Shape, Data: bytes.Clone(b)})
	}
	dst := t.TempDir()
	if err := safetensors.WriteSharded(dst, edit(ts), 0, nil); err != nil {
		t.Fatal(err)
	}
	cfg, _ := os.ReadFile(filepath.Join(src, "config.json"))
	os.WriteFile(filepath.Join(dst, "config.json"), cfg, 0o644)
	return dst
}

// loadErr loads dir with cfg and returns the error.
func loadErr(t *testing.T, dir string, cfg Config) error {
	t.Helper()
	ck, err := safetensors.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	_, err = Load(cfg, ck)
	return err
}

func TestTiedAndUntied(t *testing.T) {
	tied, tiedDir := tinyModel(t, true, 0)
	// The untied checkpoint of one seed shares every tensor but lm_head.
	untied, untiedDir := tinyModel(t, false, 0)
	a := forward(t, tied, [][]int{seq}, nil)
	b := forward(t, untied, [][]int{seq}, nil)
	if d := maxDiff(a[0][0], b[0][0]); d < 1e-3 {
		t.Errorf("a separate lm_head changed the logits by only %g", d)
	}
	// An untied checkpoint whose lm_head is a copy of the embedding is the
	// tied model.
	copied := rewrite(t, tiedDir, func(ts []safetensors.Tensor) []safetensors.Tensor {
		for _, x := range ts {
			if x.Name == "model.embed_tokens.weight" {
				x.Name = "lm_head.weight"
				return append(ts, x)
			}
		}
		t.Fatal("no embedding")
		return nil
	})
	cfg := TinyConfig()
	ck, _ := safetensors.OpenDir(copied)
	defer ck.Close()
	m, err := Load(cfg, ck) // TinyConfig is untied
	if err != nil {
		t.Fatal(err)
	}
	c := forward(t, m, [][]int{seq}, nil)
	for i := range seq {
		if d := maxDiff(a[0][i], c[0][i]); d != 0 {
			t.Errorf("position %d: tied and copied-lm_head logits differ by %g", i, d)
		}
	}
	// Config and checkpoint must agree on tying.
	if err := loadErr(t, tiedDir, cfg); err == nil || !strings.Contains(err.Error(), `missing tensor "lm_head.weight"`) {
		t.Errorf("untied config on a tied checkpoint: %v", err)
	}
	cfg.TieWordEmbeddings = true
	if err := loadErr(t, untiedDir, cfg); err == nil || !strings.Contains(err.Error(), `unexpected tensor "lm_head.weight"`) {
		t.Errorf("tied config on an untied checkpoint: %v", err)
	}
}

func TestLoadRejects(t *testing.T) {
	_, dir := tinyModel(t, true, 0)
	cfg := TinyConfig()
	cfg.TieWordEmbeddings = true
	const victim = "model.layers.1.self_attn.k_proj.bias"
	cases := []struct {
		name string
		edit func([]safetensors.Tensor) []safetensors.Tensor
		want string
	}{
		{"missing", func(ts []safetensors.Tensor) []safetensors.Tensor {
			return slices.DeleteFunc(ts, func(x safetensors.Tensor) bool { return x.Name == victim })
		}, `missing tensor "` + victim + `"`},
		{"extra", func(ts []safetensors.Tensor) []safetensors.Tensor {
			return append(ts, safetensors.Tensor{Name: "model.layers.0.self_attn.rotary_emb.inv_freq", DType: safetensors.F32, Shape: []int64{1}, Data: make([]byte, 4)})
		}, `unexpected tensor "model.layers.0.self_attn.rotary_emb.inv_freq"`},
		{"wrong shape", func(ts []safetensors.Tensor) []safetensors.Tensor {
			for i, x := range ts {
				if x.Name == victim {
					ts[i].Shape = []int64{2, 8}
				}
			}
			return ts
		}, `"` + victim + `" has shape [2 8], want [16]`},
		{"not a float", func(ts []safetensors.Tensor) []safetensors.Tensor {
			for i, x := range ts {
				if x.Name == victim {
					ts[i].DType = safetensors.I32
				}
			}
			return ts
		}, `"` + victim + `"`},
	}
	for _, c := range cases {
		err := loadErr(t, rewrite(t, dir, c.edit), cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
	bad := cfg
	bad.NumKeyValueHeads = 3
	if err := loadErr(t, dir, bad); err == nil {
		t.Error("an invalid config loaded")
	}
}

func TestLoadBF16(t *testing.T) {
	// The same weights rounded to BF16 load and give nearby logits.
	f32, dir := tinyModel(t, true, 0)
	bf := rewrite(t, dir, func(ts []safetensors.Tensor) []safetensors.Tensor {
		for i, x := range ts {
			v, _ := safetensors.DecodeFloat32(x.DType, x.Data)
			ts[i].DType = safetensors.BF16
			ts[i].Data, _ = safetensors.EncodeFloat32(safetensors.BF16, v)
		}
		return ts
	})
	m := loadDir(t, bf)
	a := forward(t, f32, [][]int{seq}, nil)
	b := forward(t, m, [][]int{seq}, nil)
	if d := maxDiff(a[0][3], b[0][3]); d == 0 || d > 0.2 {
		t.Errorf("BF16 weights moved the logits by %g", d)
	}
}

func TestRandomCheckpointFiles(t *testing.T) {
	dir := t.TempDir()
	cfg := TinyConfig()
	if err := RandomCheckpoint(dir, cfg, 3, true, 0); err != nil {
		t.Fatal(err)
	}
	got, err := LoadConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !got.TieWordEmbeddings || got.ModelType != "qwen2" || got.TorchDtype != "float32" ||
		!slices.Equal(got.Architectures, []string{"Qwen2ForCausalLM"}) || got.HiddenSize != 32 || got.NumKeyValueHeads != 2 {
		t.Errorf("config.json read back as %+v", got)
	}
	gen, err := os.ReadFile(filepath.Join(dir, "generation_config.json"))
	if err != nil || !strings.Contains(string(gen), `"eos_token_id": 1`) {
		t.Errorf("generation_config.json: %s, %v", gen, err)
	}
	weights := func(dir string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, safetensors.SingleFileName))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	again := t.TempDir()
	if err := RandomCheckpoint(again, cfg, 3, true, 0); err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	if err := RandomCheckpoint(other, cfg, 4, true, 0); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(weights(dir), weights(again)) {
		t.Error("the same seed gave different weights")
	}
	if bytes.Equal(weights(dir), weights(other)) {
		t.Error("different seeds gave the same weights")
	}
	ck, err := safetensors.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	if md := ck.Names(); slices.Contains(md, "lm_head.weight") || len(md) != 1+2*12+1 {
		t.Errorf("tied checkpoint holds %d tensors: %v", len(md), md)
	}
	// Biases are not zero and norm weights are not all one.
	bias, _ := ck.Float32("model.layers.0.self_attn.q_proj.bias")
	norm, _ := ck.Float32("model.norm.weight")
	if bias[0] == 0 || norm[0] == 1 || norm[0] < 0.2 || norm[0] > 1.8 {
		t.Errorf("bias[0] = %g, norm[0] = %g", bias[0], norm[0])
	}
}
