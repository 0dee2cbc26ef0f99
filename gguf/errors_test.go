package gguf

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
)

// gguf assembles a version-3 file: nKV key/values written by kvs, nT
// tensor infos written by infos, padding to 32 and data bytes of zeros.
func gguf(nKV uint64, kvs func(*raw), nT uint64, infos func(*raw), data int) []byte {
	r := new(raw).header(3, nT, nKV)
	if kvs != nil {
		kvs(r)
	}
	if infos != nil {
		infos(r)
	}
	return r.pad(32).zeros(data).Bytes()
}

// oneKV is a file with the single key/value k of type t written by body.
func oneKV(k string, t valueType, body func(*raw)) []byte {
	return gguf(1, func(r *raw) { r.kv(k, t, body) }, 0, nil, 0)
}

// oneTensor is a file with one tensor info and data bytes.
func oneTensor(dims []uint64, t Type, offset uint64, data int) []byte {
	return gguf(0, nil, 1, func(r *raw) { r.info("w", dims, t, offset) }, data)
}

// TestParseErrors feeds Parse broken files, each assembled by hand, and
// checks the error: its kind, that it names the fault, and that it is one
// sentence about the file.
func TestParseErrors(t *testing.T) {
	u32 := func(v uint32) func(*raw) { return func(r *raw) { r.u32(v) } }
	cases := []struct {
		name string
		data []byte
		kind error
		want string
	}{
		{"empty", nil, ErrMalformed, "file ends inside the magic at offset 0 (4 bytes needed, 0 left)"},
		{"bad magic", []byte("GGML\x03\x00\x00\x00"), ErrMalformed, `bad magic "GGML", not a GGUF file`},
		{"version 1", new(raw).header(1, 0, 0).Bytes(), ErrUnsupported, "GGUF version 1, which ragen cannot read (it reads versions 2 and 3)"},
		{"version 4", new(raw).header(4, 0, 0).Bytes(), ErrUnsupported, "GGUF version 4,"},
		{"big-endian", new(raw).header(3<<24, 0, 0).Bytes(), ErrUnsupported, "file is big-endian (version 3 byte-swapped), which ragen cannot read"},
		{"truncated count", []byte("GGUF\x03\x00\x00\x00\x01\x00"), ErrMalformed, "file ends inside the tensor count at offset 8 (8 bytes needed, 2 left)"},
		{"huge key count", new(raw).header(3, 0, 1<<62).Bytes(), ErrMalformed, "header claims 4611686018427387904 metadata keys and 0 tensors, more than the 0 bytes left can hold"},
		{"huge tensor count", new(raw).header(3, math.MaxUint64, 0).zeros(100).Bytes(), ErrMalformed, "header claims 0 metadata keys and 18446744073709551615 tensors"},
		{"huge key length", gguf(1, func(r *raw) { r.u64(1 << 60).zeros(20) }, 0, nil, 0), ErrMalformed, "file ends inside the key of metadata entry #0 at offset 32"},
		{"huge string", oneKV("k", tString, func(r *raw) { r.u64(1 << 62) }), ErrMalformed, "file ends inside the value of key k at offset 45"},
		{"huge array", oneKV("k", tArray, func(r *raw) { r.u32(uint32(tUint32)).u64(1 << 61) }), ErrMalformed, "array key k claims 2305843009213693952 elements of type uint32, more than the"},
		{"huge string array", oneKV("k", tArray, func(r *raw) { r.u32(uint32(tString)).u64(100).zeros(16) }), ErrMalformed, "array key k claims 100 elements of type string"},
		{"nested array", oneKV("k", tArray, func(r *raw) { r.u32(uint32(tArray)).u64(1) }), ErrUnsupported, "key k is an array of arrays, which ragen does not read"},
		{"unknown value type", oneKV("k", 13, u32(0)), ErrMalformed, "key k has unknown value type 13"},
		{"unknown element type", oneKV("k", tArray, func(r *raw) { r.u32(99).u64(0) }), ErrMalformed, "array key k has unknown element type 99"},
		{"bool 2", oneKV("k", tBool, func(r *raw) { r.u8(2) }), ErrMalformed, "key k has bool value 2, which is neither 0 nor 1"},
		{"bool array", oneKV("k", tArray, func(r *raw) { r.u32(uint32(tBool)).u64(3).u8(1).u8(0).u8(7) }), ErrMalformed, "array key k has bool value 7 at index 2"},
		{"hostile key", oneKV("a\nb", 13, u32(0)), ErrMalformed, `key "a\nb" has unknown value type 13`},
		{"duplicate key", gguf(2, func(r *raw) { r.kv("k", tUint8, func(r *raw) { r.u8(1) }).kv("k", tUint8, func(r *raw) { r.u8(2) }) }, 0, nil, 0), ErrMalformed, "metadata key k appears twice"},
		{"duplicate tensor", gguf(0, nil, 2, func(r *raw) { r.info("w", []uint64{1}, F32, 0).info("w", []uint64{1}, F32, 32) }, 64), ErrMalformed, "tensor w appears twice"},
		{"5 dims", oneTensor([]uint64{1, 1, 1, 1, 1}, F32, 0, 4), ErrMalformed, "tensor w has 5 dims, more than GGML's 4"},
		{"dim too big", oneTensor([]uint64{1 << 63}, F32, 0, 4), ErrMalformed, "tensor w has dim 0 of 9223372036854775808, more than an int64 holds"},
		{"element overflow", oneTensor([]uint64{1 << 40, 1 << 40}, F32, 0, 4), ErrMalformed, "tensor w has dims [1099511627776 1099511627776], whose element count overflows an int64"},
		{"byte overflow", oneTensor([]uint64{1 << 62}, F32, 0, 4), ErrMalformed, "tensor w has dims [4611686018427387904], whose byte size overflows an int64"},
		{"unknown tensor type", oneTensor([]uint64{1}, 99, 0, 4), ErrUnsupported, "tensor w has unknown type 99, which ragen cannot read (supported: F32, F16, BF16,"},
		{"removed tensor type", oneTensor([]uint64{32}, 4, 0, 32), ErrUnsupported, "tensor w has unknown type 4,"},
		{"partial block", oneTensor([]uint64{33, 2}, Q8_0, 0, 100), ErrMalformed, "tensor w has rows of 33 elements, not a multiple of the Q8_0 block size 32"},
		{"misaligned", oneTensor([]uint64{1}, F32, 4, 64), ErrMalformed, "tensor w has offset 4, not a multiple of the alignment 32"},
		{"past the end", oneTensor([]uint64{16}, F32, 0, 63), ErrMalformed, "tensor w needs 64 bytes at file offset 64+0, past the end of the 127-byte file"},
		{"offset past the end", oneTensor([]uint64{1}, F32, 1<<20, 64), ErrMalformed, "tensor w needs 4 bytes at file offset 64+1048576, past the end"},
		{"huge offset", oneTensor([]uint64{1}, F32, math.MaxUint64-31, 64), ErrMalformed, "tensor w has offset 18446744073709551584, beyond any file"},
		{"overlap", gguf(0, nil, 2, func(r *raw) { r.info("a", []uint64{16}, F32, 0).info("b", []uint64{8}, F32, 32) }, 96), ErrMalformed, "tensors a and b overlap (data offsets 0 and 32, a has 64 bytes)"},
		{"truncated info", gguf(0, nil, 1, func(r *raw) { r.str("w").u32(2).u64(1) }, 0), ErrMalformed, "file ends inside the info of tensor w at offset 57 (8 bytes needed, 7 left)"},
		{"alignment type", oneKV(AlignmentKey, tInt32, u32(64)), ErrMalformed, "key general.alignment holds int32 64, not a uint32"},
		{"alignment 0", oneKV(AlignmentKey, tUint32, u32(0)), ErrMalformed, "key general.alignment is 0, not a power of two"},
		{"alignment 48", oneKV(AlignmentKey, tUint32, u32(48)), ErrMalformed, "key general.alignment is 48, not a power of two"},
	}
	for _, c := range cases {
		_, err := Parse(c.data, "bad.gguf")
		if err == nil {
			t.Errorf("%s: parsed", c.name)
			continue
		}
		if !strings.Contains(err.Error(), c.want) || !errors.Is(err, c.kind) {
			t.Errorf("%s: got %q (kind %v), want %q (kind %v)", c.name, err, errors.Is(err, c.kind), c.want, c.kind)
		}
		checkSentence(t, err, "bad.gguf")
	}
}

