package gguf

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestFloatToHalf(t *testing.T) {
	inf := float32(math.Inf(1))
	cases := []struct {
		in   float32
		want uint16
	}{
		{0, 0x0000},
		{float32(math.Copysign(0, -1)), 0x8000},
		{1, 0x3c00},
		{-2, 0xc000},
		{0.5, 0x3800},
		{65504, 0x7bff},                            // largest half
		{65519.99, 0x7bff},                         // below the midpoint to Inf
		{65520, 0x7c00},                            // the midpoint rounds to even: Inf
		{1e5, 0x7c00},                              // overflow
		{inf, 0x7c00},                              //
		{-inf, 0xfc00},                             //
		{1 + 1.0/2048, 0x3c00},                     // tie between 1 and 1+2⁻¹⁰: even is 1
		{1 + 3.0/2048, 0x3c02},                     // tie: even is 1+2·2⁻¹⁰
		{1 + 1.0/2048 + 1e-7, 0x3c01},              // just above the tie
		{0x1p-14, 0x0400},                          // smallest normal
		{0x1p-24, 0x0001},                          // smallest subnormal
		{0x1p-25, 0x0000},                          // half of it: tie to even, 0
		{0x1.8p-25, 0x0001},                        // above the tie
		{3 * 0x1p-25, 0x0002},                      // 1.5 units: tie to even, 2
		{0x1.ffcp-15, 0x0400},                      // largest subnormal + half a unit: rounds to even, the smallest normal
		{-0x1p-24, 0x8001},                         //
		{0x1p-130, 0x0000},                         // float32 subnormal
		{math.Float32frombits(0x7fc00000), 0x7e00}, // quiet NaN
		{math.Float32frombits(0x7f800001), 0x7c01}, // NaN whose top payload bits are 0 stays NaN
		{math.Float32frombits(0xffa00000), 0xfd00}, // payload kept, not quieted (numpy)
	}
	for _, c := range cases {
		if got := floatToHalf(c.in); got != c.want {
			t.Errorf("floatToHalf(%g = %#08x) = %#04x, want %#04x", c.in, math.Float32bits(c.in), got, c.want)
		}
	}
}

// TestHalfRoundTrip: every half survives half → float32 → half, and the
// float32 has the half's value (checked against the definition).
func TestHalfRoundTrip(t *testing.T) {
	for h := range 1 << 16 {
		f := halfToFloat(uint16(h))
		if back := floatToHalf(f); back != uint16(h) {
			t.Fatalf("%#04x -> %g -> %#04x", h, f, back)
		}
		exp, mant := h>>10&0x1f, h&0x3ff
		var want float64
		switch {
		case exp == 0x1f:
			continue
		case exp == 0:
			want = math.Ldexp(float64(mant), -24)
		default:
			want = math.Ldexp(float64(mant|0x400), exp-25)
		}
		if h&0x8000 != 0 {
			want = -want
		}
		if float64(f) != want {
			t.Fatalf("halfToFloat(%#04x) = %g, want %g", h, f, want)
		}
	}
}

// TestFloatToHalfNearest checks correct rounding on random float32s of
// every magnitude: no other half is nearer, and ties go to the even one.
func TestFloatToHalfNearest(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		x := math.Float32frombits(rng.Uint32() & 0x7fffffff)
		if x != x || x >= 65520 {
			continue
		}
		if rng.IntN(2) == 0 {
			x = float32(math.Ldexp(float64(x), -rng.IntN(20))) // favour half's range
		}
		h := floatToHalf(x)
		err := math.Abs(float64(halfToFloat(h)) - float64(x))
		for _, n := range []uint16{h - 1, h + 1} {
			if n > 0x7bff {
				continue
			}
			alt := math.Abs(float64(halfToFloat(n)) - float64(x))
			if alt < err || (alt == err && h&1 == 1) {
				t.Fatalf("floatToHalf(%g) = %#04x, but %#04x is nearer or even", x, h, n)
			}
		}
	}
}

func TestFloatToBF16(t *testing.T) {
	cases := []struct {
		in   uint32
		want uint16
	}{
		{0x3f800000, 0x3f80}, // 1
		{0x3f808000, 0x3f80}, // tie: even
		{0x3f818000, 0x3f82}, // tie: even, up
		{0x3f808001, 0x3f81}, // above the tie
		{0x7f7fffff, 0x7f80}, // largest float32 rounds to Inf
		{0x7f800000, 0x7f80}, // Inf
		{0xff800000, 0xff80}, // -Inf
		{0x7f800001, 0x7fc0}, // signalling NaN is made quiet
		{0xffc12345, 0xffc1}, // NaN keeps its top payload bits
		{0x00000001, 0x0000}, // subnormal rounds to 0
	}
	for _, c := range cases {
		if got := floatToBF16(math.Float32frombits(c.in)); got != c.want {
			t.Errorf("floatToBF16(%#08x) = %#04x, want %#04x", c.in, got, c.want)
		}
		if got := math.Float32bits(bf16ToFloat(c.want)); got != uint32(c.want)<<16 {
			t.Errorf("bf16ToFloat(%#04x) = %#08x", c.want, got)
		}
	}
}
