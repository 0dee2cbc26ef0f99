package gguf

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

// everyValue is metadata with every GGUF value type, extremes included.
func everyValue() []KV {
	return []KV{
		{"general.architecture", "llama"},
		{"u8", uint8(255)},
		{"i8", int8(-128)},
		{"u16", uint16(65535)},
		{"i16", int16(-32768)},
		{"u32", uint32(math.MaxUint32)},
		{"i32", int32(math.MinInt32)},
		{"f32", float32(1e-5)},
		{"bool", true},
		{"string", "héllo, 世界"},
		{"empty string", ""},
		{"u64", uint64(math.MaxUint64)},
		{"i64", int64(math.MinInt64)},
		{"f64", -math.SmallestNonzeroFloat64},
		{"a.u8", []uint8{0, 1, 255}},
		{"a.i8", []int8{-128, 127}},
		{"a.u16", []uint16{65535}},
		{"a.i16", []int16{-32768, 1}},
		{"a.u32", []uint32{0, math.MaxUint32}},
		{"a.i32", []int32{math.MinInt32, math.MaxInt32}},
		{"a.f32", []float32{0.5, float32(math.Inf(-1))}},
		{"a.bool", []bool{true, false}},
		{"a.string", []string{"", "a", "<|im_end|>"}},
		{"a.u64", []uint64{math.MaxUint64}},
		{"a.i64", []int64{math.MinInt64, math.MaxInt64}},
		{"a.f64", []float64{0.1, math.MaxFloat64}},
		{"a.empty", []int32{}},
	}
}

// randomFloats is n normal floats.
func randomFloats(seed uint64, n int) []float32 {
	rng := rand.New(rand.NewPCG(seed, 1))
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	return x
}

