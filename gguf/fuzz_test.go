package gguf

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
)

// fuzzSeeds are small valid files from the writer, with a tensor of every
// type ragen dequantizes, and broken variants of them: truncated, with
// counts, lengths, dims, types and offsets replaced by extremes.
func fuzzSeeds(t testing.TB) [][]byte {
	write := func(meta []KV, specs []TensorSpec) []byte {
		var buf bytes.Buffer
		if err := Write(&buf, meta, specs); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	var specs []TensorSpec
	for i, typ := range dequantizable {
		n := int64(typ.BlockSize())
		spec := TensorSpec{Name: "t." + typ.String(), Shape: []int64{2, n}, Type: typ}
		if typ.CanQuantize() {
			spec.Data = randomFloats(uint64(i), int(2*n))
		} else {
			spec.Raw = bytes.Repeat([]byte{0x3c, 0x11, 0xa5, 0x5a}, 2*typ.TypeSize()/4+1)[:2*typ.TypeSize()]
		}
		specs = append(specs, spec)
	}
	seeds := [][]byte{
		write(everyValue(), specs),
		write(nil, nil),
		new(raw).header(2, 1, 1).kv("k", tUint8, func(r *raw) { r.u8(1) }).info("w", []uint64{2}, F32, 0).pad(32).f32(1).f32(2).Bytes(),
	}
	// A small file by hand, noting where its fields are.
	r := new(raw).header(3, 1, 2)
	keyLen := r.Len()
	r.kv("general.architecture", tString, func(r *raw) { r.str("llama") })
	r.kv(AlignmentKey, tUint32, func(r *raw) { r.u32(16) })
	info := r.Len()
	r.info("w", []uint64{32, 1}, Q8_0, 0).pad(16)
	data := r.Len()
	base := r.zeros(34).pad(16).Bytes()
	seeds = append(seeds, base)
	nDims, dim0, typ, offset := info+9, info+13, info+29, info+33
	for _, n := range []int{3, 10, 24, info, data - 1, data + 33} {
		seeds = append(seeds, base[:n])
	}
	// Overwrite a little-endian uint64 or uint32 at a header offset.
	put := func(off int, v uint64, size int) []byte {
		b := bytes.Clone(base)
		if size == 8 {
			binary.LittleEndian.PutUint64(b[off:], v)
		} else {
			binary.LittleEndian.PutUint32(b[off:], uint32(v))
		}
		return b
	}
	seeds = append(seeds,
		put(4, 3<<24, 4),             // big-endian version
		put(8, 1<<40, 8),             // tensor count
		put(16, 1<<40, 8),            // key count
		put(keyLen, 1<<62, 8),        // first key's length
		put(keyLen+8+20+4, 1<<60, 8), // the architecture string's length
		put(nDims, 5, 4),
		put(nDims, 1<<31, 4),
		put(dim0, 33, 8),             // not a whole block
		put(dim0, 1<<62, 8),          // overflows
		put(dim0+8, 2, 8),            // past the end of the file
		put(typ, 99, 4),              // unknown type
		put(typ, uint64(IQ2_XXS), 4), // rows shorter than its blocks
		put(offset, 7, 8),            // misaligned
		put(offset, 1<<62, 8),        // past the end
	)
	return seeds
}

// FuzzParse parses arbitrary bytes: Parse must return an error sentence
// or a File whose every readable tensor dequantizes to its element count;
// writing a parsed File back (tensors as raw bytes) must succeed and
// reproduce itself when parsed and written again.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse(data, "fuzz.gguf")
		if err != nil {
			msg := err.Error()
			if !strings.HasPrefix(msg, "gguf fuzz.gguf: ") || strings.ContainsAny(msg, "\n\r") {
				t.Fatalf("bad error: %q", msg)
			}
			return
		}
		for _, tt := range file.Tensors {
			if int64(len(tt.Bytes())) != tt.Size {
				t.Fatalf("%s: %d bytes, size %d", tt.Name, len(tt.Bytes()), tt.Size)
			}
			x, err := tt.Float32()
			if tt.Type.CanDequantize() != (err == nil) {
				t.Fatalf("%s of type %v: %v", tt.Name, tt.Type, err)
			}
			if err == nil && int64(len(x)) != tt.Elements() {
				t.Fatalf("%s: %d values, %d elements", tt.Name, len(x), tt.Elements())
			}
		}
		once := rewrite(t, file)
		twice := rewrite(t, mustParse(t, once))
		if !bytes.Equal(once, twice) {
			t.Fatal("writing a parsed file is not stable")
		}
	})
}

// rewrite writes f's metadata and tensors (as raw bytes) with Write.
func rewrite(t *testing.T, f *File) []byte {
	specs := make([]TensorSpec, len(f.Tensors))
	for i, tt := range f.Tensors {
		specs[i] = TensorSpec{Name: tt.Name, Shape: tt.Shape(), Type: tt.Type, Raw: tt.Bytes()}
	}
	var buf bytes.Buffer
	if err := Write(&buf, f.Meta, specs); err != nil {
		t.Fatalf("writing a parsed file: %v", err)
	}
	return buf.Bytes()
}

// TestFuzzSeeds checks that the seeds are what they claim: the first four
// parse, the broken ones do not.
func TestFuzzSeeds(t *testing.T) {
	for i, s := range fuzzSeeds(t) {
		_, err := Parse(s, "seed.gguf")
		if (i < 4) != (err == nil) {
			t.Errorf("seed %d: %v", i, err)
		}
	}
}
