package gguf

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestQuantizeBlocks quantizes hand-made blocks whose bytes follow from
// the reference rules by hand.
func TestQuantizeBlocks(t *testing.T) {
	block := func(f func(j int) float32) []float32 {
		x := make([]float32, 32)
		for j := range x {
			x[j] = f(j)
		}
		return x
	}
	// Q8_0 with step 1 (max 127): x = j − 15.5 are exact ties, which round
	// away from zero, to j − 16 below zero and j − 15 above.
	ties := block(func(j int) float32 { return float32(j) - 15.5 })
	ties[31] = 127
	wantTies := le16b(h1)
	for j := range 32 {
		q := j - 15
		if j < 16 {
			q = j - 16
		}
		if j == 31 {
			q = 127
		}
		wantTies = append(wantTies, byte(int8(q)))
	}
	// Q4_0: the element of largest magnitude, −8 at index 0, sets d = 1
	// and level 0; level = trunc(x + 8.5), 16 clipped to 15.
	q40 := block(func(j int) float32 { return float32(j%16) - 7.75 })
	q40[0] = -8
	var wantQ40 []byte
	wantQ40 = append(wantQ40, le16b(h1)...)
	for j := range 16 {
		lv := func(x float32) byte { return byte(min(15, int(x+8.5))) }
		wantQ40 = append(wantQ40, lv(q40[j])|lv(q40[j+16])<<4)
	}
	// Q4_1: min 0, max 15 give d = 1, m = 0; level = trunc(x + 0.5).
	q41 := block(func(j int) float32 { return float32(j%15) + 0.25 })
	q41[0], q41[31] = 0, 15
	wantQ41 := append(le16b(h1), le16b(0)...)
	for j := range 16 {
		lv := func(x float32) byte { return byte(x + 0.5) }
		wantQ41 = append(wantQ41, lv(q41[j])|lv(q41[j+16])<<4)
	}
	zero := make([]float32, 32)
	cases := []struct {
		name string
		typ  Type
		in   []float32
		want []byte
	}{
		{"Q8_0 ties", Q8_0, ties, wantTies},
		{"Q8_0 zero", Q8_0, zero, make([]byte, 34)},
		{"Q4_0", Q4_0, q40, wantQ40},
		// d = 0/−8 = −0: level 8 everywhere, d stored as −0.
		{"Q4_0 zero", Q4_0, zero, slices.Concat(le16b(0x8000), slices.Repeat([]byte{0x88}, 16))},
		{"Q4_1", Q4_1, q41, wantQ41},
		{"Q4_1 zero", Q4_1, zero, make([]byte, 20)},
		{"Q5_0 zero", Q5_0, zero, slices.Concat(le16b(0x8000), []byte{0xff, 0xff, 0xff, 0xff}, make([]byte, 16))},
		{"F32", F32, []float32{1.5}, []byte{0, 0, 0xc0, 0x3f}},
		{"F16", F16, []float32{0.5, -2}, []byte{0, 0x38, 0, 0xc0}},
		{"BF16", BF16, []float32{1.5}, []byte{0xc0, 0x3f}},
	}
	for _, c := range cases {
		got, err := Quantize(c.typ, c.in)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s:\n got % x\nwant % x", c.name, got, c.want)
		}
	}
}

// TestQuantizeError bounds the round-trip error of each block type on
// random data: half a step (d/2), one step for Q4_0 and Q5_0 (whose
// largest positive element may be clipped from level 16 or 32 to the
// top), plus the error of storing d and m as halves (2⁻¹¹ relative, or
// 2⁻²⁵ absolute for subnormal halves, times the largest level).
func TestQuantizeError(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	x := make([]float32, 64*32)
	for i := range x {
		x[i] = float32(rng.NormFloat64() * math.Pow(10, float64(i/32%7-3)))
	}
	cases := []struct {
		typ             Type
		steps, maxLevel float64
	}{
		{Q8_0, 0.5, 127},
		{Q4_0, 1, 8},
		{Q4_1, 0.5, 15},
		{Q5_0, 1, 16},
		{Q5_1, 0.5, 31},
	}
	for _, c := range cases {
		q, err := Quantize(c.typ, x)
		if err != nil {
			t.Fatal(err)
		}
		y, err := Dequantize(c.typ, q, len(x))
		if err != nil {
			t.Fatal(err)
		}
		for b := 0; b < len(x); b += 32 {
			lo, hi := minMax(x[b : b+32])
			step := math.Max(math.Abs(float64(lo)), math.Abs(float64(hi))) / c.maxLevel
			if c.typ == Q4_1 || c.typ == Q5_1 {
				step = float64(hi-lo) / c.maxLevel
			}
			bound := c.steps*step + (c.maxLevel*step+math.Abs(float64(lo)))*0x1p-11 + (c.maxLevel+1)*0x1p-25
			for j := b; j < b+32; j++ {
				if e := math.Abs(float64(x[j] - y[j])); e > bound*1.0001 {
					t.Fatalf("%v: element %d: %g -> %g, error %g > %g", c.typ, j, x[j], y[j], e, bound)
				}
			}
		}
	}
	// The plain types: F32 is exact, F16 and BF16 round to nearest.
	for _, typ := range []Type{F32, F16, BF16} {
		q, _ := Quantize(typ, x)
		y, _ := Dequantize(typ, q, len(x))
		rel := map[Type]float64{F32: 0, F16: 0x1p-11, BF16: 0x1p-8}[typ]
		for j := range x {
			e := math.Abs(float64(x[j] - y[j]))
			if e > rel*math.Abs(float64(x[j])) && e > 0x1p-25 {
				t.Fatalf("%v: %g -> %g", typ, x[j], y[j])
			}
		}
	}
}

func TestQuantizeErrors(t *testing.T) {
	cases := []struct {
		name string
		typ  Type
		n    int
		kind error
		want string
	}{
		{"K-quant", Q4_K, 256, ErrUnsupported, "gguf: type Q4_K (12) cannot be written by ragen (it writes F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1)"},
		{"partial block", Q4_0, 40, ErrMalformed, "gguf: 40 elements are not a whole number of Q4_0 blocks of 32"},
	}
	for _, c := range cases {
		_, err := Quantize(c.typ, make([]float32, c.n))
		if err == nil || err.Error() != c.want || !errors.Is(err, c.kind) {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
}
