package safetensors

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// stateDict is five F32 tensors of 16, 32, 48, 64 and 80 bytes, in the
// order given (not sorted), each filled with its own byte.
func stateDict() []Tensor {
	var ts []Tensor
	for i, name := range []string{"z.w", "a.w", "m.w", "b.w", "c.w"} {
		n := int64(4 * (i + 1))
		ts = append(ts, Tensor{Name: name, DType: F32, Shape: []int64{n}, Data: bytes.Repeat([]byte{byte(i + 1)}, int(4*n))})
	}
	return ts
}

func checkCheckpoint(t *testing.T, c *Checkpoint, tensors []Tensor) {
	t.Helper()
	var names []string
	for _, want := range tensors {
		names = append(names, want.Name)
		got, err := c.Bytes(want.Name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want.Data) {
			t.Errorf("%s: bytes differ", want.Name)
		}
		info, err := c.Info(want.Name)
		if err != nil || !slices.Equal(info.Shape, want.Shape) {
			t.Errorf("%s: info %+v, %v", want.Name, info, err)
		}
	}
	slices.Sort(names)
	if !slices.Equal(c.Names(), names) {
		t.Errorf("Names = %v, want %v", c.Names(), names)
	}
}

func TestShardedRoundTrip(t *testing.T) {
	dir := t.TempDir()
	tensors := stateDict()
	// 100-byte shards over 16, 32, 48, 64, 80: {z,a,m} = 96, {b} = 64 (b+c
	// = 144 > 100), {c} = 80.
	if err := WriteSharded(dir, tensors, 100, map[string]string{"format": "pt"}); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, IndexFileName))
	if err != nil {
		t.Fatal(err)
	}
	wantIndex := `{
  "metadata": {
    "total_size": 240
  },
  "weight_map": {
    "a.w": "model-00001-of-00003.safetensors",
    "b.w": "model-00002-of-00003.safetensors",
    "c.w": "model-00003-of-00003.safetensors",
    "m.w": "model-00001-of-00003.safetensors",
    "z.w": "model-00001-of-00003.safetensors"
  }
}
`
	if string(raw) != wantIndex {
		t.Errorf("index\n%s\nwant\n%s", raw, wantIndex)
	}
	c, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	checkCheckpoint(t, c, tensors)
	if len(c.Files()) != 3 {
		t.Errorf("Files = %v", c.Files())
	}
	f, err := Open(filepath.Join(dir, ShardFileName(1, 3)))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(f.Names(), []string{"a.w", "m.w", "z.w"}) || f.Metadata()["format"] != "pt" {
		t.Errorf("shard 1: names %v, metadata %v", f.Names(), f.Metadata())
	}
	f.Close()
	c.Close()

	// Saving again as one file removes the shards and the index.
	if err := WriteSharded(dir, tensors, 0, nil); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != SingleFileName {
		t.Errorf("after a single-file save the folder holds %v", entries)
	}
	c, err = OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	checkCheckpoint(t, c, tensors)
	c.Close()
}

func TestShardSplit(t *testing.T) {
	sizes := func(shards [][]Tensor) string {
		var s []string
		for _, sh := range shards {
			var names []string
			for _, t := range sh {
				names = append(names, t.Name)
			}
			s = append(s, strings.Join(names, "+"))
		}
		return strings.Join(s, " | ")
	}
	cases := []struct {
		max  int64
		want string
	}{
		{0, "z.w+a.w+m.w+b.w+c.w"},
		{240, "z.w+a.w+m.w+b.w+c.w"},
		{239, "z.w+a.w+m.w+b.w | c.w"},
		{100, "z.w+a.w+m.w | b.w | c.w"},
		// Tensors over the limit get their own shard at once, as in
		// huggingface_hub, ahead of the shard still being filled.
		{50, "z.w+a.w | b.w | c.w | m.w"},
	}
	for _, c := range cases {
		shards, total, err := splitShards(stateDict(), c.max)
		if err != nil {
			t.Fatal(err)
		}
		if got := sizes(shards); got != c.want || total != 240 {
			t.Errorf("max %d: %s (total %d), want %s", c.max, got, total, c.want)
		}
	}
}

func TestOpenDirErrors(t *testing.T) {
	write := func(t *testing.T, dir, name string, tensors ...Tensor) {
		t.Helper()
		if err := Write(filepath.Join(dir, name), tensors, nil); err != nil {
			t.Fatal(err)
		}
	}
	index := func(t *testing.T, dir string, weightMap map[string]string) {
		t.Helper()
		b, _ := json.Marshal(map[string]any{"metadata": map[string]any{"total_size": 8}, "weight_map": weightMap})
		if err := os.WriteFile(filepath.Join(dir, IndexFileName), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a := Tensor{Name: "a", DType: F32, Shape: []int64{1}, Data: make([]byte, 4)}
	b := Tensor{Name: "b", DType: F32, Shape: []int64{1}, Data: make([]byte, 4)}
	s1, s2 := ShardFileName(1, 2), ShardFileName(2, 2)
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string)
		want  []string // fragments of the error
	}{
		{"empty folder", func(t *testing.T, dir string) {}, []string{SingleFileName, IndexFileName}},
		{"missing shard", func(t *testing.T, dir string) {
			write(t, dir, s1, a)
			index(t, dir, map[string]string{"a": s1, "b": s2})
		}, []string{IndexFileName, `"b"`, s2}},
		{"tensor missing from shard", func(t *testing.T, dir string) {
			write(t, dir, s1, a)
			write(t, dir, s2, b)
			index(t, dir, map[string]string{"a": s1, "b": s2, "c": s2})
		}, []string{s2, `"c"`, "missing from the shard"}},
		{"extra shard tensor", func(t *testing.T, dir string) {
			write(t, dir, s1, a, b)
			index(t, dir, map[string]string{"a": s1})
		}, []string{s1, `"b" is not in`}},
		{"tensor in two shards", func(t *testing.T, dir string) {
			write(t, dir, s1, a, b)
			write(t, dir, s2, b)
			index(t, dir, map[string]string{"a": s1, "b": s2})
		}, []string{s1, `"b"`, "places it in " + s2}},
		{"shard outside folder", func(t *testing.T, dir string) {
			index(t, dir, map[string]string{"a": "../x.safetensors"})
		}, []string{`"a"`, "../x.safetensors"}},
		{"bad index", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, IndexFileName), []byte("{"), 0o644)
		}, []string{IndexFileName, "not a valid index"}},
		{"corrupt single file", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, SingleFileName), []byte("garbage!garbage!"), 0o644)
		}, []string{SingleFileName}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			c.setup(t, dir)
			ck, err := OpenDir(dir)
			if err == nil {
				ck.Close()
				t.Fatal("OpenDir succeeded")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}
