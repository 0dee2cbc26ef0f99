package safetensors

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// rawFile assembles a safetensors file from a header and a data buffer,
// without the writer, so that the reader is tested against the spec.
func rawFile(header string, data []byte) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, uint64(len(header)))
	b.WriteString(header)
	b.Write(data)
	return b.Bytes()
}

func writeRaw(t *testing.T, contents []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "x.safetensors")
	if err := os.WriteFile(path, contents, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func f32le(vals ...float32) []byte {
	b := make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

// TestWriteKnownLayout pins the exact bytes of a tiny file, laid out by hand
// from the format: header length, compact JSON with __metadata__ first and
// tensors sorted, space padding to a multiple of 8, then the data in order.
func TestWriteKnownLayout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "known.safetensors")
	tensors := []Tensor{
		{Name: "b", DType: BF16, Shape: []int64{1, 2}, Data: []byte{0x80, 0x3F, 0x00, 0xC0}}, // 1, -2
		{Name: "a", DType: F32, Shape: []int64{2}, Data: f32le(1, 2)},
	}
	if err := Write(path, tensors, map[string]string{"format": "pt"}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	json := `{"__metadata__":{"format":"pt"},` +
		`"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},` +
		`"b":{"dtype":"BF16","shape":[1,2],"data_offsets":[8,12]}}`
	if len(json) != 142 {
		t.Fatalf("test header is %d bytes, expected 142", len(json))
	}
	want := []byte{144, 0, 0, 0, 0, 0, 0, 0} // 142 padded to 144
	want = append(want, json+"  "...)
	want = append(want, 0, 0, 0x80, 0x3F, 0, 0, 0, 0x40) // a = 1, 2
	want = append(want, 0x80, 0x3F, 0x00, 0xC0)          // b
	if !bytes.Equal(got, want) {
		t.Errorf("file bytes\n got %q\nwant %q", got, want)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", st.Mode().Perm())
	}
}

func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rt.safetensors")
	vals := []float32{1, -1.5, 3.140625, 1e-3, -65504, 0, 7, 2.5e-7}
	var tensors []Tensor
	exacts := map[DType][]float32{}
	for _, d := range []DType{BF16, F16, F32} {
		exact := make([]float32, len(vals))
		for i, v := range vals { // values the dtype holds exactly
			switch d {
			case BF16:
				exact[i] = BF16ToFloat32(Float32ToBF16(v))
			case F16:
				exact[i] = F16ToFloat32(Float32ToF16(v))
			default:
				exact[i] = v
			}
		}
		exacts[d] = exact
		b, _ := EncodeFloat32(d, exact)
		tensors = append(tensors, Tensor{Name: "w." + string(d), DType: d, Shape: []int64{2, 4}, Data: b})
	}
	tensors = append(tensors,
		Tensor{Name: "ids", DType: I64, Shape: []int64{3}, Data: bytes.Repeat([]byte{1, 2, 3, 4, 5, 6, 7, 8}, 3)},
		Tensor{Name: "empty", DType: F32, Shape: []int64{0, 5}, Data: nil},
		Tensor{Name: "scalar", DType: F32, Shape: []int64{}, Data: f32le(42)},
		Tensor{Name: "lazy", DType: U8, Shape: []int64{3}, Source: func() ([]byte, error) { return []byte{9, 8, 7}, nil }},
	)
	meta := map[string]string{"format": "pt", "note": "<&>"}
	if err := Write(path, tensors, meta); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	wantNames := []string{"empty", "ids", "lazy", "scalar", "w.BF16", "w.F16", "w.F32"}
	if !slices.Equal(f.Names(), wantNames) {
		t.Errorf("Names = %v, want %v", f.Names(), wantNames)
	}
	if m := f.Metadata(); len(m) != 2 || m["note"] != "<&>" || m["format"] != "pt" {
		t.Errorf("Metadata = %v", m)
	}
	for _, want := range tensors {
		info, err := f.Info(want.Name)
		if err != nil {
			t.Fatal(err)
		}
		if info.DType != want.DType || !slices.Equal(info.Shape, want.Shape) {
			t.Errorf("%s: info %+v", want.Name, info)
		}
		b, err := f.Bytes(want.Name)
		if err != nil {
			t.Fatal(err)
		}
		data := want.Data
		if want.Source != nil {
			data, _ = want.Source()
		}
		if !bytes.Equal(b, data) {
			t.Errorf("%s: bytes %v, want %v", want.Name, b, data)
		}
	}
	for _, d := range []DType{BF16, F16, F32} {
		got, err := f.Float32("w." + string(d))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, exacts[d]) {
			t.Errorf("Float32 of %s = %v, want %v", d, got, exacts[d])
		}
	}
	if _, err := f.Float32("ids"); err == nil || !strings.Contains(err.Error(), `"ids"`) {
		t.Errorf("Float32 of I64: err = %v", err)
	}
	if _, err := f.Bytes("nope"); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("Bytes of a missing tensor: err = %v", err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Bytes("ids"); err == nil {
		t.Error("Bytes after Close succeeded")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

func TestWriteRejects(t *testing.T) {
	dir := t.TempDir()
	cases := map[string][]Tensor{
		"short data":   {{Name: "a", DType: F32, Shape: []int64{2}, Data: make([]byte, 4)}},
		"unknown type": {{Name: "a", DType: "F12", Shape: []int64{1}, Data: make([]byte, 2)}},
		"duplicate":    {{Name: "a", DType: U8, Shape: []int64{1}, Data: []byte{1}}, {Name: "a", DType: U8, Shape: []int64{1}, Data: []byte{1}}},
		"reserved":     {{Name: "__metadata__", DType: U8, Shape: []int64{1}, Data: []byte{1}}},
		"source size":  {{Name: "a", DType: U8, Shape: []int64{2}, Source: func() ([]byte, error) { return []byte{1}, nil }}},
	}
	for name, tensors := range cases {
		path := filepath.Join(dir, "bad.safetensors")
		err := Write(path, tensors, nil)
		if err == nil {
			t.Errorf("%s: Write succeeded", name)
			continue
		}
		if !strings.Contains(err.Error(), path) {
			t.Errorf("%s: error %q does not name the file", name, err)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("failed writes left files: %v", entries)
	}
}

func TestOpenErrors(t *testing.T) {
	good := `{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}}`
	data12 := make([]byte, 12)
	huge := make([]byte, 8)
	binary.LittleEndian.PutUint64(huge, 200_000_000)
	cases := []struct {
		name     string
		contents []byte
		want     string // a fragment of the error
	}{
		{"empty file", nil, "too short"},
		{"truncated data", rawFile(good, data12[:10]), `"b"`},
		{"truncated header", rawFile(good, data12)[:50], "runs past the end"},
		{"header too large", append(huge, "{}"...), "exceeds"},
		{"bad json", rawFile(`{"a":{"dtype":"F32",`, nil), "not valid JSON"},
		{"not an object", rawFile(`["a"]`, nil), "not a JSON object"},
		{"trailing garbage", rawFile(`{} x`, nil), "trailing"},
		{"unknown dtype", rawFile(`{"a":{"dtype":"F12","shape":[2],"data_offsets":[0,4]}}`, make([]byte, 4)), `"a": unknown dtype`},
		{"missing field", rawFile(`{"a":{"dtype":"F32","shape":[2]}}`, nil), `"a"`},
		{"shape mismatch", rawFile(`{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}`, make([]byte, 8)), `"a": shape [3] of F32 needs 12 bytes`},
		{"negative dim", rawFile(`{"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,0]}}`, nil), `"a"`},
		{"offsets out of range", rawFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}}`, make([]byte, 8)), `"a": data_offsets [8, 16] run past`},
		{"reversed offsets", rawFile(`{"a":{"dtype":"U8","shape":[0],"data_offsets":[8,0]}}`, make([]byte, 8)), `"a"`},
		{"three offsets", rawFile(`{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1,2]}}`, make([]byte, 1)), `"a"`},
		{"overlap", rawFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}`, data12), `"b" [4, 12) overlaps tensor "a"`},
		{"gap", rawFile(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}}`, data12), `"b" starts at 8`},
		{"leftover bytes", rawFile(good, make([]byte, 16)), "cover only 12"},
		{"duplicate name", rawFile(`{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}`, []byte{1}), `"a" appears twice`},
		{"bad metadata", rawFile(`{"__metadata__":{"n":1}}`, nil), "__metadata__"},
	}
	for _, c := range cases {
		path := writeRaw(t, c.contents)
		f, err := Open(path)
		if err == nil {
			f.Close()
			t.Errorf("%s: Open succeeded", c.name)
			continue
		}
		if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q should name %s and contain %q", c.name, err, path, c.want)
		}
	}
	// The same header is fine with the right data, and with space padding.
	for _, contents := range [][]byte{rawFile(good, data12), rawFile(good+"     ", data12)} {
		f, err := Open(writeRaw(t, contents))
		if err != nil {
			t.Fatalf("valid file: %v", err)
		}
		f.Close()
	}
	if _, err := Open(filepath.Join(t.TempDir(), "absent.safetensors")); err == nil {
		t.Error("Open of a missing file succeeded")
	}
}

// TestBytesIsAView checks that Bytes hands out the mapping itself: the same
// memory on every call, capped so that an append cannot write into it.
func TestBytesIsAView(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v.safetensors")
	if err := Write(path, []Tensor{{Name: "a", DType: F32, Shape: []int64{4}, Data: f32le(1, 2, 3, 4)}}, nil); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b1, _ := f.Bytes("a")
	b2, _ := f.Bytes("a")
	if &b1[0] != &b2[0] || cap(b1) != len(b1) {
		t.Errorf("Bytes copies (%p, %p) or leaves capacity %d > %d", &b1[0], &b2[0], cap(b1), len(b1))
	}
	if &b1[0] != &f.data[f.hdr.dataStart] {
		t.Error("Bytes is not a view of the mapping")
	}
}
