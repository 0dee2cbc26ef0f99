// Package gguf reads and writes GGUF files, the model format of llama.cpp,
// in pure Go.
//
// A GGUF file is a header (magic "GGUF", version, tensor and key counts),
// an ordered list of metadata key/values, a list of tensor infos (name,
// dims, type, offset) and, from the next multiple of the alignment on, the
// tensor data, each tensor at an aligned offset. Everything is
// little-endian; versions 2 and 3 are read, version 3 is written. The
// format is defined by gguf-py (constants.py, gguf_reader.py,
// gguf_writer.py, quants.py), which this package follows value for value:
// the reference test in parity/gguf_test.go holds its dequantization to
// gguf-py's bit for bit and its Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, F16 and BF16
// quantization to gguf-py's byte for byte.
//
// Reading: Open memory-maps a file (falling back to reading it), Parse
// reads bytes already in memory. The metadata keeps the file's order
// (File.Meta) and has typed getters (File.String, File.Uint, ...) whose
// errors name the key and what was found. A tensor's dims are GGUF's, ne[0]
// the fastest-varying; Tensor.Shape gives them in row-major (PyTorch)
// order, which is the order of the data, so a dequantized tensor needs no
// transposition. File.Float32 dequantizes one tensor.
//
// Writing: Write and WriteFile take metadata in order and TensorSpecs,
// whose data may come from a function called when the tensor is written,
// so a large model never has to be in memory at once.
//
// Hostile input: Parse checks every count, length, offset and size against
// the bytes that remain before it allocates, so a corrupt or crafted file
// gives an error, never a panic, a hang or an allocation larger than a
// small multiple of the file. FuzzParse exercises this. Every error is one
// sentence that starts "gguf FILE:" and names what is wrong.
package gguf
