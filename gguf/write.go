package gguf

import (
	"bufio"
	"encoding/binary"
	"io"
	"math"
	"slices"
)

// writeVersion is the GGUF version Write produces.
const writeVersion = 3

// TensorSpec is a tensor for Write. Exactly one of Data, Source and Raw
// gives its contents.
type TensorSpec struct {
	// Name is the tensor's name, unique in the file.
	Name string
	// Shape is the row-major (PyTorch) shape, at most 4 dims; the last dim
	// must be a whole number of Type's blocks. The file stores it
	// reversed, as GGUF dims.
	Shape []int64
	// Type is the encoding to store. With Data or Source it must be one
	// that Quantize produces.
	Type Type
	// Data are the elements, row-major, to be quantized to Type.
	Data []float32
	// Source returns the elements when the tensor is written, so that a
	// large model is quantized one tensor at a time.
	Source func() ([]float32, error)
	// Raw is data already encoded as Type, written as is.
	Raw []byte
}

// Write writes a GGUF version 3 file to w: the metadata in the order
// given, the tensor infos, then each tensor's data at offsets aligned to
// general.alignment (a uint32 in meta) or DefaultAlignment. It checks
// everything it can before writing the first byte, so that only an
// error from w or from a Source leaves a partial file.
func Write(w io.Writer, meta []KV, tensors []TensorSpec) error {
	return write(w, "", meta, tensors)
}

// plan is a checked tensor: its GGUF dims, size and data offset.
type plan struct {
	dims   []int64
	elems  int64
	size   int64
	offset int64
}

// write is Write, naming the file in messages (WriteFile's path).
func write(w io.Writer, name string, meta []KV, tensors []TensorSpec) error {
	align, err := checkMeta(name, meta)
	if err != nil {
		return err
	}
	plans, err := planTensors(name, tensors, align)
	if err != nil {
		return err
	}
	cw := &countingWriter{w: bufio.NewWriterSize(w, 1<<20)}
	writeHeader(cw, meta, tensors, plans)
	cw.pad(align)
	for i := range tensors {
		if cw.err != nil {
			break // spare the remaining Sources
		}
		if err := writeTensor(cw, name, &tensors[i], plans[i]); err != nil {
			return err
		}
		cw.pad(align)
	}
	if cw.err == nil {
		cw.err = cw.w.Flush()
	}
	if cw.err != nil {
		return newError(name, nil, "writing: %w", cw.err)
	}
	return nil
}

// checkMeta checks keys and value types and returns the alignment.
func checkMeta(name string, meta []KV) (int64, error) {
	align := int64(DefaultAlignment)
	seen := make(map[string]bool, len(meta))
	for _, kv := range meta {
		if seen[kv.Key] {
			return 0, newError(name, ErrMalformed, "metadata key %s is given twice", show(kv.Key))
		}
		seen[kv.Key] = true
		if _, _, ok := typeOf(kv.Value); !ok {
			return 0, newError(name, ErrUnsupported, "key %s has Go type %T, which has no GGUF type (use a sized integer, float32/64, bool, string or a slice of one)", show(kv.Key), kv.Value)
		}
		if kv.Key == AlignmentKey {
			a, ok := kv.Value.(uint32)
			if !ok || a == 0 || a&(a-1) != 0 {
				return 0, newError(name, ErrMalformed, "key %s holds %s, not a uint32 power of two", AlignmentKey, describe(kv.Value))
			}
			align = int64(a)
		}
	}
	return align, nil
}

// planTensors checks each tensor and lays out the data section.
func planTensors(name string, tensors []TensorSpec, align int64) ([]plan, error) {
	plans := make([]plan, len(tensors))
	seen := make(map[string]bool, len(tensors))
	offset := int64(0)
	for i := range tensors {
		t := &tensors[i]
		if seen[t.Name] {
			return nil, newError(name, ErrMalformed, "tensor %s is given twice", show(t.Name))
		}
		seen[t.Name] = true
		p, err := planTensor(name, t)
		if err != nil {
			return nil, err
		}
		p.offset = offset
		if p.size > math.MaxInt64-offset-align {
			return nil, newError(name, ErrMalformed, "tensor %s ends beyond the largest file size", show(t.Name))
		}
		offset = alignUp(offset+p.size, align)
		plans[i] = p
	}
	return plans, nil
}

