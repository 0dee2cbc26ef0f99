package gguf

import (
	"encoding/binary"
	"math"
	"runtime"
	"sync"
)

// A quantizer encodes whole blocks: dst holds len(src)/blockSize blocks.
//
// The block quantizers follow gguf-py's quants.py operation for operation
// in float32 (the scale from the block's extreme, its reciprocal, the
// product rounded to float32 before the offset is added), so that their
// bytes are identical to gguf-py's quantize, which for Q8_0 is also
// bit-exact with GGML's quantize_row_q8_0_ref. Blocks holding NaN or ±Inf
// come out unspecified (gguf-py's are too); F32, F16 and BF16 keep them.
type quantizer func(dst []byte, src []float32)

var quantizers = map[Type]quantizer{
	F32: quantF32, F16: quantF16, BF16: quantBF16,
	Q8_0: quantQ8_0, Q4_0: quantQ4_0, Q4_1: quantQ4_1, Q5_0: quantQ5_0, Q5_1: quantQ5_1,
}

// Quantize encodes data as type t. len(data) must be a whole number of
// t's blocks (32 elements for the Q types).
func Quantize(t Type, data []float32) ([]byte, error) {
	if !t.CanQuantize() {
		return nil, newError("", ErrUnsupported, "type %s cannot be written by ragen (it writes %s)", t.describe(), typeList(quantizable))
	}
	if len(data)%t.BlockSize() != 0 {
		return nil, newError("", ErrMalformed, "%d elements are not a whole number of %s blocks of %d", len(data), t, t.BlockSize())
	}
	out := make([]byte, len(data)/t.BlockSize()*t.TypeSize())
	quantInto(t, out, data)
	return out, nil
}

// quantInto encodes src into dst, in chunks of whole blocks spread over
// the CPUs when it is large.
func quantInto(t Type, dst []byte, src []float32) {
	fn, bs, ts := quantizers[t], t.BlockSize(), t.TypeSize()
	blocks := len(src) / bs
	workers := min(runtime.GOMAXPROCS(0), len(src)/parallelMin)
	if workers <= 1 {
		fn(dst, src)
		return
	}
	var wg sync.WaitGroup
	per := (blocks + workers - 1) / workers
	for a := 0; a < blocks; a += per {
		b := min(a+per, blocks)
		wg.Go(func() { fn(dst[a*ts:b*ts], src[a*bs:b*bs]) })
	}
	wg.Wait()
}

func put16(b []byte, v uint16) { binary.LittleEndian.PutUint16(b, v) }

func quantF32(dst []byte, src []float32) {
	for i, x := range src {
		binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(x))
	}
}

func quantF16(dst []byte, src []float32) {
	for i, x := range src {
		put16(dst[2*i:], floatToHalf(x))
	}
}

func quantBF16(dst []byte, src []float32) {
	for i, x := range src {
		put16(dst[2*i:], floatToBF16(x))
	}
}

// reciprocal is 1/d, or 0 for d = 0 (an all-zero block).
func reciprocal(d float32) float32 {
	if d == 0 {
		return 0
	}
	return 1 / d
}

// Q8_0: d = max|x|/127 and q = x/d rounded half away from zero.
func quantQ8_0(dst []byte, src []float32) {
	for ; len(src) > 0; dst, src = dst[34:], src[32:] {
		var amax float32
		for _, x := range src[:32] {
			amax = max(amax, abs32(x))
		}
		d := amax / 127
		id := reciprocal(d)
		put16(dst, floatToHalf(d))
		for j, x := range src[:32] {
			dst[2+j] = byte(int8(math.Round(float64(x * id))))
		}
	}
}

// absMax is the element of largest magnitude, the first of equals (numpy's
// argmax), with its sign.
func absMax(b []float32) float32 {
	var m float32
	for _, x := range b {
		if abs32(x) > abs32(m) {
			m = x
		}
	}
	return m
}

// minMax is the smallest and largest element.
func minMax(b []float32) (lo, hi float32) {
	lo, hi = b[0], b[0]
	for _, x := range b[1:] {
		lo, hi = min(lo, x), max(hi, x)
	}
	return lo, hi
}

// level truncates v to an integer level in [0, top].
func level(v float32, top int) byte {
	q := int(v)
	return byte(max(0, min(q, top)))
}

// Q4_0: d = m/−8 for the element m of largest magnitude, so that m maps
// to level 0; q = trunc(x/d + 8.5) in [0, 15].
func quantQ4_0(dst []byte, src []float32) {
	var q [32]byte
	for ; len(src) > 0; dst, src = dst[18:], src[32:] {
		d := absMax(src[:32]) / -8
		id := reciprocal(d)
		for j, x := range src[:32] {
			q[j] = level(float32(x*id)+8.5, 15)
		}
		put16(dst, floatToHalf(d))
		packNibbles(dst[2:18], &q)
	}
}

// Q4_1: d = (max−min)/15, m = min and q = trunc((x−min)/d + 0.5).
func quantQ4_1(dst []byte, src []float32) {
	var q [32]byte
	for ; len(src) > 0; dst, src = dst[20:], src[32:] {
		lo, hi := minMax(src[:32])
		d := (hi - lo) / 15
		id := reciprocal(d)
		for j, x := range src[:32] {
			q[j] = level(float32((x-lo)*id)+0.5, 15)
		}
		put16(dst, floatToHalf(d))
		put16(dst[2:], floatToHalf(lo))
		packNibbles(dst[4:20], &q)
	}
}

// Q5_0: Q4_0 with 32 levels: d = m/−16, q = trunc(x/d + 16.5) in [0, 31].
func quantQ5_0(dst []byte, src []float32) {
	var q [32]byte
	for ; len(src) > 0; dst, src = dst[22:], src[32:] {
		d := absMax(src[:32]) / -16
		id := reciprocal(d)
		for j, x := range src[:32] {
			q[j] = level(float32(x*id)+16.5, 31)
		}
		put16(dst, floatToHalf(d))
		binary.LittleEndian.PutUint32(dst[2:], fifthBits(&q))
		packNibbles(dst[6:22], &q)
	}
}

// Q5_1: Q4_1 with 32 levels: d = (max−min)/31.
func quantQ5_1(dst []byte, src []float32) {
	var q [32]byte
	for ; len(src) > 0; dst, src = dst[24:], src[32:] {
		lo, hi := minMax(src[:32])
		d := (hi - lo) / 31
		id := reciprocal(d)
		for j, x := range src[:32] {
			q[j] = level(float32((x-lo)*id)+0.5, 31)
		}
		put16(dst, floatToHalf(d))
		put16(dst[2:], floatToHalf(lo))
		binary.LittleEndian.PutUint32(dst[4:], fifthBits(&q))
		packNibbles(dst[8:24], &q)
	}
}

// packNibbles stores the low nibbles of q: element j in the low half of
// byte j, element j+16 in its high half.
func packNibbles(dst []byte, q *[32]byte) {
	for j := range 16 {
		dst[j] = q[j]&0xf | q[j+16]<<4
	}
}

// fifthBits gathers bit 4 of each level, element j in bit j.
func fifthBits(q *[32]byte) uint32 {
	var h uint32
	for j, v := range q {
		h |= uint32(v>>4&1) << j
	}
	return h
}

func abs32(x float32) float32 { return math.Float32frombits(math.Float32bits(x) &^ (1 << 31)) }
