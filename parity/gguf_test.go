package parity

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/ragen-go/ragen/gguf"
)

// smolLM2 is a real GGUF model (Q4_1, Q8_0 and F32 tensors, a 49,152-token
// vocabulary), under the repository's model cache.
const smolLM2 = ".cache/models/SmolLM2-135M-Instruct.Q4_1.gguf"

// ggufTensor is a tensor as gguf_ref.py describes it.
type ggufTensor struct {
	Name, Type string
	Shape      []int64
	Src        bool   // write mode: NAME.src holds its float32 source
	Offset     int64  // read mode: absolute file offset of the data
	RawSHA256  string `json:"raw_sha256"`
	DeqSHA256  string `json:"deq_sha256"`
}

// ggufAnswer is gguf_ref.py's answer: metadata entries [key, type, element
// type, value], the tensors and, in read mode, its dequantization time.
type ggufAnswer struct {
	Meta    [][]json.RawMessage
	Tensors []ggufTensor
	Seconds float64
}

// TestGGUF holds package gguf to gguf-py, llama.cpp's own Python package,
// on a file gguf-py writes with metadata of every value type and a tensor
// of every type ragen reads (gguf_ref.py says what the data probe):
//   - Parse reads every key, type and value gguf-py's reader reads;
//   - dequantization is bit-identical to gguf.quants.dequantize for every
//     type: both compute in float32 with the same operations in the same
//     order (scale·level, then the offset), so no tolerance is needed;
//     NaNs (from the rows whose half scale overflows to Inf) match as NaN;
//   - Quantize gives byte for byte the blocks of gguf.quants.quantize for
//     F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0 and Q5_1 on the same floats,
//     ties, zero blocks, tiny and overflowing scales included;
//   - WriteFile, given that metadata and those floats (the K-quants as raw
//     blocks), writes a file identical to gguf-py's, byte for byte.
func TestGGUF(t *testing.T) {
	py := python(t)
	dir := t.TempDir()
	var ref ggufAnswer
	if err := runPython(py, script(t, "gguf_ref.py"), map[string]any{"mode": "write", "dir": dir, "seed": 1}, &ref); err != nil {
		t.Fatal(err)
	}
	refPath := filepath.Join(dir, "ref.gguf")
	f, err := gguf.Open(refPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	compareMeta(t, f, ref.Meta)

	var specs []gguf.TensorSpec
	for _, want := range ref.Tensors {
		tt, ok := f.Tensor(want.Name)
		if !ok {
			t.Fatalf("no tensor %s", want.Name)
		}
		if tt.Type.String() != want.Type || !slices.Equal(tt.Shape(), want.Shape) {
			t.Errorf("%s: type %v shape %v, gguf-py %s %v", want.Name, tt.Type, tt.Shape(), want.Type, want.Shape)
		}
		got, err := tt.Float32()
		if err != nil {
			t.Fatal(err)
		}
		compareBits(t, want.Name, got, readFloats(t, filepath.Join(dir, want.Name+".deq")))
		spec := gguf.TensorSpec{Name: tt.Name, Shape: tt.Shape(), Type: tt.Type, Raw: tt.Bytes()}
		if want.Src {
			src := readFloats(t, filepath.Join(dir, want.Name+".src"))
			q, err := gguf.Quantize(tt.Type, src)
			if err != nil {
				t.Fatal(err)
			}
			if i := firstByteDiff(q, tt.Bytes()); i >= 0 {
				t.Errorf("%s: Quantize differs from gguf.quants.quantize from byte %d of %d (block %d)", want.Name, i, len(q), i/tt.Type.TypeSize())
			}
			spec.Raw, spec.Source = nil, func() ([]float32, error) { return src, nil }
		}
		specs = append(specs, spec)
	}

	goPath := filepath.Join(dir, "go.gguf")
	if err := gguf.WriteFile(goPath, f.Meta, specs); err != nil {
		t.Fatal(err)
	}
	mine, theirs := readBytes(t, goPath), readBytes(t, refPath)
	if i := firstByteDiff(mine, theirs); i >= 0 {
		t.Errorf("WriteFile's file (%d bytes) differs from gguf-py's (%d bytes) from byte %d", len(mine), len(theirs), i)
	}
}

// TestGGUFModel reads a real model, SmolLM2-135M-Instruct in Q4_1, with
// package gguf and with gguf-py and compares the metadata (33 keys, the
// tokenizer's 49,152 tokens and 48,900 merges among them), each tensor's
// type, shape, offset and bytes, and its dequantization, bit for bit
// (through SHA-256). It logs the time Go takes to open and parse the file
// and dequantize every tensor, and gguf-py's time to dequantize them.
func TestGGUFModel(t *testing.T) {
	py := python(t)
	path := filepath.Join(filepath.Dir(script(t, "x")), "..", "..", smolLM2)
	if _, err := os.Stat(path); err != nil {
		t.Skipf("no model file: %v", err)
	}

	start := time.Now()
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	parsed := time.Since(start)
	deq := make([][]float32, len(f.Tensors))
	n := 0
	for i, tt := range f.Tensors {
		if deq[i], err = tt.Float32(); err != nil {
			t.Fatal(err)
		}
		n += len(deq[i])
	}
	total := time.Since(start)

	var ref ggufAnswer
	if err := runPython(py, script(t, "gguf_ref.py"), map[string]any{"mode": "read", "path": path}, &ref); err != nil {
		t.Fatal(err)
	}
	t.Logf("Go: parsed %d keys and %d tensors in %v; parsed and dequantized %d elements in %v; gguf-py dequantized them in %.2fs",
		len(f.Meta), len(f.Tensors), parsed.Round(time.Millisecond), n, total.Round(time.Millisecond), ref.Seconds)
	compareMeta(t, f, ref.Meta)
	if len(ref.Tensors) != len(f.Tensors) {
		t.Fatalf("%d tensors, gguf-py %d", len(f.Tensors), len(ref.Tensors))
	}
	for i, want := range ref.Tensors {
		tt := f.Tensors[i]
		if tt.Name != want.Name || tt.Type.String() != want.Type || !slices.Equal(tt.Shape(), want.Shape) || f.DataOffset+tt.Offset != want.Offset {
			t.Errorf("tensor #%d: %s %v %v at %d, gguf-py %s %s %v at %d", i, tt.Name, tt.Type, tt.Shape(), f.DataOffset+tt.Offset, want.Name, want.Type, want.Shape, want.Offset)
			continue
		}
		if got := sha(tt.Bytes()); got != want.RawSHA256 {
			t.Errorf("%s: bytes differ from gguf-py's", tt.Name)
		}
		if got := sha(floatBytes(deq[i])); got != want.DeqSHA256 {
			t.Errorf("%s: dequantization differs from gguf-py's", tt.Name)
		}
	}
}

// compareMeta compares the file's metadata with gguf-py's entries, in
// order: key, type name, element type name and value.
func compareMeta(t *testing.T, f *gguf.File, ref [][]json.RawMessage) {
	t.Helper()
	if len(f.Meta) != len(ref) {
		t.Errorf("%d metadata keys, gguf-py %d", len(f.Meta), len(ref))
	}
	for i := range min(len(f.Meta), len(ref)) {
		kv, entry := f.Meta[i], ref[i]
		var key, typ string
		var elem *string
		if len(entry) != 4 || json.Unmarshal(entry[0], &key) != nil || json.Unmarshal(entry[1], &typ) != nil || json.Unmarshal(entry[2], &elem) != nil {
			t.Fatalf("bad metadata entry %s", entry)
		}
		gotType, gotElem := valueTypeName(kv.Value)
		wantElem := ""
		if elem != nil {
			wantElem = *elem
		}
		if kv.Key != key || gotType != typ || gotElem != wantElem {
			t.Errorf("metadata #%d: %s %s %s, gguf-py %s %s %s", i, kv.Key, gotType, gotElem, key, typ, wantElem)
			continue
		}
		if err := sameValue(kv.Value, entry[3]); err != nil {
			t.Errorf("key %s: %v", kv.Key, err)
		}
	}
}

// valueTypeName is the gguf-py name of a KV.Value's type and element type.
func valueTypeName(v any) (typ, elem string) {
	rt := reflect.TypeOf(v)
	if rt.Kind() == reflect.Slice {
		e, _ := valueTypeName(reflect.Zero(rt.Elem()).Interface())
		return "ARRAY", e
	}
	names := map[reflect.Kind]string{
		reflect.Uint8: "UINT8", reflect.Int8: "INT8", reflect.Uint16: "UINT16", reflect.Int16: "INT16",
		reflect.Uint32: "UINT32", reflect.Int32: "INT32", reflect.Uint64: "UINT64", reflect.Int64: "INT64",
		reflect.Float32: "FLOAT32", reflect.Float64: "FLOAT64", reflect.Bool: "BOOL", reflect.String: "STRING",
	}
	return names[rt.Kind()], ""
}

// sameValue compares a Go value with gguf-py's JSON: integers as exact
// decimal text, floats as float64 (gguf-py widens float32 exactly too).
func sameValue(v any, raw json.RawMessage) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Slice {
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return err
		}
		if len(items) != rv.Len() {
			return fmt.Errorf("%d elements, gguf-py %d", rv.Len(), len(items))
		}
		for i := range items {
			if err := sameValue(rv.Index(i).Interface(), items[i]); err != nil {
				return fmt.Errorf("element %d: %w", i, err)
			}
		}
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var want any
	if err := dec.Decode(&want); err != nil {
		return err
	}
	var got any
	switch rv.Kind() {
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		got = json.Number(strconv.FormatInt(rv.Int(), 10))
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		got = json.Number(strconv.FormatUint(rv.Uint(), 10))
	case reflect.Float32, reflect.Float64:
		w, err := want.(json.Number).Float64()
		if err != nil || w != rv.Float() {
			return fmt.Errorf("%v, gguf-py %s", rv.Float(), raw)
		}
		return nil
	default:
		got = v
	}
	if got != want {
		return fmt.Errorf("%#v, gguf-py %s", v, raw)
	}
	return nil
}

// compareBits requires equal float32 bits, or NaN on both sides.
func compareBits(t *testing.T, name string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d values, gguf-py %d", name, len(got), len(want))
		return
	}
	for i := range got {
		g, w := got[i], want[i]
		if math.Float32bits(g) != math.Float32bits(w) && !(g != g && w != w) {
			t.Errorf("%s: value %d is %v (%#08x), gguf-py %v (%#08x)", name, i, g, math.Float32bits(g), w, math.Float32bits(w))
			return
		}
	}
}

func readBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// readFloats reads little-endian float32s.
func readFloats(t *testing.T, path string) []float32 {
	t.Helper()
	b := readBytes(t, path)
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// floatBytes is x as little-endian float32s.
func floatBytes(x []float32) []byte {
	b := make([]byte, 4*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

func sha(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// firstByteDiff is the first index where a and b differ, or -1 if they are
// equal.
func firstByteDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}
