package gguf

import "math"

// halfToFloat widens an IEEE half to float32, exactly (subnormals, ±Inf
// and NaN payloads included), as numpy's float16.astype(float32).
func halfToFloat(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f: // Inf or NaN: keep the payload
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp != 0: // normal: rebias the exponent from 15 to 127
		return math.Float32frombits(sign | (exp+112)<<23 | mant<<13)
	case mant == 0:
		return math.Float32frombits(sign)
	}
	// Subnormal half, mant·2⁻²⁴: a normal float32. Shift the leading one
	// up to the implicit bit.
	shift := uint32(0)
	for mant&0x400 == 0 {
		mant <<= 1
		shift++
	}
	return math.Float32frombits(sign | (113-shift)<<23 | (mant&0x3ff)<<13)
}

// floatToHalf narrows a float32 to an IEEE half, rounding to nearest even
// and overflowing to ±Inf, as numpy's astype(float16) (which gguf-py's
// F16 quantization is) and GGML's ggml_fp32_to_fp16 do. NaN stays NaN with
// the top 10 bits of its payload, and 1 if those are all zero, as numpy
// keeps it (GGML's F16C path would also set the quiet bit).
func floatToHalf(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	mant := b & 0x7fffff
	if exp == 0xff {
		if mant == 0 {
			return sign | 0x7c00
		}
		return sign | 0x7c00 | max(uint16(mant>>13), 1)
	}
	e := exp - 127 + 15 // the half's biased exponent
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e >= 1 {
		// Normal: keep 10 of 23 mantissa bits; a carry out of the mantissa
		// correctly bumps the exponent, up to Inf.
		return sign + roundShift(uint32(e)<<10|mant>>13, mant&0x1fff, 13)
	}
	// Subnormal half (or zero): the value is (mant|1<<23)·2^(exp-150),
	// counted in units of 2⁻²⁴ that is (mant|1<<23) >> (14-e).
	if exp == 0 {
		return sign // float32 subnormals are far below half's smallest
	}
	shift := uint32(14 - e)
	if shift > 24 {
		return sign // below half of the smallest subnormal
	}
	m := mant | 0x800000
	return sign + roundShift(m>>shift, m&(1<<shift-1), shift)
}

// roundShift rounds q, the kept bits of a value whose dropped low bits
// (shift of them) are rest, to nearest even.
func roundShift(q, rest, shift uint32) uint16 {
	half := uint32(1) << (shift - 1)
	if rest > half || (rest == half && q&1 == 1) {
		q++
	}
	return uint16(q)
}

// bf16ToFloat widens a bfloat16, the top half of a float32.
func bf16ToFloat(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// floatToBF16 narrows a float32 to bfloat16 rounding to nearest even,
// with NaN made quiet, as gguf-py's BF16.quantize_blocks and GGML's
// ggml_compute_fp32_to_bf16.
func floatToBF16(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 {
		return uint16(b>>16) | 0x40
	}
	return uint16((uint64(b) + 0x7fff + uint64(b>>16&1)) >> 16)
}
