package ggufmodel

import (
	"fmt"
	"strconv"
	"strings"
)

// Architectures this package maps, by general.architecture. They are the
// ones package model implements.
const (
	ArchLlama = "llama"
	ArchQwen2 = "qwen2"
)

// globalNames maps the HuggingFace names of the tensors outside the layers
// to llama.cpp's.
var globalNames = map[string]string{
	"model.embed_tokens.weight": "token_embd.weight",
	"model.norm.weight":         "output_norm.weight",
	"lm_head.weight":            "output.weight",
}

// layerNames maps a decoder layer's HuggingFace names (after
// "model.layers.N.") to llama.cpp's (after "blk.N.").
var layerNames = map[string]string{
	"input_layernorm.weight":          "attn_norm.weight",
	"self_attn.q_proj.weight":         "attn_q.weight",
	"self_attn.q_proj.bias":           "attn_q.bias",
	"self_attn.k_proj.weight":         "attn_k.weight",
	"self_attn.k_proj.bias":           "attn_k.bias",
	"self_attn.v_proj.weight":         "attn_v.weight",
	"self_attn.v_proj.bias":           "attn_v.bias",
	"self_attn.o_proj.weight":         "attn_output.weight",
	"self_attn.o_proj.bias":           "attn_output.bias",
	"post_attention_layernorm.weight": "ffn_norm.weight",
	"mlp.gate_proj.weight":            "ffn_gate.weight",
	"mlp.gate_proj.bias":              "ffn_gate.bias",
	"mlp.up_proj.weight":              "ffn_up.weight",
	"mlp.up_proj.bias":                "ffn_up.bias",
	"mlp.down_proj.weight":            "ffn_down.weight",
	"mlp.down_proj.bias":              "ffn_down.bias",
}

// ggufLayerNames is layerNames reversed.
var ggufLayerNames = func() map[string]string {
	m := make(map[string]string, len(layerNames))
	for hf, g := range layerNames {
		m[g] = hf
	}
	return m
}()

// ToGGUF returns llama.cpp's name for a HuggingFace tensor name, and
// whether there is one.
func ToGGUF(hf string) (string, bool) {
	if g, ok := globalNames[hf]; ok {
		return g, true
	}
	rest, ok := strings.CutPrefix(hf, "model.layers.")
	if !ok {
		return "", false
	}
	i, suffix, ok := strings.Cut(rest, ".")
	if _, err := strconv.Atoi(i); !ok || err != nil {
		return "", false
	}
	g, ok := layerNames[suffix]
	if !ok {
		return "", false
	}
	return "blk." + i + "." + g, true
}

// fromGGUF returns the HuggingFace name of a llama.cpp tensor name of a
// model with the given number of layers.
func fromGGUF(g string, layers int) (string, error) {
	for hf, name := range globalNames {
		if name == g {
			return hf, nil
		}
	}
	rest, ok := strings.CutPrefix(g, "blk.")
	if ok {
		i, suffix, _ := strings.Cut(rest, ".")
		n, err := strconv.Atoi(i)
		if err == nil && n >= 0 && n < layers && strconv.Itoa(n) == i {
			if hf, ok := ggufLayerNames[suffix]; ok {
				return "model.layers." + i + "." + hf, nil
			}
		}
	}
	return "", fmt.Errorf("tensor %s is not part of the %d-layer architecture this GGUF declares", g, layers)
}

// permuted says whether llama.cpp stores a tensor's rows permuted for its
// rope (llama's q and k projections, weights and biases), and with how
// many heads.
func permuted(arch, hf string, heads, kvHeads int) (int, bool) {
	if arch != ArchLlama {
		return 0, false
	}
	switch {
	case strings.Contains(hf, ".self_attn.q_proj."):
		return heads, true
	case strings.Contains(hf, ".self_attn.k_proj."):
		return kvHeads, true
	}
	return 0, false
}

// unpermute undoes llama.cpp's q/k row order in place of a copy: data is
// [heads·hd, cols] row-major (cols 1 for a bias). Within each head, stored
// row 2j+i is HuggingFace's row i·hd/2+j (i ∈ {0, 1}, j < hd/2).
func unpermute(data []float32, heads, cols int) []float32 {
	return reorder(data, heads, cols, false)
}

// permute is unpermute's inverse, for writing.
func permute(data []float32, heads, cols int) []float32 {
	return reorder(data, heads, cols, true)
}

func reorder(data []float32, heads, cols int, toGGUF bool) []float32 {
	out := make([]float32, len(data))
	rows := len(data) / cols
	hd := rows / heads
	half := hd / 2
	for h := range heads {
		for i := range 2 {
			for j := range half {
				hf := h*hd + i*half + j
				gg := h*hd + 2*j + i
				src, dst := gg, hf
				if toGGUF {
					src, dst = hf, gg
				}
				copy(out[dst*cols:(dst+1)*cols], data[src*cols:(src+1)*cols])
			}
		}
	}
	return out
}