// TestParseVersion2 reads a version-2 file, whose layout is version 3's.
func TestParseVersion2(t *testing.T) {
	b := new(raw).header(2, 1, 1).kv("k", tString, func(r *raw) { r.str("v") }).info("w", []uint64{2}, F32, 0).pad(32).f32(1).f32(2).Bytes()
	f := mustParse(t, b)
	if got, _ := f.Float32("w"); f.Version != 2 || len(got) != 2 || got[1] != 2 {
		t.Errorf("version %d, w = %v", f.Version, got)
	}
}

// TestParseEdges accepts what the format allows: a tensor with a zero dim
// (no data), a scalar tensor (no dims), tensors in any offset order, and
// a file without tensors that ends before the padding.
func TestParseEdges(t *testing.T) {
	b := gguf(0, nil, 4, func(r *raw) {
		r.info("late", []uint64{8}, F32, 32).info("early", []uint64{8}, F32, 0).info("scalar", nil, F32, 64).info("none", []uint64{0, 5}, Q4_K, 0)
	}, 96)
	f := mustParse(t, b)
	if s, _ := f.Tensor("scalar"); s.Elements() != 1 || len(s.Shape()) != 0 || s.Size != 4 {
		t.Errorf("scalar: %d elements, shape %v", s.Elements(), s.Shape())
	}
	if n, _ := f.Tensor("none"); n.Elements() != 0 || n.Size != 0 || len(n.Bytes()) != 0 {
		t.Errorf("none: %d elements, %d bytes", n.Elements(), n.Size)
	}
	noPad := new(raw).header(3, 0, 1).kv("k", tUint8, func(r *raw) { r.u8(1) }).Bytes()
	if f := mustParse(t, noPad); f.DataOffset <= int64(len(noPad)) {
		t.Errorf("data offset %d inside a %d-byte file", f.DataOffset, len(noPad))
	}
}

