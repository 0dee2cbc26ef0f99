package gguf

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
	"strconv"
)

// magic opens every GGUF file.
const magic = "GGUF"

// maxDims is GGML_MAX_DIMS: a tensor has at most 4 dims.
const maxDims = 4

// DefaultAlignment is the alignment of tensor data when the file has no
// general.alignment key.
const DefaultAlignment = 32

// AlignmentKey is the metadata key that sets the alignment (a uint32).
const AlignmentKey = "general.alignment"

// File is a parsed GGUF file. Its metadata and tensor infos are plain Go
// values, copied out of the file; the tensors' data are views into the
// bytes the File was parsed from (for Open, the memory map), valid until
// Close. Treat Meta and Tensors as read-only: the getters index them. A
// File is safe for concurrent use, Close excepted.
type File struct {
	// Name is the path or name the file was opened or parsed with; every
	// error message starts with it.
	Name string
	// Version is the GGUF version, 2 or 3.
	Version uint32
	// Alignment is the alignment of the tensor data, from general.alignment
	// or DefaultAlignment.
	Alignment int64
	// DataOffset is where the data section starts: the end of the header
	// rounded up to Alignment. Tensor offsets count from here.
	DataOffset int64
	// Meta is the metadata in the file's order.
	Meta []KV
	// Tensors are the tensor infos in the file's order.
	Tensors []*Tensor

	keys   map[string]int     // key -> index in Meta
	byName map[string]*Tensor // tensor name -> info
	data   []byte             // the whole file; nil after Close
	unmap  func() error       // releases data, for Open
}

// Tensor describes one tensor of a File.
type Tensor struct {
	// Name is the tensor's name, such as "blk.0.attn_q.weight".
	Name string
	// Dims are the tensor's dims in GGUF's order: Dims[0] (ne[0]) varies
	// fastest. Shape gives them in row-major order.
	Dims []int64
	// Type is the encoding of the elements.
	Type Type
	// Offset is where the data starts, counted from File.DataOffset.
	Offset int64
	// Size is the data's size in bytes.
	Size int64

	file *File
}

// Shape is the tensor's shape in row-major (PyTorch) order, the reverse
// of Dims: the last dim varies fastest, as in the data.
func (t *Tensor) Shape() []int64 {
	s := slices.Clone(t.Dims)
	slices.Reverse(s)
	return s
}

// Elements is the number of elements, the product of the dims (1 for a
// tensor with no dims).
func (t *Tensor) Elements() int64 {
	n, _ := elementCount(t.Dims) // Parse checked that it fits
	return n
}

// Bytes is the tensor's raw data, a view into the file: do not modify it,
// and do not use it after the File's Close. It is nil after Close.
func (t *Tensor) Bytes() []byte {
	if t.file.data == nil {
		return nil
	}
	start := t.file.DataOffset + t.Offset
	return t.file.data[start : start+t.Size : start+t.Size]
}

// Tensor returns the tensor called name, and whether there is one.
func (f *File) Tensor(name string) (*Tensor, bool) {
	t, ok := f.byName[name]
	return t, ok
}

// Parse parses a GGUF file held in data. name names it in messages. The
// File keeps data for the tensors' Bytes: data must not change while the
// File is used.
func Parse(data []byte, name string) (*File, error) {
	c := &cursor{data: data, name: name}
	f := &File{Name: name, data: data, Alignment: DefaultAlignment}
	nTensors, nKV, err := f.readPreamble(c)
	if err != nil {
		return nil, err
	}
	if err := f.readMeta(c, nKV); err != nil {
		return nil, err
	}
	if err := f.readTensorInfos(c, nTensors); err != nil {
		return nil, err
	}
	if err := f.readAlignment(); err != nil {
		return nil, err
	}
	f.DataOffset = alignUp(int64(c.off), f.Alignment)
	if err := f.placeTensors(); err != nil {
		return nil, err
	}
	return f, nil
}

