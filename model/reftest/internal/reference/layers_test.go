package reference

import (
	"math"
	"slices"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestRMSNorm(t *testing.T) {
	// mean(x²) = (1+4+9+16)/4 = 7.5, so x is divided by √7.5 = 2.7386128.
	x := []float32{1, 2, 3, 4}
	got := rmsNorm(x, []float32{1, 1, 2, -1}, 0)
	want := []float64{0.36514837, 0.73029674, 2 * 1.0954451, -1.4605935}
	for i := range want {
		if !near(float64(got[i]), want[i], 1e-6) {
			t.Errorf("rmsNorm[%d] = %g, want %g", i, got[i], want[i])
		}
	}
	// eps joins the mean: 1/√(7.5+0.5) = 1/√8.
	got = rmsNorm(x, []float32{1, 1, 1, 1}, 0.5)
	if !near(float64(got[3]), 4/math.Sqrt(8), 1e-6) {
		t.Errorf("rmsNorm with eps: %g, want %g", got[3], 4/math.Sqrt(8))
	}
}

// freqs are the unscaled rotary frequencies of a width-hd head.
func freqs(hd int, theta float64) []float64 {
	return inverseFrequencies(Config{HiddenSize: hd, NumAttentionHeads: 1, RopeTheta: theta})
}

func TestRoPE(t *testing.T) {
	x := []float32{0.3, -1, 2, 0.5, 7, -3, 1, 4} // two heads of width 4
	y := slices.Clone(x)
	rope(y, 4, 0, freqs(4, 1e6))
	if !slices.Equal(x, y) {
		t.Errorf("rope at position 0 changed %v to %v", x, y)
	}
	// A 2-wide head: one pair at frequency 1, rotated by pos radians.
	y = []float32{1, 0}
	rope(y, 2, 1, freqs(2, 1e4))
	if !near(float64(y[0]), math.Cos(1), 1e-7) || !near(float64(y[1]), math.Sin(1), 1e-7) {
		t.Errorf("rope (1,0) by 1 rad = %v, want (cos 1, sin 1)", y)
	}
	// Width 4, theta 100: frequencies 1 and 100^(-2/4) = 0.1, at position 2
	// angles 2 and 0.2. Rotate-half pairs element 0 with 2 and 1 with 3.
	y = []float32{1, 0, 0, 0}
	rope(y, 4, 2, freqs(4, 100))
	want := []float64{math.Cos(2), 0, math.Sin(2), 0}
	for i := range want {
		if !near(float64(y[i]), want[i], 1e-7) {
			t.Errorf("rope e0: %v, want %v", y, want)
			break
		}
	}
	y = []float32{0, 1, 0, 1}
	rope(y, 4, 2, freqs(4, 100))
	c, s := math.Cos(0.2), math.Sin(0.2)
	want = []float64{0, c - s, 0, c + s} // (x1, x2) = (1, 1): (x1 cos − x2 sin, x2 cos + x1 sin)
	for i := range want {
		if !near(float64(y[i]), want[i], 1e-7) {
			t.Errorf("rope e1+e3: %v, want %v", y, want)
			break
		}
	}
}

func TestSoftmaxSilu(t *testing.T) {
	p := []float64{0, math.Log(2), math.Log(3)}
	softmax(p)
	for i, want := range []float64{1.0 / 6, 2.0 / 6, 3.0 / 6} {
		if !near(p[i], want, 1e-12) {
			t.Errorf("softmax = %v", p)
		}
	}
	p = []float64{1000, 1000}
	softmax(p)
	if p[0] != 0.5 || p[1] != 0.5 {
		t.Errorf("softmax of large equal scores = %v", p)
	}
	for _, c := range []struct{ x, want float64 }{{0, 0}, {1, 0.7310585786300049}, {-1, -0.2689414213699951}, {20, 19.999999958776925}} {
		if got := silu(c.x); !near(got, c.want, 1e-12) {
			t.Errorf("silu(%g) = %g, want %g", c.x, got, c.want)
		}
	}
}

func TestLinear(t *testing.T) {
	l := linear{out: 2, in: 3, w: []float32{1, 2, 3, 4, 5, 6}, b: []float32{0.5, -1}}
	if got := l.apply([]float32{1, 0, -1}); !slices.Equal(got, []float32{-1.5, -3}) {
		t.Errorf("linear = %v, want [-1.5 -3]", got)
	}
	// A layer big enough to be split over goroutines gives the same sums.
	big := linear{out: 1 << 11, in: 1 << 10, w: make([]float32, 1<<21)}
	x := make([]float32, big.in)
	for i := range big.w {
		big.w[i] = float32(i%7) - 3
	}
	for i := range x {
		x[i] = float32(i%5) * 0.25
	}
	got := big.apply(x)
	for _, o := range []int{0, 1, 1000, big.out - 1} {
		var s float64
		for i := range x {
			s += float64(big.w[o*big.in+i]) * float64(x[i])
		}
		if got[o] != float32(s) {
			t.Errorf("split linear row %d = %g, want %g", o, got[o], s)
		}
	}
}

func TestAttendGQA(t *testing.T) {
	// One key: every query head returns its KV head's value, which pins the
	// head mapping: query heads 0,1 read KV head 0; heads 2,3 read KV head 1.
	q := [][]float32{{1, 0, 0, 1, 1, 1, -1, 0}}
	k := [][]float32{{1, 2, 3, 4}}
	v := [][]float32{{10, 20, 30, 40}}
	out := attend(q, k, v, 4, 2, 2, func(i, j int) bool { return true })
	if want := []float32{10, 20, 10, 20, 30, 40, 30, 40}; !slices.Equal(out[0], want) {
		t.Errorf("GQA output %v, want %v", out[0], want)
	}
	// Two keys with hd = 1: weights softmax(q·k/1) = softmax(0, ln 3).
	q = [][]float32{{1}, {1}}
	k = [][]float32{{0}, {float32(math.Log(3))}}
	v = [][]float32{{4}, {8}}
	causal := func(i, j int) bool { return j <= i }
	out = attend(q, k, v, 1, 1, 1, causal)
	if out[0][0] != 4 || !near(float64(out[1][0]), 0.25*4+0.75*8, 1e-6) {
		t.Errorf("attention %v, want [[4] [7]]", out)
	}
	// A query that may attend nothing averages every value, as HF eager.
	out = attend(q, k, v, 1, 1, 1, func(i, j int) bool { return false })
	if out[0][0] != 6 || out[1][0] != 6 {
		t.Errorf("fully masked attention %v, want [[6] [6]]", out)
	}
}

func TestPositions(t *testing.T) {
	cases := []struct{ mask, want []int }{
		{[]int{1, 1, 1}, []int{0, 1, 2}},
		{[]int{0, 0, 1, 1, 1}, []int{0, 0, 0, 1, 2}},
		{[]int{1, 1, 0}, []int{0, 1, 1}},
	}
	for _, c := range cases {
		if got := positions(c.mask); !slices.Equal(got, c.want) {
			t.Errorf("positions(%v) = %v, want %v", c.mask, got, c.want)
		}
	}
}

// TestLlama3Frequencies checks Llama 3.1's rescaling on the frequencies of a
// width-8 head, theta 10000, original context 64, factor 8, low 1, high 4:
// wavelengths 2π·10000^(k/4) are 6.28, 62.8, 628, 6283; high_freq_wavelen
// is 64/4 = 16 and low_freq_wavelen 64/1 = 64. So k=0 is kept, k=2 and 3
// are divided by 8, and k=1 (62.8, between 16 and 64) is mixed with
// s = (64/62.83 − 1)/(4 − 1) = 0.00619 on the kept frequency.
func TestLlama3Frequencies(t *testing.T) {
	c := Config{HiddenSize: 8, NumAttentionHeads: 1, RopeTheta: 1e4, RopeScaling: &RopeScaling{
		RopeType: "llama3", Factor: 8, LowFreqFactor: 1, HighFreqFactor: 4, OriginalMaxPositionEmbeddings: 64}}
	got := inverseFrequencies(c)
	f1 := math.Pow(1e4, -0.25)
	s := (64/(2*math.Pi/f1) - 1) / 3
	want := []float64{1, s*f1 + (1-s)*f1/8, math.Pow(1e4, -0.5) / 8, math.Pow(1e4, -0.75) / 8}
	for k := range want {
		if !near(got[k], want[k], 1e-12) {
			t.Errorf("inv_freq[%d] = %g, want %g", k, got[k], want[k])
		}
	}
}
