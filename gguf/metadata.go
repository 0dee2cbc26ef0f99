package gguf

import "fmt"

// KV is one metadata key and its value. Value holds one of these Go
// types, which map one to one onto GGUF's value types: uint8, int8,
// uint16, int16, uint32, int32, uint64, int64, float32, float64, bool,
// string, or a slice of one of them ([]uint8 ... []string), a GGUF array.
// Parse produces exactly these types; Write accepts only them (not int,
// whose size GGUF would not know).
type KV struct {
	Key   string
	Value any
}

// valueType is GGUF's gguf_type, the type tag of a metadata value.
type valueType uint32

const (
	tUint8 valueType = iota
	tInt8
	tUint16
	tInt16
	tUint32
	tInt32
	tFloat32
	tBool
	tString
	tArray
	tUint64
	tInt64
	tFloat64
	nValueTypes
)

var valueTypeNames = [nValueTypes]string{"uint8", "int8", "uint16", "int16", "uint32", "int32", "float32", "bool", "string", "array", "uint64", "int64", "float64"}

// fixedSize is the byte size of the fixed-size value types (0 for string
// and array).
var fixedSize = [nValueTypes]int{1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8}

func (t valueType) String() string {
	if t < nValueTypes {
		return valueTypeNames[t]
	}
	return fmt.Sprintf("value type %d", uint32(t))
}

// typeOf is the GGUF type of a Go value of KV.Value: its type and, for an
// array, its element type; ok is false for any other Go type.
func typeOf(v any) (t, elem valueType, ok bool) {
	switch v.(type) {
	case uint8:
		return tUint8, 0, true
	case int8:
		return tInt8, 0, true
	case uint16:
		return tUint16, 0, true
	case int16:
		return tInt16, 0, true
	case uint32:
		return tUint32, 0, true
	case int32:
		return tInt32, 0, true
	case float32:
		return tFloat32, 0, true
	case bool:
		return tBool, 0, true
	case string:
		return tString, 0, true
	case uint64:
		return tUint64, 0, true
	case int64:
		return tInt64, 0, true
	case float64:
		return tFloat64, 0, true
	case []uint8:
		return tArray, tUint8, true
	case []int8:
		return tArray, tInt8, true
	case []uint16:
		return tArray, tUint16, true
	case []int16:
		return tArray, tInt16, true
	case []uint32:
		return tArray, tUint32, true
	case []int32:
		return tArray, tInt32, true
	case []float32:
		return tArray, tFloat32, true
	case []bool:
		return tArray, tBool, true
	case []string:
		return tArray, tString, true
	case []uint64:
		return tArray, tUint64, true
	case []int64:
		return tArray, tInt64, true
	case []float64:
		return tArray, tFloat64, true
	}
	return 0, 0, false
}

// describe is a value as messages show what was found: `uint32 7`,
// `string gpt2`, `a 3-element int32 array`.
func describe(v any) string {
	t, elem, ok := typeOf(v)
	switch {
	case !ok:
		return fmt.Sprintf("Go type %T", v)
	case t == tArray:
		return fmt.Sprintf("a %d-element %s array", arrayLen(v), elem)
	case t == tString:
		return "string " + show(v.(string))
	}
	return fmt.Sprintf("%s %v", t, v)
}

// arrayLen is the length of an array value.
func arrayLen(v any) int {
	switch a := v.(type) {
	case []uint8:
		return len(a)
	case []int8:
		return len(a)
	case []uint16:
		return len(a)
	case []int16:
		return len(a)
	case []uint32:
		return len(a)
	case []int32:
		return len(a)
	case []float32:
		return len(a)
	case []bool:
		return len(a)
	case []string:
		return len(a)
	case []uint64:
		return len(a)
	case []int64:
		return len(a)
	case []float64:
		return len(a)
	}
	return 0
}
