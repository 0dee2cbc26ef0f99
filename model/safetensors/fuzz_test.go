package safetensors

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// FuzzParseHeader: no file contents make the header parser panic, and a
// header it accepts lays its tensors out exactly over the data buffer, each
// the size its dtype and shape need, its names sorted and unique.
func FuzzParseHeader(f *testing.F) {
	path := filepath.Join(f.TempDir(), "seed.safetensors")
	if err := Write(path, []Tensor{
		{Name: "b", DType: BF16, Shape: []int64{1, 2}, Data: []byte{0x80, 0x3F, 0x00, 0xC0}},
		{Name: "a", DType: F32, Shape: []int64{2}, Data: f32le(1, 2)},
		{Name: "e", DType: F16, Shape: []int64{0, 3}},
	}, map[string]string{"format": "pt"}); err != nil {
		f.Fatal(err)
	}
	valid, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(valid)
	f.Add(valid[:len(valid)-3])
	f.Add(valid[:8])
	f.Add([]byte{})
	huge := slices.Clone(valid)
	binary.LittleEndian.PutUint64(huge, 1<<62)
	f.Add(huge)
	for _, h := range []string{
		`{}`, `[]`, `{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`,
		`{"a":{"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,4]}}`,
		`{"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}`,
		`{"a":{"dtype":"F32","shape":[1],"data_offsets":[4,0]}}`,
		`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`,
		`{"__metadata__":{"k":1}}`, `{"__metadata__":null,"x":null}`, "{\"a\":{\"dtype\":\"\xff\"}}",
	} {
		f.Add(rawFile(h, f32le(1, 2)))
	}
	f.Fuzz(func(t *testing.T, buf []byte) {
		h, err := parseHeader(buf)
		if err != nil {
			return
		}
		dataLen := int64(len(buf)) - h.dataStart
		if h.dataStart < 8 || dataLen < 0 {
			t.Fatalf("data starts at %d of %d bytes", h.dataStart, len(buf))
		}
		if !slices.IsSorted(h.names) || len(h.names) != len(h.tensors) {
			t.Fatalf("names %v for %d tensors", h.names, len(h.tensors))
		}
		var covered int64
		for _, n := range h.names {
			info := h.tensors[n]
			size, err := byteSize(info.DType, info.Shape)
			if err != nil || size != info.End-info.Begin || info.Begin < 0 || info.End > dataLen {
				t.Fatalf("tensor %q: %+v (size %d, %v) in a %d-byte buffer", n, info, size, err, dataLen)
			}
			covered += size
		}
		if covered != dataLen {
			t.Fatalf("tensors cover %d of %d bytes", covered, dataLen)
		}
	})
}

// FuzzOpenIndex: no model.safetensors.index.json makes OpenDir panic or
// read outside its folder, and a checkpoint it opens lists, sorted, exactly
// the tensors of the shards the index names, each readable.
func FuzzOpenIndex(f *testing.F) {
	dir := f.TempDir()
	if err := WriteSharded(dir, []Tensor{
		{Name: "model.embed_tokens.weight", DType: F32, Shape: []int64{2, 2}, Data: f32le(1, 2, 3, 4)},
		{Name: "model.norm.weight", DType: F32, Shape: []int64{2}, Data: f32le(1, 1)},
		{Name: "lm_head.weight", DType: BF16, Shape: []int64{1}, Data: []byte{0x80, 0x3F}},
	}, 16, map[string]string{"format": "pt"}); err != nil {
		f.Fatal(err)
	}
	indexPath := filepath.Join(dir, IndexFileName)
	index, err := os.ReadFile(indexPath)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(index)
	f.Add([]byte(`{"metadata": {"total_size": 26}, "weight_map": {"model.norm.weight": "model-00002-of-00002.safetensors"}}`))
	f.Add([]byte(`{"weight_map": {"x": "../model-00001-of-00002.safetensors"}}`))
	f.Add([]byte(`{"weight_map": {"x": "."}}`))
	f.Add([]byte(`{"weight_map": {}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := openIndexed(dir, indexPath, data)
		if err != nil {
			return
		}
		defer c.Close()
		names := c.Names()
		if !slices.IsSorted(names) || len(names) == 0 {
			t.Fatalf("names %v", names)
		}
		listed := 0
		for _, p := range c.Files() {
			if filepath.Dir(p) != dir {
				t.Fatalf("opened %s, outside %s", p, dir)
			}
			sf, err := Open(p)
			if err != nil {
				t.Fatal(err)
			}
			listed += len(sf.Names())
			sf.Close()
		}
		if listed != len(names) {
			t.Fatalf("the shards hold %d tensors, the checkpoint lists %d", listed, len(names))
		}
		for _, n := range names {
			if _, err := c.Bytes(n); err != nil {
				t.Fatalf("tensor %q: %v", n, err)
			}
		}
	})
}