// readPreamble reads the magic, the version and the two counts, and
// checks the counts against the bytes left: a key/value takes at least 13
// bytes (key length, type, a one-byte value), a tensor info 24.
func (f *File) readPreamble(c *cursor) (nTensors, nKV uint64, err error) {
	b, err := c.take(4, text("the magic"))
	if err != nil {
		return 0, 0, err
	}
	if string(b) != magic {
		return 0, 0, newError(f.Name, ErrMalformed, "bad magic %q, not a GGUF file", b)
	}
	if f.Version, err = c.u32(text("the version")); err != nil {
		return 0, 0, err
	}
	switch swapped := bits.ReverseBytes32(f.Version); {
	case f.Version == 2 || f.Version == 3:
	case swapped >= 1 && swapped <= 3:
		return 0, 0, newError(f.Name, ErrUnsupported, "file is big-endian (version %d byte-swapped), which ragen cannot read", swapped)
	default:
		return 0, 0, newError(f.Name, ErrUnsupported, "GGUF version %d, which ragen cannot read (it reads versions 2 and 3)", f.Version)
	}
	if nTensors, err = c.u64(text("the tensor count")); err != nil {
		return 0, 0, err
	}
	if nKV, err = c.u64(text("the metadata count")); err != nil {
		return 0, 0, err
	}
	rem := uint64(c.remaining())
	if nKV > rem/13 || nTensors > (rem-nKV*13)/24 {
		return 0, 0, newError(f.Name, ErrMalformed, "header claims %d metadata keys and %d tensors, more than the %d bytes left can hold", nKV, nTensors, rem)
	}
	return nTensors, nKV, nil
}

// readMeta reads n key/values.
func (f *File) readMeta(c *cursor, n uint64) error {
	f.Meta = make([]KV, 0, n)
	f.keys = make(map[string]int, n)
	for i := range n {
		key, err := c.str(func() string { return "the key of metadata entry #" + itoa(i) })
		if err != nil {
			return err
		}
		if _, dup := f.keys[key]; dup {
			return newError(f.Name, ErrMalformed, "metadata key %s appears twice", show(key))
		}
		t, err := c.u32(func() string { return "the value type of key " + show(key) })
		if err != nil {
			return err
		}
		v, err := c.value(valueType(t), key)
		if err != nil {
			return err
		}
		f.keys[key] = len(f.Meta)
		f.Meta = append(f.Meta, KV{key, v})
	}
	return nil
}

// readTensorInfos reads n tensor infos: name, dims, type, offset.
func (f *File) readTensorInfos(c *cursor, n uint64) error {
	f.Tensors = make([]*Tensor, 0, n)
	f.byName = make(map[string]*Tensor, n)
	for i := range n {
		name, err := c.str(func() string { return "the name of tensor #" + itoa(i) })
		if err != nil {
			return err
		}
		if _, dup := f.byName[name]; dup {
			return newError(f.Name, ErrMalformed, "tensor %s appears twice", show(name))
		}
		what := func() string { return "the info of tensor " + show(name) }
		nDims, err := c.u32(what)
		if err != nil {
			return err
		}
		if nDims > maxDims {
			return newError(f.Name, ErrMalformed, "tensor %s has %d dims, more than GGML's %d", show(name), nDims, maxDims)
		}
		t := &Tensor{Name: name, Dims: make([]int64, nDims), file: f}
		for j := range t.Dims {
			d, err := c.u64(what)
			if err != nil {
				return err
			}
			if d > math.MaxInt64 {
				return newError(f.Name, ErrMalformed, "tensor %s has dim %d of %d, more than an int64 holds", show(name), j, d)
			}
			t.Dims[j] = int64(d)
		}
		typ, err := c.u32(what)
		if err != nil {
			return err
		}
		t.Type = Type(typ)
		if !t.Type.Known() {
			return newError(f.Name, ErrUnsupported, "tensor %s has unknown type %d, which ragen cannot read (supported: %s)", show(name), typ, typeList(dequantizable))
		}
		off, err := c.u64(what)
		if err != nil {
			return err
		}
		if off > math.MaxInt64 {
			return newError(f.Name, ErrMalformed, "tensor %s has offset %d, beyond any file", show(name), off)
		}
		t.Offset = int64(off)
		f.byName[name] = t
		f.Tensors = append(f.Tensors, t)
	}
	return nil
}

