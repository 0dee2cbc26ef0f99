package ggufmodel

import (
	"fmt"
	"math"
	"strings"

	"github.com/ragen-go/ragen/gguf"
)

// Spec is what a GGUF export says about the model: llama.cpp's
// hyperparameters of the architecture, the tokenizer's metadata and the
// tensor encoding.
type Spec struct {
	Arch           string // ArchLlama or ArchQwen2
	Name           string // general.name
	ContextLength  int
	Hidden, FFN    int
	Layers         int
	Heads, KVHeads int
	HeadDim        int
	VocabSize      int
	RopeTheta      float64
	RMSNormEps     float64
	// Llama3 is Llama 3.1's rope scaling (factor, low and high frequency
	// factors, original context); zero when the model has none. llama.cpp
	// reads it as the per-frequency divisors of a rope_freqs tensor.
	Llama3         [3]float64
	Llama3Original int
	// Tokenizer is the tokenizer's metadata (tokenizer.ggml.*,
	// tokenizer.chat_template), in order.
	Tokenizer []gguf.KV
	// Type encodes the matrices: F32, F16, BF16 or Q8_0. Vectors (norms,
	// biases) are F32, and a matrix whose rows are not a whole number of
	// Q8_0 blocks is F16, as llama.cpp's converter does.
	Type gguf.Type
}

// Tensor is one weight to write, under its HuggingFace name, in
// HuggingFace's layout.
type Tensor struct {
	Name  string
	Shape []int64
	Data  func() ([]float32, error)
}

// fileTypes are general.file_type's values (llama.cpp's llama_ftype) for
// the encodings Write produces.
var fileTypes = map[gguf.Type]uint32{gguf.F32: 0, gguf.F16: 1, gguf.Q8_0: 7, gguf.BF16: 32}

// Write writes the model as a GGUF file at path that llama.cpp loads:
// llama.cpp's names, llama's q/k rows permuted for its rope, and the
// metadata of s. The file appears only when complete.
func Write(path string, s Spec, tensors []Tensor) error {
	ft, ok := fileTypes[s.Type]
	if !ok {
		return fmt.Errorf("gguf export: type %s is not one of F32, F16, BF16, Q8_0", s.Type)
	}
	if s.Arch != ArchLlama && s.Arch != ArchQwen2 {
		return fmt.Errorf("gguf export: architecture %q is not llama or qwen2", s.Arch)
	}
	meta := s.metadata(ft)
	specs := make([]gguf.TensorSpec, 0, len(tensors)+1)
	for _, t := range tensors {
		name, ok := ToGGUF(t.Name)
		if !ok {
			return fmt.Errorf("gguf export: tensor %s has no llama.cpp name", t.Name)
		}
		spec := gguf.TensorSpec{Name: name, Shape: t.Shape, Type: s.tensorType(t.Shape)}
		data, hf := t.Data, t.Name
		heads, perm := permuted(s.Arch, hf, s.Heads, s.KVHeads)
		spec.Source = func() ([]float32, error) {
			v, err := data()
			if err != nil || !perm {
				return v, err
			}
			cols := 1
			if len(t.Shape) == 2 {
				cols = int(t.Shape[1])
			}
			return permute(v, heads, cols), nil
		}
		specs = append(specs, spec)
	}
	if s.Llama3[0] != 0 {
		specs = append(specs, gguf.TensorSpec{Name: "rope_freqs.weight", Shape: []int64{int64(s.HeadDim / 2)},
			Type: gguf.F32, Data: s.ropeFactors()})
	}
	return gguf.WriteFile(path, meta, specs)
}

// tensorType is the encoding of a tensor of the given shape.
func (s Spec) tensorType(shape []int64) gguf.Type {
	if len(shape) < 2 {
		return gguf.F32
	}
	if s.Type == gguf.Q8_0 && shape[len(shape)-1]%int64(gguf.Q8_0.BlockSize()) != 0 {
		return gguf.F16
	}
	return s.Type
}

func (s Spec) metadata(fileType uint32) []gguf.KV {
	a := s.Arch + "."
	u := func(v int) uint32 { return uint32(v) }
	meta := []gguf.KV{
		{Key: "general.architecture", Value: s.Arch},
		{Key: "general.type", Value: "model"},
		{Key: "general.name", Value: s.Name},
		{Key: "general.file_type", Value: fileType},
	}
	if s.Type == gguf.Q8_0 {
		meta = append(meta, gguf.KV{Key: "general.quantization_version", Value: uint32(2)})
	}
	meta = append(meta,
		gguf.KV{Key: a + "context_length", Value: u(s.ContextLength)},
		gguf.KV{Key: a + "embedding_length", Value: u(s.Hidden)},
		gguf.KV{Key: a + "block_count", Value: u(s.Layers)},
		gguf.KV{Key: a + "feed_forward_length", Value: u(s.FFN)},
		gguf.KV{Key: a + "attention.head_count", Value: u(s.Heads)},
		gguf.KV{Key: a + "attention.head_count_kv", Value: u(s.KVHeads)},
		gguf.KV{Key: a + "rope.freq_base", Value: float32(s.RopeTheta)},
		gguf.KV{Key: a + "attention.layer_norm_rms_epsilon", Value: float32(s.RMSNormEps)},
		gguf.KV{Key: a + "rope.dimension_count", Value: u(s.HeadDim)},
		gguf.KV{Key: a + "vocab_size", Value: u(s.VocabSize)},
	)
	if s.Llama3[0] != 0 {
		meta = append(meta, gguf.KV{Key: a + "rope.scaling.original_context_length", Value: u(s.Llama3Original)})
	}
	if s.HeadDim*s.Heads != s.Hidden {
		meta = append(meta,
			gguf.KV{Key: a + "attention.key_length", Value: u(s.HeadDim)},
			gguf.KV{Key: a + "attention.value_length", Value: u(s.HeadDim)})
	}
	return append(meta, s.Tokenizer...)
}

// ropeFactors are llama.cpp's rope_freqs for Llama 3.1's scaling: for
// each rotary frequency, the divisor that turns the plain frequency into
// the scaled one (1 for the short wavelengths, factor for the long ones).
func (s Spec) ropeFactors() []float32 {
	factor, low, high := s.Llama3[0], s.Llama3[1], s.Llama3[2]
	orig := float64(s.Llama3Original)
	out := make([]float32, s.HeadDim/2)
	for k := range out {
		f := math.Pow(s.RopeTheta, -float64(2*k)/float64(s.HeadDim))
		wavelen := 2 * math.Pi / f
		switch {
		case wavelen < orig/high:
			out[k] = 1
		case wavelen > orig/low:
			out[k] = float32(factor)
		default:
			smooth := (orig/wavelen - low) / (high - low)
			out[k] = float32(1 / ((1-smooth)/factor + smooth))
		}
	}
	return out
}

// ParseType reads an export type name: f32, f16, bf16 or q8_0.
func ParseType(name string) (gguf.Type, error) {
	switch strings.ToLower(name) {
	case "f32":
		return gguf.F32, nil
	case "f16":
		return gguf.F16, nil
	case "bf16":
		return gguf.BF16, nil
	case "q8_0":
		return gguf.Q8_0, nil
	}
	return 0, fmt.Errorf("GGUF type %q is not one of f32, f16, bf16, q8_0", name)
}
