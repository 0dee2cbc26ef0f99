package gguf

import "math"

// writeValue writes a metadata value (its type tag is already written):
// a scalar, a string as length and bytes, an array as element type,
// length and elements.
func writeValue(c *countingWriter, v any) {
	switch x := v.(type) {
	case uint8:
		c.u8(x)
	case int8:
		c.u8(uint8(x))
	case uint16:
		c.u16(x)
	case int16:
		c.u16(uint16(x))
	case uint32:
		c.u32(x)
	case int32:
		c.u32(uint32(x))
	case float32:
		c.u32(math.Float32bits(x))
	case bool:
		c.u8(boolByte(x))
	case string:
		c.str(x)
	case uint64:
		c.u64(x)
	case int64:
		c.u64(uint64(x))
	case float64:
		c.u64(math.Float64bits(x))
	default:
		_, elem, _ := typeOf(v)
		c.u32(uint32(elem))
		c.u64(uint64(arrayLen(v)))
		writeArray(c, v)
	}
}

// writeArray writes the elements of an array value.
func writeArray(c *countingWriter, v any) {
	switch a := v.(type) {
	case []uint8:
		c.write(a)
	case []int8:
		each(c, a, func(x int8) { c.u8(uint8(x)) })
	case []uint16:
		each(c, a, c.u16)
	case []int16:
		each(c, a, func(x int16) { c.u16(uint16(x)) })
	case []uint32:
		each(c, a, c.u32)
	case []int32:
		each(c, a, func(x int32) { c.u32(uint32(x)) })
	case []float32:
		each(c, a, func(x float32) { c.u32(math.Float32bits(x)) })
	case []bool:
		each(c, a, func(x bool) { c.u8(boolByte(x)) })
	case []string:
		each(c, a, c.str)
	case []uint64:
		each(c, a, c.u64)
	case []int64:
		each(c, a, func(x int64) { c.u64(uint64(x)) })
	case []float64:
		each(c, a, func(x float64) { c.u64(math.Float64bits(x)) })
	}
}

// each writes every element of a with put, stopping at the first error.
func each[T any](c *countingWriter, a []T, put func(T)) {
	for _, x := range a {
		if c.err != nil {
			return
		}
		put(x)
	}
}

func boolByte(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}
