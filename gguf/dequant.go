package gguf

import (
	"encoding/binary"
	"math"
	"runtime"
	"sync"
)

// A dequantizer decodes whole blocks: src holds len(dst)/blockSize blocks.
//
// Each follows gguf-py's quants.py operation for operation in float32
// (the scale times the integer, then the offset added or subtracted, never
// fused), so that its results are bit-identical to gguf-py's dequantize;
// float32(...) around a product stops the compiler fusing it into an FMA,
// which the Go spec otherwise allows.
type dequantizer func(dst []float32, src []byte)

var dequantizers = map[Type]dequantizer{
	F32: dequantF32, F16: dequantF16, BF16: dequantBF16,
	Q8_0: dequantQ8_0, Q4_0: dequantQ4_0, Q4_1: dequantQ4_1, Q5_0: dequantQ5_0, Q5_1: dequantQ5_1,
	Q2_K: dequantQ2_K, Q3_K: dequantQ3_K, Q4_K: dequantQ4_K, Q5_K: dequantQ5_K, Q6_K: dequantQ6_K, Q8_K: dequantQ8_K,
}

// Dequantize decodes n elements of type t from data, which must hold
// exactly n elements, into float32s in data's order.
func Dequantize(t Type, data []byte, n int) ([]float32, error) {
	if err := checkDequant(t, len(data), n); err != nil {
		return nil, err
	}
	out := make([]float32, n)
	dequantInto(t, out, data)
	return out, nil
}

// Float32 dequantizes the tensor into float32s in row-major order (the
// order of Shape, which is the file's).
func (t *Tensor) Float32() ([]float32, error) {
	f := t.file
	if !t.Type.CanDequantize() {
		return nil, newError(f.Name, ErrUnsupported, "tensor %s has type %s, which ragen cannot read (supported: %s)", show(t.Name), t.Type.describe(), typeList(dequantizable))
	}
	if f.data == nil {
		return nil, newError(f.Name, nil, "tensor %s cannot be read after Close", show(t.Name))
	}
	if t.Elements() > math.MaxInt {
		return nil, newError(f.Name, ErrUnsupported, "tensor %s has %d elements, more than this platform can hold", show(t.Name), t.Elements())
	}
	out := make([]float32, t.Elements())
	dequantInto(t.Type, out, t.Bytes())
	return out, nil
}

// Float32 dequantizes the tensor called name (see Tensor.Float32).
func (f *File) Float32(name string) ([]float32, error) {
	t, ok := f.Tensor(name)
	if !ok {
		return nil, newError(f.Name, nil, "no tensor %s", show(name))
	}
	return t.Float32()
}

// checkDequant checks that t can be dequantized and that size bytes hold
// exactly n elements of it.
func checkDequant(t Type, size, n int) error {
	if !t.CanDequantize() {
		return newError("", ErrUnsupported, "type %s cannot be dequantized by ragen (supported: %s)", t.describe(), typeList(dequantizable))
	}
	bs, ts := t.BlockSize(), t.TypeSize()
	if n < 0 {
		return newError("", ErrMalformed, "negative element count %d", n)
	}
	if n%bs != 0 {
		return newError("", ErrMalformed, "%d elements are not a whole number of %s blocks of %d", n, t, bs)
	}
	if size/ts != n/bs || size%ts != 0 {
		return newError("", ErrMalformed, "%d bytes of %s data do not hold %d elements (that takes %d bytes)", size, t, n, n/bs*ts)
	}
	return nil
}

// parallelMin is the element count from which dequantization is split
// over the CPUs: below it the goroutines cost more than they save.
const parallelMin = 1 << 18

// dequantInto decodes src into dst, which holds exactly as many elements,
// in chunks of whole blocks spread over the CPUs when it is large.
func dequantInto(t Type, dst []float32, src []byte) {
	fn, bs, ts := dequantizers[t], t.BlockSize(), t.TypeSize()
	blocks := len(dst) / bs
	workers := min(runtime.GOMAXPROCS(0), len(dst)/parallelMin)
	if workers <= 1 {
		fn(dst, src)
		return
	}
	var wg sync.WaitGroup
	per := (blocks + workers - 1) / workers
	for a := 0; a < blocks; a += per {
		b := min(a+per, blocks)
		wg.Go(func() { fn(dst[a*bs:b*bs], src[a*ts:b*ts]) })
	}
	wg.Wait()
}

func le16(b []byte) uint16 { return binary.LittleEndian.Uint16(b) }

// half reads a little-endian IEEE half as float32.
func half(b []byte) float32 { return halfToFloat(le16(b)) }

func dequantF32(dst []float32, src []byte) {
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
	}
}

func dequantF16(dst []float32, src []byte) {
	for i := range dst {
		dst[i] = halfToFloat(le16(src[2*i:]))
	}
}

func dequantBF16(dst []float32, src []byte) {
	for i := range dst {
		dst[i] = bf16ToFloat(le16(src[2*i:]))
	}
}

// Q8_0: a half scale d and 32 int8s; x = d·q.
func dequantQ8_0(dst []float32, src []byte) {
	for ; len(dst) > 0; dst, src = dst[32:], src[34:] {
		d, q := half(src), src[2:34]
		for j := range 32 {
			dst[j] = float32(int8(q[j])) * d
		}
	}
}

// Q4_0: d and 32 nibbles, elements 0–15 in the low nibbles of the 16
// bytes and 16–31 in the high ones; x = d·(q−8).
func dequantQ4_0(dst []float32, src []byte) {
	for ; len(dst) > 0; dst, src = dst[32:], src[18:] {
		d, q := half(src), src[2:18]
		for j := range 16 {
			dst[j] = d * float32(int8(q[j]&0xf)-8)
			dst[j+16] = d * float32(int8(q[j]>>4)-8)
		}
	}
}

// Q4_1: d, a half offset m and Q4_0's nibbles; x = d·q + m.
func dequantQ4_1(dst []float32, src []byte) {
	for ; len(dst) > 0; dst, src = dst[32:], src[20:] {
		d, m, q := half(src), half(src[2:]), src[4:20]
		for j := range 16 {
			dst[j] = float32(d*float32(q[j]&0xf)) + m
			dst[j+16] = float32(d*float32(q[j]>>4)) + m
		}
	}
}

// Q5_0: d, a uint32 of fifth bits (bit j for element j) and Q4_0's
// nibbles; x = d·(q−16).
func dequantQ5_0(dst []float32, src []byte) {
	for ; len(dst) > 0; dst, src = dst[32:], src[22:] {
		d, qh, q := half(src), binary.LittleEndian.Uint32(src[2:]), src[6:22]
		for j := range 16 {
			lo := q[j]&0xf | byte(qh>>j&1)<<4
			hi := q[j]>>4 | byte(qh>>(j+16)&1)<<4
			dst[j] = d * float32(int8(lo)-16)
			dst[j+16] = d * float32(int8(hi)-16)
		}
	}
}

// Q5_1: d, m, the fifth bits and the nibbles; x = d·q + m.
func dequantQ5_1(dst []float32, src []byte) {
	for ; len(dst) > 0; dst, src = dst[32:], src[24:] {
		d, m, qh, q := half(src), half(src[2:]), binary.LittleEndian.Uint32(src[4:]), src[8:24]
		for j := range 16 {
			lo := q[j]&0xf | byte(qh>>j&1)<<4
			hi := q[j]>>4 | byte(qh>>(j+16)&1)<<4
			dst[j] = float32(d*float32(lo)) + m
			dst[j+16] = float32(d*float32(hi)) + m
		}
	}
}
