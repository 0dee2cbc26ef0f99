package gguf

import (
	"encoding/binary"
	"math"
)

// value reads a value of type t for key.
func (c *cursor) value(t valueType, key string) (any, error) {
	what := func() string { return "the value of key " + show(key) }
	switch t {
	case tString:
		return c.str(what)
	case tArray:
		return c.array(key)
	}
	if t >= nValueTypes {
		return nil, newError(c.name, ErrMalformed, "key %s has unknown value type %d", show(key), uint32(t))
	}
	b, err := c.take(uint64(fixedSize[t]), what)
	if err != nil {
		return nil, err
	}
	if t == tBool && b[0] > 1 {
		return nil, newError(c.name, ErrMalformed, "key %s has bool value %d, which is neither 0 nor 1", show(key), b[0])
	}
	return scalar(t, b), nil
}

// scalar decodes a fixed-size value of type t from b.
func scalar(t valueType, b []byte) any {
	le := binary.LittleEndian
	switch t {
	case tUint8:
		return b[0]
	case tInt8:
		return int8(b[0])
	case tUint16:
		return le.Uint16(b)
	case tInt16:
		return int16(le.Uint16(b))
	case tUint32:
		return le.Uint32(b)
	case tInt32:
		return int32(le.Uint32(b))
	case tFloat32:
		return math.Float32frombits(le.Uint32(b))
	case tBool:
		return b[0] != 0
	case tUint64:
		return le.Uint64(b)
	case tInt64:
		return int64(le.Uint64(b))
	case tFloat64:
		return math.Float64frombits(le.Uint64(b))
	}
	panic("gguf: scalar of non-scalar type " + t.String())
}

// array reads an array value for key: element type, length, elements.
// The length is checked against the bytes left before anything is
// allocated (a string takes at least its 8-byte length).
func (c *cursor) array(key string) (any, error) {
	et, err := c.u32(func() string { return "the element type of array key " + show(key) })
	if err != nil {
		return nil, err
	}
	n, err := c.u64(func() string { return "the length of array key " + show(key) })
	if err != nil {
		return nil, err
	}
	elem := valueType(et)
	switch {
	case elem == tArray:
		return nil, newError(c.name, ErrUnsupported, "key %s is an array of arrays, which ragen does not read", show(key))
	case elem >= nValueTypes:
		return nil, newError(c.name, ErrMalformed, "array key %s has unknown element type %d", show(key), et)
	}
	min := uint64(fixedSize[elem])
	if elem == tString {
		min = 8
	}
	if n > uint64(c.remaining())/min {
		return nil, newError(c.name, ErrMalformed, "array key %s claims %d elements of type %s, more than the %d bytes left can hold", show(key), n, elem, c.remaining())
	}
	what := func() string { return "array key " + show(key) }
	if elem == tString {
		out := make([]string, n)
		for i := range out {
			if out[i], err = c.str(what); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	b, err := c.take(n*min, what)
	if err != nil {
		return nil, err
	}
	if elem == tBool {
		for i, x := range b {
			if x > 1 {
				return nil, newError(c.name, ErrMalformed, "array key %s has bool value %d at index %d, which is neither 0 nor 1", show(key), x, i)
			}
		}
	}
	return decodeArray(elem, b), nil
}

// decodeArray decodes the elements of a fixed-size array from b.
func decodeArray(elem valueType, b []byte) any {
	le := binary.LittleEndian
	switch elem {
	case tUint8:
		return decodeEach(b, 1, func(b []byte) uint8 { return b[0] })
	case tInt8:
		return decodeEach(b, 1, func(b []byte) int8 { return int8(b[0]) })
	case tUint16:
		return decodeEach(b, 2, le.Uint16)
	case tInt16:
		return decodeEach(b, 2, func(b []byte) int16 { return int16(le.Uint16(b)) })
	case tUint32:
		return decodeEach(b, 4, le.Uint32)
	case tInt32:
		return decodeEach(b, 4, func(b []byte) int32 { return int32(le.Uint32(b)) })
	case tFloat32:
		return decodeEach(b, 4, func(b []byte) float32 { return math.Float32frombits(le.Uint32(b)) })
	case tBool:
		return decodeEach(b, 1, func(b []byte) bool { return b[0] != 0 })
	case tUint64:
		return decodeEach(b, 8, le.Uint64)
	case tInt64:
		return decodeEach(b, 8, func(b []byte) int64 { return int64(le.Uint64(b)) })
	case tFloat64:
		return decodeEach(b, 8, func(b []byte) float64 { return math.Float64frombits(le.Uint64(b)) })
	}
	panic("gguf: decodeArray of non-scalar type " + elem.String())
}

// decodeEach splits b into size-byte elements and decodes each with f.
func decodeEach[T any](b []byte, size int, f func([]byte) T) []T {
	out := make([]T, len(b)/size)
	for i := range out {
		out[i] = f(b[i*size : i*size+size])
	}
	return out
}