// TestParseTruncated parses every prefix of a valid file: each prefix that
// cuts the header or a tensor's data is an error sentence, never a panic.
func TestParseTruncated(t *testing.T) {
	var buf bytes.Buffer
	specs := []TensorSpec{
		{Name: "a", Shape: []int64{2, 32}, Type: Q8_0, Data: randomFloats(1, 64)},
		{Name: "b", Shape: []int64{3}, Type: F32, Data: []float32{1, 2, 3}},
	}
	if err := Write(&buf, everyValue(), specs); err != nil {
		t.Fatal(err)
	}
	full := buf.Bytes()
	f := mustParse(t, full)
	end := f.DataOffset + f.Tensors[1].Offset + f.Tensors[1].Size
	for n := range len(full) {
		_, err := Parse(full[:n], "cut.gguf")
		if int64(n) < end && err == nil {
			t.Fatalf("prefix of %d bytes parsed", n)
		}
		if err != nil {
			checkSentence(t, err, "cut.gguf")
		}
	}
}

// TestUnsupportedTensorType: a file with a tensor of a type ragen cannot
// dequantize parses, and reading that tensor says which file, tensor and
// type.
func TestUnsupportedTensorType(t *testing.T) {
	b := new(raw).header(3, 1, 0).info("blk.0.attn_q.weight", []uint64{256}, IQ2_XXS, 0).pad(32).zeros(66).Bytes()
	f, err := Parse(b, "model.gguf")
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Float32("blk.0.attn_q.weight")
	want := "gguf model.gguf: tensor blk.0.attn_q.weight has type IQ2_XXS (16), which ragen cannot read (supported: F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q8_K)"
	if err == nil || err.Error() != want || !errors.Is(err, ErrUnsupported) {
		t.Errorf("got %v\nwant %s", err, want)
	}
	if _, err := f.Float32("nope"); err == nil || err.Error() != "gguf model.gguf: no tensor nope" {
		t.Errorf("missing tensor: %v", err)
	}
}

