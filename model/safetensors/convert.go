package safetensors

import (
	"encoding/binary"
	"fmt"
	"math"
)

// BF16ToFloat32 widens a bfloat16 (the top 16 bits of a float32); it is exact.
func BF16ToFloat32(b uint16) float32 { return math.Float32frombits(uint32(b) << 16) }

// Float32ToBF16 rounds a float32 to the nearest bfloat16, ties to even, as
// torch does; every NaN becomes the quiet NaN 0x7FC0, also as torch does.
func Float32ToBF16(f float32) uint16 {
	if f != f {
		return 0x7FC0
	}
	u := math.Float32bits(f)
	// Adding 0x7FFF plus the lowest kept bit rounds half-way cases towards an
	// even kept part; a carry into the exponent rounds up to the next binade
	// (or to infinity), which is the correct result.
	u += 0x7FFF + (u>>16)&1
	return uint16(u >> 16)
}

// F16ToFloat32 widens an IEEE 754 half-precision value, including
// subnormals, infinities and NaN; it is exact.
func F16ToFloat32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1F
	mant := uint32(h & 0x3FF)
	switch exp {
	case 0x1F: // infinity or NaN, payload kept
		return math.Float32frombits(sign | 0x7F800000 | mant<<13)
	case 0: // zero or subnormal: mant · 2⁻²⁴, exact in float32
		f := float32(mant) * (1.0 / (1 << 24))
		if sign != 0 {
			f = -f
		}
		return f
	default: // rebias the exponent from 15 to 127
		return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
	}
}

// Float32ToF16 rounds a float32 to the nearest IEEE 754 half, ties to even:
// values beyond the half range become ±Inf, tiny values become subnormals or
// ±0, and every NaN becomes the quiet NaN 0x7E00 with its sign, as torch does.
func Float32ToF16(f float32) uint16 {
	u := math.Float32bits(f)
	sign := uint16(u>>16) & 0x8000
	exp := int32(u>>23) & 0xFF
	mant := u & 0x7FFFFF
	if exp == 0xFF {
		if mant != 0 {
			return sign | 0x7E00
		}
		return sign | 0x7C00
	}
	e := exp - 127 + 15 // the exponent rebiased for half
	switch {
	case e >= 0x1F:
		return sign | 0x7C00
	case e <= 0:
		// A half subnormal counts units of 2⁻²⁴. Below half the smallest
		// one (e < -10) everything rounds to zero.
		if e < -10 {
			return sign
		}
		m := mant | 0x800000 // the implicit leading bit
		shift := uint32(14 - e)
		return sign | uint16(roundShift(m, shift))
	default:
		// A carry out of the mantissa moves into the exponent, and from the
		// largest finite value on to infinity: both correct.
		return sign | uint16(roundShift(uint32(e)<<23|mant, 13))
	}
}

// roundShift is v >> shift rounded to nearest, ties to even.
func roundShift(v, shift uint32) uint32 {
	q := v >> shift
	rem := v & (1<<shift - 1)
	half := uint32(1) << (shift - 1)
	if rem > half || (rem == half && q&1 == 1) {
		q++
	}
	return q
}

// DecodeFloat32 converts little-endian BF16, F16 or F32 data to float32.
func DecodeFloat32(d DType, data []byte) ([]float32, error) {
	switch d {
	case BF16, F16, F32:
	default:
		return nil, fmt.Errorf("dtype %s cannot be read as float32 (only BF16, F16, F32)", d)
	}
	size := int(d.Size())
	if len(data)%size != 0 {
		return nil, fmt.Errorf("%d bytes is not a whole number of %s elements", len(data), d)
	}
	out := make([]float32, len(data)/size)
	for i := range out {
		switch d {
		case BF16:
			out[i] = BF16ToFloat32(binary.LittleEndian.Uint16(data[2*i:]))
		case F16:
			out[i] = F16ToFloat32(binary.LittleEndian.Uint16(data[2*i:]))
		case F32:
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		}
	}
	return out, nil
}

// EncodeFloat32 converts float32 values to little-endian BF16, F16 (both
// rounded to nearest even) or F32 data.
func EncodeFloat32(d DType, values []float32) ([]byte, error) {
	switch d {
	case BF16, F16, F32:
	default:
		return nil, fmt.Errorf("dtype %s cannot be written from float32 (only BF16, F16, F32)", d)
	}
	out := make([]byte, len(values)*int(d.Size()))
	for i, v := range values {
		switch d {
		case BF16:
			binary.LittleEndian.PutUint16(out[2*i:], Float32ToBF16(v))
		case F16:
			binary.LittleEndian.PutUint16(out[2*i:], Float32ToF16(v))
		case F32:
			binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(v))
		}
	}
	return out, nil
}
