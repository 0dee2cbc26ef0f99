package safetensors

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestFloat32ToBF16Known(t *testing.T) {
	cases := []struct {
		in   uint32 // float32 bits
		want uint16
	}{
		{math.Float32bits(1), 0x3F80},
		{math.Float32bits(-2), 0xC000},
		{math.Float32bits(0), 0x0000},
		{0x80000000, 0x8000}, // -0 keeps its sign
		{0x3F808000, 0x3F80}, // tie, kept part even: down
		{0x3F818000, 0x3F82}, // tie, kept part odd: up to even
		{0x3F808001, 0x3F81}, // just above the tie: up
		{0x3F807FFF, 0x3F80}, // just below the tie: down
		{0x7F7FFFFF, 0x7F80}, // largest float32 rounds to +Inf, as torch
		{0x7F800000, 0x7F80}, // +Inf
		{0xFF800000, 0xFF80}, // -Inf
		{0x7FC00001, 0x7FC0}, // NaN
		{0xFFFFFFFF, 0x7FC0}, // NaN with sign: torch's canonical NaN
		{0x00010000, 0x0001}, // subnormal, exact
		{math.Float32bits(3.14159265), 0x4049},
	}
	for _, c := range cases {
		if got := Float32ToBF16(math.Float32frombits(c.in)); got != c.want {
			t.Errorf("Float32ToBF16(%#08x) = %#04x, want %#04x", c.in, got, c.want)
		}
	}
}

func TestBF16RoundTripAll(t *testing.T) {
	for b := range 1 << 16 {
		f := BF16ToFloat32(uint16(b))
		if f != f {
			continue
		}
		if got := Float32ToBF16(f); got != uint16(b) {
			t.Fatalf("bf16 %#04x -> %g -> %#04x", b, f, got)
		}
	}
	if BF16ToFloat32(0x3F80) != 1 {
		t.Errorf("BF16ToFloat32(0x3F80) = %g, want 1", BF16ToFloat32(0x3F80))
	}
}

func TestF16Known(t *testing.T) {
	cases := []struct {
		h uint16
		f float64
	}{
		{0x3C00, 1},
		{0xC000, -2},
		{0x3555, 0.333251953125},
		{0x7BFF, 65504},                 // largest finite
		{0x0400, 6.103515625e-05},       // smallest normal, 2^-14
		{0x03FF, 6.097555160522461e-05}, // largest subnormal
		{0x0001, 5.960464477539063e-08}, // smallest subnormal, 2^-24
		{0x8001, -5.960464477539063e-08},
		{0x0000, 0},
		{0x7C00, math.Inf(1)},
		{0xFC00, math.Inf(-1)},
	}
	for _, c := range cases {
		if got := float64(F16ToFloat32(c.h)); got != c.f {
			t.Errorf("F16ToFloat32(%#04x) = %g, want %g", c.h, got, c.f)
		}
		if got := Float32ToF16(float32(c.f)); got != c.h {
			t.Errorf("Float32ToF16(%g) = %#04x, want %#04x", c.f, got, c.h)
		}
	}
	if f := F16ToFloat32(0x7E00); f == f {
		t.Errorf("F16ToFloat32(0x7E00) = %g, want NaN", f)
	}
	if math.Signbit(float64(F16ToFloat32(0x8000))) != true {
		t.Error("F16ToFloat32(0x8000) lost the sign of -0")
	}
	rounding := []struct {
		in   float32
		want uint16
	}{
		{65520, 0x7C00},                             // tie between 65504 and 2^16: even is Inf
		{65519, 0x7BFF},                             // below the tie
		{1e6, 0x7C00},                               // overflow
		{float32(math.Ldexp(1, -25)), 0x0000},       // tie between 0 and 2^-24: even is 0
		{float32(math.Ldexp(1.5, -25)), 0x0001},     // above the tie
		{float32(math.Ldexp(3, -25)), 0x0002},       // tie between 1 and 2 units: even is 2
		{float32(math.Ldexp(1, -30)), 0x0000},       // far below: 0
		{-float32(math.Ldexp(1, -30)), 0x8000},      // keeps the sign
		{1 + float32(math.Ldexp(1, -11)), 0x3C00},   // tie, even: down
		{1 + 3*float32(math.Ldexp(1, -11)), 0x3C02}, // tie, odd: up
		{float32(math.Ldexp(1023.5, -24)), 0x0400},  // rounds up out of the subnormals
		{float32(math.NaN()), 0x7E00},
		{float32(math.Inf(-1)), 0xFC00},
	}
	for _, c := range rounding {
		if got := Float32ToF16(c.in); got != c.want {
			t.Errorf("Float32ToF16(%g) = %#04x, want %#04x", c.in, got, c.want)
		}
	}
}