// TestRoundTrip writes a file with every metadata value type and a tensor
// of every type Write quantizes to (from Data and from Source), raw
// K-quant and unreadable-type tensors, and odd shapes, then parses it:
// the metadata, dims and bytes come back as written and each tensor
// dequantizes as Dequantize(Quantize(data)) does.
func TestRoundTrip(t *testing.T) {
	meta := everyValue()
	var specs []TensorSpec
	for i, typ := range quantizable {
		x := randomFloats(uint64(i), 2*3*64)
		specs = append(specs, TensorSpec{Name: "data." + typ.String(), Shape: []int64{2, 3, 64}, Type: typ, Data: x})
		specs = append(specs, TensorSpec{Name: "source." + typ.String(), Shape: []int64{6, 64}, Type: typ,
			Source: func() ([]float32, error) { return x, nil }})
	}
	rng := rand.New(rand.NewPCG(9, 9))
	for _, typ := range []Type{Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q8_K, IQ2_XXS, I32} {
		b := make([]byte, 4*typ.TypeSize())
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		specs = append(specs, TensorSpec{Name: "raw." + typ.String(), Shape: []int64{2, 2 * int64(typ.BlockSize())}, Type: typ, Raw: b})
	}
	specs = append(specs,
		TensorSpec{Name: "scalar", Shape: nil, Type: F32, Data: []float32{42}},
		TensorSpec{Name: "empty", Shape: []int64{0, 32}, Type: Q8_0, Data: []float32{}},
		TensorSpec{Name: "4d", Shape: []int64{1, 2, 3, 4}, Type: F16, Data: randomFloats(7, 24)},
	)

	var buf bytes.Buffer
	if err := Write(&buf, meta, specs); err != nil {
		t.Fatal(err)
	}
	f := mustParse(t, buf.Bytes())
	if f.Version != 3 || f.Alignment != DefaultAlignment || f.DataOffset%DefaultAlignment != 0 {
		t.Errorf("version %d, alignment %d, data at %d", f.Version, f.Alignment, f.DataOffset)
	}
	if !reflect.DeepEqual(f.Meta, meta) {
		t.Errorf("metadata differs:\n got %v\nwant %v", f.Meta, meta)
	}
	if len(f.Tensors) != len(specs) {
		t.Fatalf("%d tensors, wrote %d", len(f.Tensors), len(specs))
	}
	for i, s := range specs {
		tt := f.Tensors[i]
		dims := slices.Clone(s.Shape)
		slices.Reverse(dims)
		if tt.Name != s.Name || tt.Type != s.Type || !slices.Equal(tt.Shape(), s.Shape) || !slices.Equal(tt.Dims, dims) || tt.Offset%DefaultAlignment != 0 {
			t.Errorf("tensor %d: %s %v shape %v dims %v at %d, wrote %s %v %v", i, tt.Name, tt.Type, tt.Shape(), tt.Dims, tt.Offset, s.Name, s.Type, s.Shape)
		}
		data := s.Data
		if s.Source != nil {
			data, _ = s.Source()
		}
		want := s.Raw
		if s.Raw == nil {
			want, _ = Quantize(s.Type, data)
		}
		if !bytes.Equal(tt.Bytes(), want) || int64(len(want)) != tt.Size {
			t.Errorf("%s: bytes differ", s.Name)
		}
		got, err := tt.Float32()
		if !s.Type.CanDequantize() {
			if !errors.Is(err, ErrUnsupported) {
				t.Errorf("%s: Float32 gave %v", s.Name, err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		deq, _ := Dequantize(s.Type, want, int(tt.Elements()))
		if !sameBits(got, deq) { // random raw blocks may hold NaN scales
			t.Errorf("%s: Float32 differs from Dequantize", s.Name)
		}
		if s.Type == F32 && !slices.Equal(got, data) {
			t.Errorf("%s: F32 does not round-trip", s.Name)
		}
	}
}

// sameBits reports whether a and b hold the same float32 bit patterns.
func sameBits(a, b []float32) bool {
	return slices.EqualFunc(a, b, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
}

// TestAlignment: general.alignment sets the padding of the header and of
// each tensor.
func TestAlignment(t *testing.T) {
	for _, align := range []uint32{1, 8, 64, 4096} {
		var buf bytes.Buffer
		specs := []TensorSpec{
			{Name: "a", Shape: []int64{3}, Type: F32, Data: []float32{1, 2, 3}},
			{Name: "b", Shape: []int64{1}, Type: F16, Data: []float32{4}},
			{Name: "c", Shape: []int64{2}, Type: F32, Data: []float32{5, 6}},
		}
		if err := Write(&buf, []KV{{AlignmentKey, align}}, specs); err != nil {
			t.Fatal(err)
		}
		f := mustParse(t, buf.Bytes())
		a := int64(align)
		if f.Alignment != a || f.DataOffset%a != 0 || f.Tensors[1].Offset != alignUp(12, a) || f.Tensors[2].Offset != alignUp(alignUp(12, a)+2, a) {
			t.Errorf("alignment %d: data at %d, offsets %d %d", align, f.DataOffset, f.Tensors[1].Offset, f.Tensors[2].Offset)
		}
		if len(buf.Bytes())%int(a) != 0 {
			t.Errorf("alignment %d: file of %d bytes is not padded", align, buf.Len())
		}
		if got, _ := f.Float32("c"); !slices.Equal(got, []float32{5, 6}) {
			t.Errorf("alignment %d: c = %v", align, got)
		}
	}
}

// TestWriteFileOpen writes a file atomically and opens it (memory-mapped):
// the contents match, the file is world-readable, no temporary file is
// left, and after Close the data are gone but the metadata remain.
func TestWriteFileOpen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.gguf")
	x := randomFloats(1, 64)
	specs := []TensorSpec{{Name: "w", Shape: []int64{2, 32}, Type: Q8_0, Data: x}}
	for range 2 { // the second replaces the first
		if err := WriteFile(path, everyValue(), specs); err != nil {
			t.Fatal(err)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("folder holds %d entries, want only m.gguf", len(entries))
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("stat: %v, %v", fi.Mode(), err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.Float32("w")
	q, _ := Quantize(Q8_0, x)
	want, _ := Dequantize(Q8_0, q, 64)
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("Float32: %v", err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if f.Tensors[0].Bytes() != nil {
		t.Error("Bytes after Close is not nil")
	}
	if _, err := f.Float32("w"); err == nil {
		t.Error("Float32 after Close succeeded")
	} else {
		checkSentence(t, err, path)
	}
	if s, err := f.String("general.architecture"); s != "llama" || err != nil {
		t.Errorf("metadata after Close: %q, %v", s, err)
	}
	if err := f.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestWriteFileError: a failed WriteFile leaves no file behind, neither
// the target nor a temporary.
func TestWriteFileError(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.gguf")
	boom := errors.New("boom")
	specs := []TensorSpec{{Name: "w", Shape: []int64{1}, Type: F32, Source: func() ([]float32, error) { return nil, boom }}}
	err := WriteFile(path, nil, specs)
	if !errors.Is(err, boom) {
		t.Fatalf("got %v", err)
	}
	checkSentence(t, err, path)
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("folder holds %v", entries)
	}
}

// TestOpenReadFallback opens a file that cannot be mapped (a pipe), which
// Open reads instead, and files that do not parse or do not exist.
func TestOpenReadFallback(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, everyValue(), []TensorSpec{{Name: "w", Shape: []int64{2}, Type: F32, Data: []float32{1, 2}}}); err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Skip(err)
	}
	defer r.Close()
	pipe := "/proc/self/fd/" + itoa(uint64(r.Fd()))
	if _, err := os.Stat(pipe); err != nil {
		t.Skip("no /proc: ", err)
	}
	go func() { w.Write(buf.Bytes()); w.Close() }()
	f, err := Open(pipe)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := f.Float32("w"); !slices.Equal(got, []float32{1, 2}) || len(f.Meta) != len(everyValue()) {
		t.Errorf("read through a pipe: %v", got)
	}
	f.Close()

	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.gguf")
	os.WriteFile(empty, nil, 0o644)
	if _, err := Open(empty); err == nil {
		t.Error("empty file opened")
	} else {
		checkSentence(t, err, empty)
	}
	missing := filepath.Join(dir, "missing.gguf")
	if _, err := Open(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	} else {
		checkSentence(t, err, missing)
	}
}