// TestWriteErrors: Write refuses, before writing anything, what would make
// an invalid or unreadable file.
func TestWriteErrors(t *testing.T) {
	f32 := func(name string, shape ...int64) TensorSpec {
		n := int64(1)
		for _, d := range shape {
			n *= d
		}
		return TensorSpec{Name: name, Shape: shape, Type: F32, Data: make([]float32, max(n, 0))}
	}
	boom := errors.New("boom")
	cases := []struct {
		name    string
		meta    []KV
		tensors []TensorSpec
		want    string
		written bool // the error comes while writing
	}{
		{"duplicate key", []KV{{"k", uint8(1)}, {"k", uint8(2)}}, nil, "gguf: metadata key k is given twice", false},
		{"int", []KV{{"k", 1}}, nil, "gguf: key k has Go type int, which has no GGUF type", false},
		{"nested", []KV{{"k", [][]int32{{1}}}}, nil, "gguf: key k has Go type [][]int32, which has no GGUF type", false},
		{"alignment type", []KV{{AlignmentKey, int32(64)}}, nil, "gguf: key general.alignment holds int32 64, not a uint32 power of two", false},
		{"alignment 24", []KV{{AlignmentKey, uint32(24)}}, nil, "gguf: key general.alignment holds uint32 24, not a uint32 power of two", false},
		{"duplicate tensor", nil, []TensorSpec{f32("w", 1), f32("w", 1)}, "gguf: tensor w is given twice", false},
		{"5 dims", nil, []TensorSpec{f32("w", 1, 1, 1, 1, 1)}, "gguf: tensor w has shape [1 1 1 1 1], more than GGML's 4 dims", false},
		{"negative dim", nil, []TensorSpec{{Name: "w", Shape: []int64{-1}, Type: F32, Data: []float32{}}}, "gguf: tensor w has shape [-1] with a negative dim", false},
		{"overflow", nil, []TensorSpec{{Name: "w", Shape: []int64{1 << 40, 1 << 40}, Type: F32, Raw: []byte{}}}, "gguf: tensor w has shape [1099511627776 1099511627776], whose element count overflows an int64", false},
		{"partial block", nil, []TensorSpec{{Name: "w", Shape: []int64{32, 16}, Type: Q8_0, Data: make([]float32, 512)}}, "gguf: tensor w has shape [32 16], whose rows of 16 are not a whole number of Q8_0 blocks of 32", false},
		{"unknown type", nil, []TensorSpec{{Name: "w", Shape: []int64{1}, Type: 99, Raw: []byte{0}}}, "gguf: tensor w has unknown type 99", false},
		{"no data", nil, []TensorSpec{{Name: "w", Shape: []int64{1}, Type: F32}}, "gguf: tensor w needs exactly one of Data, Source and Raw, not 0", false},
		{"two sources", nil, []TensorSpec{{Name: "w", Shape: []int64{1}, Type: F32, Data: []float32{1}, Raw: []byte{0, 0, 0, 0}}}, "gguf: tensor w needs exactly one of Data, Source and Raw, not 2", false},
		{"raw size", nil, []TensorSpec{{Name: "w", Shape: []int64{32}, Type: Q4_0, Raw: make([]byte, 17)}}, "gguf: tensor w has 17 raw bytes, but shape [32] of Q4_0 takes 18", false},
		{"cannot quantize", nil, []TensorSpec{{Name: "w", Shape: []int64{256}, Type: Q4_K, Data: make([]float32, 256)}}, "gguf: tensor w has type Q4_K (12), which ragen cannot quantize to (it writes F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1; give Raw bytes for others)", false},
		{"data length", nil, []TensorSpec{{Name: "w", Shape: []int64{2, 2}, Type: F32, Data: make([]float32, 3)}}, "gguf: tensor w has 3 elements of data, but shape [2 2] holds 4", false},
		{"source length", nil, []TensorSpec{{Name: "w", Shape: []int64{2}, Type: F32, Source: func() ([]float32, error) { return make([]float32, 3), nil }}}, "gguf: tensor w's Source gave 3 elements, but shape [2] holds 2", true},
		{"source error", nil, []TensorSpec{{Name: "w", Shape: []int64{2}, Type: F32, Source: func() ([]float32, error) { return nil, boom }}}, "gguf: tensor w: boom", true},
	}
	for _, c := range cases {
		var buf bytes.Buffer
		err := Write(&buf, c.meta, c.tensors)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
			continue
		}
		checkSentence(t, err, "")
		if !c.written && buf.Len() != 0 {
			t.Errorf("%s: wrote %d bytes before failing", c.name, buf.Len())
		}
	}
}

// failingWriter fails after n bytes.
type failingWriter struct{ n int }

func (w *failingWriter) Write(b []byte) (int, error) {
	if len(b) > w.n {
		k := w.n
		w.n = 0
		return k, errors.New("disk full")
	}
	w.n -= len(b)
	return len(b), nil
}

// TestWriteIOError: an error of the writer is returned, wrapped.
func TestWriteIOError(t *testing.T) {
	err := Write(&failingWriter{n: 10}, everyValue(), []TensorSpec{{Name: "w", Shape: []int64{1 << 20}, Type: F32, Data: make([]float32, 1<<20)}})
	if err == nil || err.Error() != "gguf: writing: disk full" {
		t.Errorf("got %v", err)
	}
}
