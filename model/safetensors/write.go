package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/ragen-go/ragen/internal/durable"
)

// Tensor is one tensor to write. Its bytes come from Source when that is
// set, else from Data.
type Tensor struct {
	Name  string
	DType DType
	Shape []int64
	Data  []byte // little-endian elements, row-major
	// Source, when not nil, produces the bytes at the moment the tensor is
	// written, so that an exporter can copy one tensor at a time out of
	// device memory. It is called once, and its result is not retained.
	Source func() ([]byte, error)
}

// size checks the tensor's name, dtype and, for Data, length, and returns
// its byte size.
func (t Tensor) size() (int64, error) {
	if t.Name == "" || t.Name == metadataKey {
		return 0, fmt.Errorf("tensor name %q is reserved or empty", t.Name)
	}
	n, err := byteSize(t.DType, t.Shape)
	if err != nil {
		return 0, fmt.Errorf("tensor %q: %w", t.Name, err)
	}
	if t.Source == nil && int64(len(t.Data)) != n {
		return 0, fmt.Errorf("tensor %q: shape %v of %s needs %d bytes, Data has %d", t.Name, t.Shape, t.DType, n, len(t.Data))
	}
	return n, nil
}

// bytes produces the tensor's data and checks its length.
func (t Tensor) bytes(want int64) ([]byte, error) {
	if t.Source == nil {
		return t.Data, nil
	}
	b, err := t.Source()
	if err != nil {
		return nil, fmt.Errorf("tensor %q: %w", t.Name, err)
	}
	if int64(len(b)) != want {
		return nil, fmt.Errorf("tensor %q: shape %v of %s needs %d bytes, Source gave %d", t.Name, t.Shape, t.DType, want, len(b))
	}
	return b, nil
}

// Write writes tensors to a safetensors file at path, as HuggingFace's
// writer lays it out: a compact JSON header with "__metadata__" first (when
// metadata is not empty), padded with spaces to a multiple of 8 bytes so the
// data buffer is aligned, then the data. Tensors are sorted by name, in the
// header and in the buffer. The file is written under a temporary name in
// the same folder and renamed into place, so path is either the old file or
// the complete new one.
//
// transformers refuses to load a checkpoint whose metadata lacks
// "format": "pt"; exporters for it should pass that.
func Write(path string, tensors []Tensor, metadata map[string]string) error {
	sorted := slices.Clone(tensors)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	sizes := make([]int64, len(sorted))
	for i, t := range sorted {
		n, err := t.size()
		if err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
		if i > 0 && t.Name == sorted[i-1].Name {
			return fmt.Errorf("writing %s: tensor %q given twice", path, t.Name)
		}
		sizes[i] = n
	}
	hdr := encodeHeader(sorted, sizes, metadata)
	err := writeAtomic(path, func(w io.Writer) error {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(hdr)))
		if _, err := w.Write(n[:]); err != nil {
			return err
		}
		if _, err := w.Write(hdr); err != nil {
			return err
		}
		for i, t := range sorted {
			b, err := t.bytes(sizes[i])
			if err != nil {
				return err
			}
			if _, err := w.Write(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// encodeHeader lays out the JSON header for tensors already sorted, with
// contiguous offsets, padded with spaces to a multiple of 8 bytes.
func encodeHeader(tensors []Tensor, sizes []int64, metadata map[string]string) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	if len(metadata) > 0 {
		b.WriteString(jsonString(metadataKey))
		b.WriteString(":{")
		for i, k := range slices.Sorted(maps.Keys(metadata)) {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(jsonString(k) + ":" + jsonString(metadata[k]))
		}
		b.WriteByte('}')
	}
	var off int64
	for i, t := range tensors {
		if i > 0 || len(metadata) > 0 {
			b.WriteByte(',')
		}
		dims := make([]string, len(t.Shape))
		for j, d := range t.Shape {
			dims[j] = strconv.FormatInt(d, 10)
		}
		fmt.Fprintf(&b, `%s:{"dtype":%s,"shape":[%s],"data_offsets":[%d,%d]}`,
			jsonString(t.Name), jsonString(string(t.DType)), strings.Join(dims, ","), off, off+sizes[i])
		off += sizes[i]
	}
	b.WriteByte('}')
	for b.Len()%8 != 0 {
		b.WriteByte(' ')
	}
	return b.Bytes()
}

// jsonString quotes s as JSON without Go's HTML escaping, as serde does.
func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// writeAtomic writes a file through fill with durable.Write: a crash
// leaves the old file or the new one, never a torn one.
func writeAtomic(path string, fill func(io.Writer) error) error {
	return durable.Write(path, 0o644, fill)
}
