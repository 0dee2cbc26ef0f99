package gguf

import (
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// Half-precision bit patterns used below.
const (
	h0125 = 0x3000 // 0.125
	h025  = 0x3400 // 0.25
	h05   = 0x3800 // 0.5
	h1    = 0x3c00 // 1
	h2    = 0x4000 // 2
	hm1   = 0xbc00 // -1
)

func le16b(v uint16) []byte { return binary.LittleEndian.AppendUint16(nil, v) }

// TestDequantizeSmallBlocks decodes hand-written blocks of the 32-element
// types and the plain types, with values worked out by hand.
func TestDequantizeSmallBlocks(t *testing.T) {
	seq := func(f func(j int) float32) []float32 {
		out := make([]float32, 32)
		for j := range out {
			out[j] = f(j)
		}
		return out
	}
	// Byte j holds level j (low nibble, element j) and level 15-j (high
	// nibble, element j+16).
	nibbles := make([]byte, 16)
	for j := range nibbles {
		nibbles[j] = byte(j) | 0x10*byte(15-j)
	}
	q8 := make([]byte, 32)
	for j := range q8 {
		q8[j] = byte(int8(j*8 - 128))
	}
	fifth := uint32(0x55555555) | 1<<31
	qhb := binary.LittleEndian.AppendUint32(nil, fifth)
	lvl := func(j int) int { // 4-bit level of element j in nibbles
		if j < 16 {
			return j
		}
		return 15 - (j - 16)
	}
	// The fifth bits are set for elements 0, 2, 4 ... 30 and 31.
	lvl5 := func(j int) int { return lvl(j) | int(fifth>>j&1)<<4 }
	cases := []struct {
		name string
		typ  Type
		data []byte
		want []float32
	}{
		{"F32", F32, binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, 0x3fc00000), 0xc0200000), []float32{1.5, -2.5}},
		{"F16", F16, append(le16b(h05), le16b(0xfc00)...), []float32{0.5, float32(math.Inf(-1))}},
		{"BF16", BF16, append(le16b(0x3fc0), le16b(0xc020)...), []float32{1.5, -2.5}},
		{"Q8_0", Q8_0, append(le16b(h05), q8...), seq(func(j int) float32 { return 0.5 * float32(j*8-128) })},
		{"Q4_0", Q4_0, append(le16b(h2), nibbles...), seq(func(j int) float32 { return 2 * float32(lvl(j)-8) })},
		{"Q4_1", Q4_1, slices.Concat(le16b(h05), le16b(hm1), nibbles), seq(func(j int) float32 { return 0.5*float32(lvl(j)) - 1 })},
		{"Q5_0", Q5_0, slices.Concat(le16b(h025), qhb, nibbles), seq(func(j int) float32 { return 0.25 * float32(lvl5(j)-16) })},
		{"Q5_1", Q5_1, slices.Concat(le16b(h025), le16b(h1), qhb, nibbles), seq(func(j int) float32 { return 0.25*float32(lvl5(j)) + 1 })},
	}
	for _, c := range cases {
		got, err := Dequantize(c.typ, c.data, len(c.want))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s:\n got %v\nwant %v", c.name, got, c.want)
		}
	}
}

// kBlock is a K-quant super-block built element by element from its
// levels and sub-block scales, with the value each element must decode to.
type kBlock struct {
	data []byte
	want []float32
}

// The builders below place each field where GGML's block_qN_K layout puts
// it, written from the layout's description (bit by element index), and
// compute the expected values from the format's formula in float64: with
// the small power-of-two scales used, every product is exact in float32.

func q2kBlock(rng *rand.Rand) kBlock {
	b := make([]byte, 84)
	d, dmin := 0.25, 0.125
	copy(b[80:], le16b(h025))
	copy(b[82:], le16b(h0125))
	var sc, m [16]int
	for g := range 16 {
		sc[g], m[g] = rng.IntN(16), rng.IntN(16)
		b[g] = byte(sc[g] | m[g]<<4)
	}
	want := make([]float32, qk)
	for i := range qk {
		q := rng.IntN(4)
		b[16+32*(i/128)+i%32] |= byte(q << (2 * (i / 32 % 4)))
		want[i] = float32(d*float64(sc[i/16])*float64(q) - dmin*float64(m[i/16]))
	}
	return kBlock{b, want}
}

func q3kBlock(rng *rand.Rand) kBlock {
	b := make([]byte, 110)
	d := 0.5
	copy(b[108:], le16b(h05))
	var sc [16]int
	for j := range 16 {
		sc[j] = rng.IntN(64) - 32
		u := byte(sc[j] + 32)
		b[96+j%8] |= (u & 0xf) << (4 * (j / 8))
		b[96+8+j%4] |= (u >> 4) << (2 * (j / 4))
	}
	want := make([]float32, qk)
	for i := range qk {
		q := rng.IntN(8) - 4 // levels -4..3: the hmask bit is set for q >= 0
		low := q
		if q >= 0 {
			b[i%32] |= 1 << (i / 32)
		} else {
			low = q + 4
		}
		b[32+32*(i/128)+i%32] |= byte(low << (2 * (i / 32 % 4)))
		want[i] = float32(d * float64(sc[i/16]) * float64(q))
	}
	return kBlock{b, want}
}

// packScaleMin packs eight 6-bit scales and mins as Q4_K and Q5_K do.
func packScaleMin(s []byte, sc, m [8]int) {
	for j := range 4 {
		s[j] = byte(sc[j]) | byte(sc[j+4]>>4)<<6
		s[j+4] = byte(m[j]) | byte(m[j+4]>>4)<<6
		s[j+8] = byte(sc[j+4]&0xf) | byte(m[j+4]&0xf)<<4
	}
}

