package gguf

import (
	"encoding/binary"
	"math"
)

// The K-quants pack 256 elements in a super-block of 16 or 8 sub-blocks,
// each with its own integer scale (and minimum) that multiplies the
// super-block's half scale d (and dmin). Layouts are GGML's block_qN_K;
// the element order is that of gguf-py's quants.py. In the loops below the
// element index within the super-block is i, and i splits into bit
// fields as the layout interleaves them.

// Q2_K: scales[16] (low nibble scale, high nibble min, per 16 elements),
// qs[64] of 2-bit values, d, dmin. Element i = 128h + 32s + l is bits 2s of
// qs[32h+l]; x = d·sc·q − dmin·m.
func dequantQ2_K(dst []float32, src []byte) {
	for ; len(dst) > 0; dst, src = dst[qk:], src[84:] {
		sc, qs, d, dmin := src[:16], src[16:80], half(src[80:]), half(src[82:])
		for i := range qk {
			h, s, l := i/128, i/32%4, i%32
			q := qs[32*h+l] >> (2 * s) & 3
			g := sc[i/16]
			dl, ml := d*float32(g&0xf), dmin*float32(g>>4)
			dst[i] = float32(dl*float32(q)) - ml
		}
	}
}

// Q3_K: hmask[32] (the third bit, inverted: a clear bit subtracts 4),
// qs[64] of 2-bit values, scales[12] (sixteen 6-bit scales, biased by 32)
// and d. Element i = 128h + 32s + l is bits 2s of qs[32h+l] and bit i/32 of
// hmask[l]; x = d·(sc−32)·q.
func dequantQ3_K(dst []float32, src []byte) {
	for ; len(dst) > 0; dst, src = dst[qk:], src[110:] {
		hmask, qs, sc, d := src[:32], src[32:96], src[96:108], half(src[108:])
		var scale [16]float32
		for j := range 16 {
			low := sc[j%8] >> (4 * (j / 8)) & 0xf
			high := sc[8+j%4] >> (2 * (j / 4)) & 3
			scale[j] = d * float32(int8(low|high<<4)-32)
		}
		for i := range qk {
			h, s, l := i/128, i/32%4, i%32
			q := int8(qs[32*h+l] >> (2 * s) & 3)
			if hmask[l]>>(i/32)&1 == 0 {
				q -= 4
			}
			dst[i] = scale[i/16] * float32(q)
		}
	}
}

// scaleMin unpacks the j-th of the eight 6-bit scales and mins that Q4_K
// and Q5_K pack in 12 bytes: the first four in the low 6 bits of bytes
// 0–3 (scales) and 4–7 (mins); the last four in the nibbles of bytes 8–11
// with their top two bits in the spare bits of bytes 0–7.
func scaleMin(s []byte, j int) (sc, m byte) {
	if j < 4 {
		return s[j] & 63, s[j+4] & 63
	}
	return s[j+4]&0xf | s[j-4]>>6<<4, s[j+4]>>4 | s[j]>>6<<4
}

// Q4_K: d, dmin, the packed scales, qs[128] of nibbles. Element
// i = 64c + 32s + l is nibble s of qs[32c+l], in sub-block i/32;
// x = d·sc·q − dmin·m.
func dequantQ4_K(dst []float32, src []byte) {
	for ; len(dst) > 0; dst, src = dst[qk:], src[144:] {
		d, dmin, scales, qs := half(src), half(src[2:]), src[4:16], src[16:144]
		for j := range 8 {
			sc, m := scaleMin(scales, j)
			dl, ml := d*float32(sc), dmin*float32(m)
			c, s := j/2, j%2
			for l := range 32 {
				q := qs[32*c+l] >> (4 * s) & 0xf
				dst[32*j+l] = float32(dl*float32(q)) - ml
			}
		}
	}
}

// Q5_K: Q4_K with a fifth bit per element: bit j of qh[l] for element
// 32j + l.
func dequantQ5_K(dst []float32, src []byte) {
	for ; len(dst) > 0; dst, src = dst[qk:], src[176:] {
		d, dmin, scales, qh, qs := half(src), half(src[2:]), src[4:16], src[16:48], src[48:176]
		for j := range 8 {
			sc, m := scaleMin(scales, j)
			dl, ml := d*float32(sc), dmin*float32(m)
			c, s := j/2, j%2
			for l := range 32 {
				q := qs[32*c+l]>>(4*s)&0xf | qh[l]>>j&1<<4
				dst[32*j+l] = float32(dl*float32(q)) - ml
			}
		}
	}
}

// Q6_K: ql[128] of low nibbles, qh[64] of high 2-bit pairs, int8
// scales[16] (per 16 elements), d. Element i = 128h + r takes nibble r/64
// of ql[64h + r%64] and bits 2(r/32) of qh[32h + r%32]; x = d·sc·(q−32).
func dequantQ6_K(dst []float32, src []byte) {
	for ; len(dst) > 0; dst, src = dst[qk:], src[210:] {
		ql, qh, sc, d := src[:128], src[128:192], src[192:208], half(src[208:])
		for i := range qk {
			h, r := i/128, i%128
			lo := ql[64*h+r%64] >> (4 * (r / 64)) & 0xf
			hi := qh[32*h+r%32] >> (2 * (r / 32)) & 3
			dl := d * float32(int8(sc[i/16]))
			dst[i] = dl * float32(int8(lo|hi<<4)-32)
		}
	}
}

// Q8_K: a float32 scale d, 256 int8s and 16 int16 block sums (for dot
// products, unused here); x = d·q.
func dequantQ8_K(dst []float32, src []byte) {
	for ; len(dst) > 0; dst, src = dst[qk:], src[292:] {
		d := math.Float32frombits(binary.LittleEndian.Uint32(src))
		for i, q := range src[4:260] {
			dst[i] = d * float32(int8(q))
		}
	}
}