func TestF16RoundTripAll(t *testing.T) {
	for h := range 1 << 16 {
		f := F16ToFloat32(uint16(h))
		got := Float32ToF16(f)
		if f != f {
			if got&0x7FFF != 0x7E00 {
				t.Fatalf("NaN %#04x -> %#04x, want a quiet NaN", h, got)
			}
			continue
		}
		if got != uint16(h) {
			t.Fatalf("f16 %#04x -> %g -> %#04x", h, f, got)
		}
	}
}

// nearestProperty checks, independently of the conversion's bit tricks, that
// enc(x) is a nearest representable value with ties going to the even one,
// by comparing with the two neighbouring codes.
func nearestProperty(t *testing.T, name string, x float32, enc func(float32) uint16, dec func(uint16) float32) {
	t.Helper()
	h := enc(x)
	got := float64(dec(h))
	if math.IsInf(got, 0) {
		return // overflow is checked by the known cases
	}
	d := math.Abs(got - float64(x))
	for _, n := range []uint16{h - 1, h + 1} {
		v := float64(dec(n))
		if v != v || (n&0x7FFF) == 0 && (h&0x7FFF) == 0 {
			continue
		}
		dn := math.Abs(v - float64(x))
		if dn < d || (dn == d && h&1 == 1 && math.Signbit(v) == math.Signbit(got)) {
			t.Fatalf("%s(%g) = %#04x (%g) but %#04x (%g) is nearer or an even tie", name, x, h, got, n, v)
		}
	}
}

func TestRoundingIsNearestEven(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		x := math.Float32frombits(r.Uint32())
		if x != x || math.IsInf(float64(x), 0) {
			continue
		}
		nearestProperty(t, "Float32ToBF16", x, Float32ToBF16, BF16ToFloat32)
		if math.Abs(float64(x)) < 65504 {
			nearestProperty(t, "Float32ToF16", x, Float32ToF16, F16ToFloat32)
		}
		// Values in half's range, where the uniform bit draw rarely lands.
		y := float32(r.NormFloat64() * math.Pow(2, float64(r.IntN(40)-25)))
		nearestProperty(t, "Float32ToF16", y, Float32ToF16, F16ToFloat32)
	}
}

func TestEncodeDecodeFloat32(t *testing.T) {
	vals := []float32{1, -2.5, 0.1, 3e-5, 1e4}
	for _, d := range []DType{BF16, F16, F32} {
		b, err := EncodeFloat32(d, vals)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(b)) != int64(len(vals))*d.Size() {
			t.Fatalf("%s: %d bytes", d, len(b))
		}
		got, err := DecodeFloat32(d, b)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range vals {
			want := v
			switch d {
			case BF16:
				want = BF16ToFloat32(Float32ToBF16(v))
			case F16:
				want = F16ToFloat32(Float32ToF16(v))
			}
			if got[i] != want {
				t.Errorf("%s: value %d = %g, want %g", d, i, got[i], want)
			}
		}
	}
	if _, err := DecodeFloat32(I64, make([]byte, 8)); err == nil {
		t.Error("DecodeFloat32(I64) succeeded")
	}
	if _, err := DecodeFloat32(F32, make([]byte, 6)); err == nil {
		t.Error("DecodeFloat32 of 6 bytes of F32 succeeded")
	}
}
