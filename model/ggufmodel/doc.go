// Package ggufmodel sees a GGUF file (llama.cpp's format) as a HuggingFace
// checkpoint, and writes a HuggingFace model back as GGUF.
//
// Reading (Open): the architecture's metadata (llama.*, qwen2.*) becomes a
// config.json for package model; the tensors are served under
// HuggingFace's names, dequantized to float32, with llama.cpp's row
// permutation of the llama q and k projections undone. llama.cpp applies
// rotary embeddings to adjacent pairs of a head (its "normal" rope), while
// HuggingFace's Llama rotates the two halves of the head
// (rotate_half), so its converter reorders the rows of q_proj and k_proj
// (and their biases) head by head: row i·hd/2 + j of a head becomes row
// 2j + i. Qwen2 is run by llama.cpp with the half-rotating ("neox") rope
// and its rows are stored as they are.
//
// Writing (Write): the reverse, with the tensors quantized to F32, F16,
// BF16 or Q8_0 (one-dimensional tensors stay F32, as llama.cpp's
// converter keeps them) and the tokenizer's metadata given by the caller.
//
// The package is pure Go: it imports the gguf reader and writer only, so
// that package model and the tokenizer can both build on it.
package ggufmodel
