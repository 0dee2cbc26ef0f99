package gguf

import (
	"fmt"
	"strings"
)

// Type is a tensor's element encoding, GGML's ggml_type (gguf-py's
// GGMLQuantizationType). The numbers are the file format's.
type Type uint32

// The tensor types GGUF knows. Numbers absent here (4, 5, 31–33, 36–38)
// were removed from GGML and are refused as unknown.
const (
	F32     Type = 0
	F16     Type = 1
	Q4_0    Type = 2
	Q4_1    Type = 3
	Q5_0    Type = 6
	Q5_1    Type = 7
	Q8_0    Type = 8
	Q8_1    Type = 9
	Q2_K    Type = 10
	Q3_K    Type = 11
	Q4_K    Type = 12
	Q5_K    Type = 13
	Q6_K    Type = 14
	Q8_K    Type = 15
	IQ2_XXS Type = 16
	IQ2_XS  Type = 17
	IQ3_XXS Type = 18
	IQ1_S   Type = 19
	IQ4_NL  Type = 20
	IQ3_S   Type = 21
	IQ2_S   Type = 22
	IQ4_XS  Type = 23
	I8      Type = 24
	I16     Type = 25
	I32     Type = 26
	I64     Type = 27
	F64     Type = 28
	IQ1_M   Type = 29
	BF16    Type = 30
	TQ1_0   Type = 34
	TQ2_0   Type = 35
	MXFP4   Type = 39
	NVFP4   Type = 40
	Q1_0    Type = 41
)

// qk is the number of elements in a K-quant super-block (QK_K).
const qk = 256

// typeInfo is a type's name and block layout: blockSize elements are
// stored in typeSize bytes (gguf-py's GGML_QUANT_SIZES).
type typeInfo struct {
	name                string
	blockSize, typeSize int
}

var types = map[Type]typeInfo{
	F32:     {"F32", 1, 4},
	F16:     {"F16", 1, 2},
	Q4_0:    {"Q4_0", 32, 2 + 16},
	Q4_1:    {"Q4_1", 32, 2 + 2 + 16},
	Q5_0:    {"Q5_0", 32, 2 + 4 + 16},
	Q5_1:    {"Q5_1", 32, 2 + 2 + 4 + 16},
	Q8_0:    {"Q8_0", 32, 2 + 32},
	Q8_1:    {"Q8_1", 32, 4 + 4 + 32},
	Q2_K:    {"Q2_K", qk, 2 + 2 + qk/16 + qk/4},
	Q3_K:    {"Q3_K", qk, 2 + qk/4 + qk/8 + 12},
	Q4_K:    {"Q4_K", qk, 2 + 2 + qk/2 + 12},
	Q5_K:    {"Q5_K", qk, 2 + 2 + qk/2 + qk/8 + 12},
	Q6_K:    {"Q6_K", qk, 2 + qk/2 + qk/4 + qk/16},
	Q8_K:    {"Q8_K", qk, 4 + qk + qk/8},
	IQ2_XXS: {"IQ2_XXS", qk, 2 + qk/4},
	IQ2_XS:  {"IQ2_XS", qk, 2 + qk/4 + qk/32},
	IQ3_XXS: {"IQ3_XXS", qk, 2 + qk/4 + qk/8},
	IQ1_S:   {"IQ1_S", qk, 2 + qk/8 + qk/16},
	IQ4_NL:  {"IQ4_NL", 32, 2 + 16},
	IQ3_S:   {"IQ3_S", qk, 2 + qk/4 + qk/8 + qk/32 + 4},
	IQ2_S:   {"IQ2_S", qk, 2 + qk/4 + qk/16},
	IQ4_XS:  {"IQ4_XS", qk, 2 + 2 + qk/2 + qk/64},
	I8:      {"I8", 1, 1},
	I16:     {"I16", 1, 2},
	I32:     {"I32", 1, 4},
	I64:     {"I64", 1, 8},
	F64:     {"F64", 1, 8},
	IQ1_M:   {"IQ1_M", qk, qk/8 + qk/16 + qk/32},
	BF16:    {"BF16", 1, 2},
	TQ1_0:   {"TQ1_0", qk, 2 + 4*13},
	TQ2_0:   {"TQ2_0", qk, 2 + 64},
	MXFP4:   {"MXFP4", 32, 1 + 16},
	NVFP4:   {"NVFP4", 64, 4 + 32},
	Q1_0:    {"Q1_0", 128, 2 + 16},
}

// String is the type's GGML name ("Q4_K"), or "type(N)" for a number GGUF
// does not define.
func (t Type) String() string {
	if info, ok := types[t]; ok {
		return info.name
	}
	return fmt.Sprintf("type(%d)", uint32(t))
}

// Known reports whether GGUF defines t, that is whether its block layout,
// and so the byte size of a tensor of it, is known.
func (t Type) Known() bool {
	_, ok := types[t]
	return ok
}

// BlockSize is the number of elements stored together in one block of t
// (1 for the plain types, 32 or 256 for most quantized ones), or 0 for an
// unknown type.
func (t Type) BlockSize() int { return types[t].blockSize }

// TypeSize is the number of bytes of one block of t, or 0 for an unknown
// type.
func (t Type) TypeSize() int { return types[t].typeSize }

// CanDequantize reports whether Dequantize and File.Float32 read t.
func (t Type) CanDequantize() bool {
	_, ok := dequantizers[t]
	return ok
}

// CanQuantize reports whether Quantize, and so the writer given float32
// data, produces t.
func (t Type) CanQuantize() bool {
	_, ok := quantizers[t]
	return ok
}

// describe is t as messages show it: "IQ2_XXS (16)".
func (t Type) describe() string {
	if info, ok := types[t]; ok {
		return fmt.Sprintf("%s (%d)", info.name, uint32(t))
	}
	return fmt.Sprintf("unknown type %d", uint32(t))
}

// dequantizable and quantizable list the types this package reads and
// writes from float32, in the order messages give them.
var (
	dequantizable = []Type{F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q8_K}
	quantizable   = []Type{F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1}
)

// typeList is "F32, F16, ..." for messages.
func typeList(ts []Type) string {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.String()
	}
	return strings.Join(names, ", ")
}
