package reference

import (
	"math"
	"runtime"
	"sync"
)

// linear is y = W x + b with W [out, in] row-major, as torch.nn.Linear
// stores it; b is nil for a bias-free layer.
type linear struct {
	out, in int
	w       []float32 // [out, in]
	b       []float32 // [out] or nil
}

// apply computes W x + b, each output accumulated in float64. Large layers
// (the lm_head of a real vocabulary) split their rows over goroutines; each
// output is still one sequential sum, so the result does not depend on the
// split.
func (l linear) apply(x []float32) []float32 {
	if len(x) != l.in {
		panic("reference: linear input has the wrong width")
	}
	y := make([]float32, l.out)
	rows := func(lo, hi int) {
		for o := lo; o < hi; o++ {
			row := l.w[o*l.in : (o+1)*l.in]
			var s float64
			for i, xi := range x {
				s += float64(row[i]) * float64(xi)
			}
			if l.b != nil {
				s += float64(l.b[o])
			}
			y[o] = float32(s)
		}
	}
	workers := runtime.GOMAXPROCS(0)
	if l.out*l.in < 1<<20 || workers == 1 {
		rows(0, l.out)
		return y
	}
	var wg sync.WaitGroup
	chunk := (l.out + workers - 1) / workers
	for lo := 0; lo < l.out; lo += chunk {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			rows(lo, hi)
		}(lo, min(lo+chunk, l.out))
	}
	wg.Wait()
	return y
}

// rmsNorm is Qwen2RMSNorm: x / sqrt(mean(x²) + eps), then times weight
// (HF normalises first, rounds to the input dtype, then scales).
func rmsNorm(x, weight []float32, eps float64) []float32 {
	var ss float64
	for _, v := range x {
		ss += float64(v) * float64(v)
	}
	inv := 1 / math.Sqrt(ss/float64(len(x))+eps)
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = weight[i] * float32(float64(v)*inv)
	}
	return out
}

// inverseFrequencies are the rotary frequencies theta^(-2k/hd), k < hd/2,
// with Llama 3.1's rescaling when rope_scaling asks for it: a frequency
// whose wavelength 2π/f exceeds original/low_freq_factor is divided by
// factor, one whose wavelength is below original/high_freq_factor is kept,
// and in between the two are mixed with weight
// s = (original/wavelength − low) / (high − low) on the kept one.
func inverseFrequencies(c Config) []float64 {
	hd := c.HeadDimension()
	inv := make([]float64, hd/2)
	for k := range inv {
		f := math.Pow(c.RopeTheta, -float64(2*k)/float64(hd))
		if r := c.RopeScaling; r != nil {
			orig := float64(r.OriginalMaxPositionEmbeddings)
			wavelen := 2 * math.Pi / f
			s := (orig/wavelen - r.LowFreqFactor) / (r.HighFreqFactor - r.LowFreqFactor)
			s = min(1, max(0, s)) // 1 keeps f, 0 divides it by factor
			f = s*f + (1-s)*f/r.Factor
		}
		inv[k] = f
	}
	return inv
}

// rope applies rotary position embedding in place to each of the heads of
// width hd packed in x, at position pos, with the inverse frequencies
// invFreq [hd/2]. The rotate-half convention pairs element k with element
// k + hd/2:
//
//	out = x·cos + rotate_half(x)·sin,  rotate_half(x) = cat(-x₂, x₁)
//
// with cos and sin of pos·inv_freq repeated for both halves. Angles are
// computed in float64 (HF uses float32; the difference is at most
// pos·2⁻²⁴ radians).
func rope(x []float32, hd, pos int, invFreq []float64) {
	half := hd / 2
	for h := 0; h+hd <= len(x); h += hd {
		v := x[h : h+hd]
		for k := range half {
			sin, cos := math.Sincos(float64(pos) * invFreq[k])
			x1, x2 := float64(v[k]), float64(v[k+half])
			v[k] = float32(x1*cos - x2*sin)
			v[k+half] = float32(x2*cos + x1*sin)
		}
	}
}

// softmax is exp(s - max) / Σ exp(s - max), in place.
func softmax(s []float64) {
	m := math.Inf(-1)
	for _, v := range s {
		m = max(m, v)
	}
	var sum float64
	for i, v := range s {
		s[i] = math.Exp(v - m)
		sum += s[i]
	}
	for i := range s {
		s[i] /= sum
	}
}

// silu is x·σ(x), the SwiGLU gate activation.
func silu(x float64) float64 { return x / (1 + math.Exp(-x)) }