// q45kBlock builds a Q4_K block, or a Q5_K block when five is set.
func q45kBlock(rng *rand.Rand, five bool) kBlock {
	size, qs := 144, 16
	if five {
		size, qs = 176, 48
	}
	b := make([]byte, size)
	d, dmin := 0.25, 0.5
	copy(b, le16b(h025))
	copy(b[2:], le16b(h05))
	var sc, m [8]int
	for j := range 8 {
		sc[j], m[j] = rng.IntN(64), rng.IntN(64)
	}
	packScaleMin(b[4:16], sc, m)
	want := make([]float32, qk)
	for i := range qk {
		j, l := i/32, i%32
		q := rng.IntN(16)
		if five {
			q = rng.IntN(32)
			b[16+l] |= byte(q>>4) << j
		}
		b[qs+32*(j/2)+l] |= byte(q&0xf) << (4 * (j % 2))
		want[i] = float32(d*float64(sc[j])*float64(q) - dmin*float64(m[j]))
	}
	return kBlock{b, want}
}

func q6kBlock(rng *rand.Rand) kBlock {
	b := make([]byte, 210)
	d := 0.125
	copy(b[208:], le16b(h0125))
	var sc [16]int
	for g := range 16 {
		sc[g] = rng.IntN(256) - 128
		b[192+g] = byte(int8(sc[g]))
	}
	want := make([]float32, qk)
	for i := range qk {
		q := rng.IntN(64) - 32
		u := byte(q + 32)
		h, r := i/128, i%128
		b[64*h+r%64] |= (u & 0xf) << (4 * (r / 64))
		b[128+32*h+r%32] |= (u >> 4) << (2 * (r / 32))
		want[i] = float32(d * float64(sc[i/16]) * float64(q))
	}
	return kBlock{b, want}
}

func q8kBlock(rng *rand.Rand) kBlock {
	b := binary.LittleEndian.AppendUint32(nil, math.Float32bits(0.375))
	want := make([]float32, qk)
	for i := range qk {
		q := rng.IntN(256) - 128
		b = append(b, byte(int8(q)))
		want[i] = float32(0.375 * float64(q))
	}
	return kBlock{append(b, make([]byte, 32)...), want} // block sums: unused
}

// TestDequantizeKQuants decodes random super-blocks built field by field,
// two at a time to check the blocks' stride.
func TestDequantizeKQuants(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	cases := []struct {
		typ   Type
		build func() kBlock
	}{
		{Q2_K, func() kBlock { return q2kBlock(rng) }},
		{Q3_K, func() kBlock { return q3kBlock(rng) }},
		{Q4_K, func() kBlock { return q45kBlock(rng, false) }},
		{Q5_K, func() kBlock { return q45kBlock(rng, true) }},
		{Q6_K, func() kBlock { return q6kBlock(rng) }},
		{Q8_K, func() kBlock { return q8kBlock(rng) }},
	}
	for _, c := range cases {
		a, b := c.build(), c.build()
		if len(a.data) != c.typ.TypeSize() {
			t.Fatalf("%v: test block of %d bytes, type size %d", c.typ, len(a.data), c.typ.TypeSize())
		}
		got, err := Dequantize(c.typ, slices.Concat(a.data, b.data), 2*qk)
		if err != nil {
			t.Fatalf("%v: %v", c.typ, err)
		}
		want := slices.Concat(a.want, b.want)
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%v: element %d = %v, want %v", c.typ, i, got[i], want[i])
				break
			}
		}
	}
}

// TestDequantizeParallel: a tensor large enough to be split over the CPUs
// decodes as the sequential decoder does.
func TestDequantizeParallel(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	n := 3*parallelMin + 7*32
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	for _, typ := range []Type{F16, Q8_0, Q4_1} {
		q, err := Quantize(typ, x)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Dequantize(typ, q, n)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]float32, n)
		dequantizers[typ](want, q)
		if !slices.Equal(got, want) {
			t.Errorf("%v: parallel decoding differs", typ)
		}
		seq := make([]byte, len(q))
		quantizers[typ](seq, x)
		if !slices.Equal(q, seq) {
			t.Errorf("%v: parallel encoding differs", typ)
		}
	}
}

func TestDequantizeErrors(t *testing.T) {
	cases := []struct {
		name string
		typ  Type
		size int
		n    int
		kind error
		want string
	}{
		{"unsupported", IQ2_XXS, 66, 256, ErrUnsupported, "gguf: type IQ2_XXS (16) cannot be dequantized by ragen (supported: F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q8_K)"},
		{"unknown", Type(99), 4, 1, ErrUnsupported, "gguf: type unknown type 99 cannot be dequantized by ragen (supported: F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q8_K)"},
		{"partial block", Q8_0, 34, 31, ErrMalformed, "gguf: 31 elements are not a whole number of Q8_0 blocks of 32"},
		{"short data", Q8_0, 33, 32, ErrMalformed, "gguf: 33 bytes of Q8_0 data do not hold 32 elements (that takes 34 bytes)"},
		{"long data", F32, 12, 2, ErrMalformed, "gguf: 12 bytes of F32 data do not hold 2 elements (that takes 8 bytes)"},
		{"negative", F32, 0, -1, ErrMalformed, "gguf: negative element count -1"},
	}
	for _, c := range cases {
		_, err := Dequantize(c.typ, make([]byte, c.size), c.n)
		if err == nil || err.Error() != c.want || !errors.Is(err, c.kind) {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
}
