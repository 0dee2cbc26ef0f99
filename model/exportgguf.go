package model

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/ragen-go/ragen/gguf"
	"github.com/ragen-go/ragen/internal/torchrt"
	"github.com/ragen-go/ragen/model/ggufmodel"
)

// ExportGGUF writes params as a GGUF file at path that llama.cpp (and so
// ollama) loads: the matrices encoded as typ (F32, F16, BF16 or Q8_0), the
// vectors in F32, and the tokenizer's metadata tok (tokenizer.ggml.*, the
// chat template) after the architecture's. The file appears only when
// complete.
func ExportGGUF(cfg Config, params []Param, path string, typ gguf.Type, tok []gguf.KV) error {
	arch := cfg.ModelType
	spec := ggufmodel.Spec{
		Arch: arch, Name: strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)),
		ContextLength: cfg.MaxPositionEmbeddings, Hidden: cfg.HiddenSize, FFN: cfg.IntermediateSize,
		Layers: cfg.NumHiddenLayers, Heads: cfg.NumAttentionHeads, KVHeads: cfg.NumKeyValueHeads,
		HeadDim: cfg.HeadDimension(), VocabSize: cfg.VocabSize, RopeTheta: cfg.RopeTheta,
		RMSNormEps: cfg.RMSNormEps, Tokenizer: tok, Type: typ,
	}
	if r := cfg.Rope; r.Type == "llama3" {
		spec.Llama3 = [3]float64{r.Factor, r.LowFreqFactor, r.HighFreqFactor}
		spec.Llama3Original = r.OriginalMaxPositionEmbeddings
	}
	tensors := make([]ggufmodel.Tensor, 0, len(params))
	for _, p := range params {
		p := p
		tensors = append(tensors, ggufmodel.Tensor{Name: p.Name, Shape: size(p.T), Data: func() (v []float32, err error) {
			defer torchrt.Catch(&err, "reading "+p.Name)
			return Float32s(p.T), nil
		}})
	}
	if err := ggufmodel.Write(path, spec, tensors); err != nil {
		return fmt.Errorf("exporting %s: %w", path, err)
	}
	return nil
}