// planTensor checks one tensor's shape, type and contents and computes
// its dims and size.
func planTensor(name string, t *TensorSpec) (plan, error) {
	fail := func(format string, args ...any) (plan, error) {
		return plan{}, newError(name, ErrMalformed, "tensor %s "+format, append([]any{show(t.Name)}, args...)...)
	}
	if !t.Type.Known() {
		return plan{}, newError(name, ErrUnsupported, "tensor %s has unknown type %d", show(t.Name), uint32(t.Type))
	}
	if len(t.Shape) > maxDims {
		return fail("has shape %v, more than GGML's %d dims", t.Shape, maxDims)
	}
	if slices.ContainsFunc(t.Shape, func(d int64) bool { return d < 0 }) {
		return fail("has shape %v with a negative dim", t.Shape)
	}
	n, ok := elementCount(t.Shape)
	if !ok {
		return fail("has shape %v, whose element count overflows an int64", t.Shape)
	}
	bs, ts := int64(t.Type.BlockSize()), int64(t.Type.TypeSize())
	row := int64(1)
	if len(t.Shape) > 0 {
		row = t.Shape[len(t.Shape)-1]
	}
	if row%bs != 0 {
		return fail("has shape %v, whose rows of %d are not a whole number of %s blocks of %d", t.Shape, row, t.Type, bs)
	}
	if n/bs > math.MaxInt64/ts {
		return fail("has shape %v, whose byte size overflows an int64", t.Shape)
	}
	size := n / bs * ts
	given := 0
	for _, set := range []bool{t.Data != nil, t.Source != nil, t.Raw != nil} {
		if set {
			given++
		}
	}
	switch {
	case given != 1:
		return fail("needs exactly one of Data, Source and Raw, not %d", given)
	case t.Raw != nil && int64(len(t.Raw)) != size:
		return fail("has %d raw bytes, but shape %v of %s takes %d", len(t.Raw), t.Shape, t.Type, size)
	case t.Raw == nil && !t.Type.CanQuantize():
		return plan{}, newError(name, ErrUnsupported, "tensor %s has type %s, which ragen cannot quantize to (it writes %s; give Raw bytes for others)", show(t.Name), t.Type.describe(), typeList(quantizable))
	case t.Data != nil && int64(len(t.Data)) != n:
		return fail("has %d elements of data, but shape %v holds %d", len(t.Data), t.Shape, n)
	}
	dims := slices.Clone(t.Shape)
	slices.Reverse(dims)
	return plan{dims: dims, elems: n, size: size}, nil
}

// writeHeader writes the magic, version, counts, metadata and tensor
// infos.
func writeHeader(cw *countingWriter, meta []KV, tensors []TensorSpec, plans []plan) {
	cw.write([]byte(magic))
	cw.u32(writeVersion)
	cw.u64(uint64(len(tensors)))
	cw.u64(uint64(len(meta)))
	for _, kv := range meta {
		cw.str(kv.Key)
		t, _, _ := typeOf(kv.Value)
		cw.u32(uint32(t))
		writeValue(cw, kv.Value)
	}
	for i, t := range tensors {
		cw.str(t.Name)
		cw.u32(uint32(len(plans[i].dims)))
		for _, d := range plans[i].dims {
			cw.u64(uint64(d))
		}
		cw.u32(uint32(t.Type))
		cw.u64(uint64(plans[i].offset))
	}
}

// writeTensor writes one tensor's data, quantizing it when it is floats.
func writeTensor(cw *countingWriter, name string, t *TensorSpec, p plan) error {
	if t.Raw != nil {
		cw.write(t.Raw)
		return nil
	}
	data := t.Data
	if t.Source != nil {
		var err error
		if data, err = t.Source(); err != nil {
			return newError(name, nil, "tensor %s: %w", show(t.Name), err)
		}
		if int64(len(data)) != p.elems {
			return newError(name, ErrMalformed, "tensor %s's Source gave %d elements, but shape %v holds %d", show(t.Name), len(data), t.Shape, p.elems)
		}
	}
	out := make([]byte, p.size)
	quantInto(t.Type, out, data)
	cw.write(out)
	return nil
}

// countingWriter writes little-endian values, counting the bytes and
// keeping the first error so that the header code needs no checks.
type countingWriter struct {
	w   *bufio.Writer
	n   int64
	err error
	buf [8]byte
}

func (c *countingWriter) write(b []byte) {
	if c.err != nil {
		return
	}
	n, err := c.w.Write(b)
	c.n += int64(n)
	c.err = err
}

func (c *countingWriter) u8(v uint8) { c.write([]byte{v}) }

func (c *countingWriter) u16(v uint16) {
	binary.LittleEndian.PutUint16(c.buf[:], v)
	c.write(c.buf[:2])
}

func (c *countingWriter) u32(v uint32) {
	binary.LittleEndian.PutUint32(c.buf[:], v)
	c.write(c.buf[:4])
}

func (c *countingWriter) u64(v uint64) {
	binary.LittleEndian.PutUint64(c.buf[:], v)
	c.write(c.buf[:8])
}

func (c *countingWriter) str(s string) {
	c.u64(uint64(len(s)))
	if c.err == nil {
		n, err := c.w.WriteString(s)
		c.n += int64(n)
		c.err = err
	}
}

// pad writes zeros up to the next multiple of align.
func (c *countingWriter) pad(align int64) {
	var zeros [64]byte
	for k := alignUp(c.n, align) - c.n; k > 0 && c.err == nil; {
		n := min(k, int64(len(zeros)))
		c.write(zeros[:n])
		k -= n
	}
}
