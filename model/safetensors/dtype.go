package safetensors

import "fmt"

// DType is a safetensors element type, spelled as in the header.
type DType string

// The element types of the safetensors format. BF16, F16 and F32 can be read
// as float32 (File.Float32); every type can be read as raw bytes.
const (
	BOOL   DType = "BOOL"
	U8     DType = "U8"
	I8     DType = "I8"
	F8E4M3 DType = "F8_E4M3"
	F8E5M2 DType = "F8_E5M2"
	I16    DType = "I16"
	U16    DType = "U16"
	F16    DType = "F16"
	BF16   DType = "BF16"
	I32    DType = "I32"
	U32    DType = "U32"
	F32    DType = "F32"
	F64    DType = "F64"
	I64    DType = "I64"
	U64    DType = "U64"
)

var dtypeSizes = map[DType]int64{
	BOOL: 1, U8: 1, I8: 1, F8E4M3: 1, F8E5M2: 1,
	I16: 2, U16: 2, F16: 2, BF16: 2,
	I32: 4, U32: 4, F32: 4,
	F64: 8, I64: 8, U64: 8,
}

// Size is the number of bytes of one element, or 0 for an unknown type.
func (d DType) Size() int64 { return dtypeSizes[d] }

// Valid reports whether d is a known safetensors element type.
func (d DType) Valid() bool { return d.Size() > 0 }

// byteSize is the number of bytes of a tensor of this type and shape,
// checking each dimension and guarding the products against overflow.
func byteSize(d DType, shape []int64) (int64, error) {
	if !d.Valid() {
		return 0, fmt.Errorf("unknown dtype %q", string(d))
	}
	const limit = int64(1) << 62
	n := d.Size()
	for _, s := range shape {
		if s < 0 {
			return 0, fmt.Errorf("negative dimension %d in shape %v", s, shape)
		}
		if s != 0 && n > limit/s {
			return 0, fmt.Errorf("shape %v is too large", shape)
		}
		n *= s
	}
	return n, nil
}