// readAlignment sets Alignment from general.alignment, which must be a
// uint32 power of two (as gguf-py and llama.cpp require).
func (f *File) readAlignment() error {
	v, ok := f.Get(AlignmentKey)
	if !ok {
		return nil
	}
	a, ok := v.(uint32)
	if !ok {
		return newError(f.Name, ErrMalformed, "key %s holds %s, not a uint32", AlignmentKey, describe(v))
	}
	if a == 0 || a&(a-1) != 0 {
		return newError(f.Name, ErrMalformed, "key %s is %d, not a power of two", AlignmentKey, a)
	}
	f.Alignment = int64(a)
	return nil
}

// placeTensors computes each tensor's size and checks that its data is
// aligned, lies in the file after the header and overlaps no other
// tensor's.
func (f *File) placeTensors() error {
	size := int64(len(f.data))
	for _, t := range f.Tensors {
		if err := f.sizeTensor(t); err != nil {
			return err
		}
		if t.Offset%f.Alignment != 0 {
			return newError(f.Name, ErrMalformed, "tensor %s has offset %d, not a multiple of the alignment %d", show(t.Name), t.Offset, f.Alignment)
		}
		if f.DataOffset > size || t.Offset > size-f.DataOffset || t.Size > size-f.DataOffset-t.Offset {
			return newError(f.Name, ErrMalformed, "tensor %s needs %d bytes at file offset %d+%d, past the end of the %d-byte file", show(t.Name), t.Size, f.DataOffset, t.Offset, size)
		}
	}
	byOffset := slices.Clone(f.Tensors)
	slices.SortFunc(byOffset, func(a, b *Tensor) int { return cmp.Compare(a.Offset, b.Offset) })
	var prev *Tensor
	for _, t := range byOffset {
		if t.Size == 0 {
			continue
		}
		if prev != nil && prev.Offset+prev.Size > t.Offset {
			return newError(f.Name, ErrMalformed, "tensors %s and %s overlap (data offsets %d and %d, %s has %d bytes)", show(prev.Name), show(t.Name), prev.Offset, t.Offset, show(prev.Name), prev.Size)
		}
		prev = t
	}
	return nil
}

// sizeTensor sets t.Size from its dims and type, refusing a row length
// that is not a whole number of blocks and element counts that overflow.
func (f *File) sizeTensor(t *Tensor) error {
	info := types[t.Type]
	n, ok := elementCount(t.Dims)
	if !ok {
		return newError(f.Name, ErrMalformed, "tensor %s has dims %v, whose element count overflows an int64", show(t.Name), t.Dims)
	}
	row := int64(1)
	if len(t.Dims) > 0 {
		row = t.Dims[0]
	}
	if row%int64(info.blockSize) != 0 {
		return newError(f.Name, ErrMalformed, "tensor %s has rows of %d elements, not a multiple of the %s block size %d", show(t.Name), row, info.name, info.blockSize)
	}
	blocks := n / int64(info.blockSize)
	if blocks > math.MaxInt64/int64(info.typeSize) {
		return newError(f.Name, ErrMalformed, "tensor %s has dims %v, whose byte size overflows an int64", show(t.Name), t.Dims)
	}
	t.Size = blocks * int64(info.typeSize)
	return nil
}

// elementCount is the product of dims (all non-negative), 0 when one of
// them is 0 however large the others; ok is false when it overflows an
// int64.
func elementCount(dims []int64) (n int64, ok bool) {
	if slices.Contains(dims, 0) {
		return 0, true
	}
	n = 1
	for _, d := range dims {
		hi, lo := bits.Mul64(uint64(n), uint64(d))
		if hi != 0 || lo > math.MaxInt64 {
			return 0, false
		}
		n = int64(lo)
	}
	return n, true
}

// alignUp rounds n up to a multiple of a, a power of two.
func alignUp(n, a int64) int64 { return (n + a - 1) &^ (a - 1) }

// itoa formats a count for messages.
func itoa(i uint64) string { return strconv.FormatUint(i, 10) }
