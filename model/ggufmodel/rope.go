package ggufmodel

import (
	"fmt"
	"math"

	"github.com/ragen-go/ragen/gguf"
)

// ropeFreqsName is the tensor in which llama.cpp stores Llama 3.1's rope
// scaling: per rotary frequency, the divisor of the plain frequency.
const ropeFreqsName = "rope_freqs.weight"

// llama3Scaling recovers config.json's rope_scaling (rope_type llama3)
// from a rope_freqs tensor, which holds the scaling's effect but not its
// parameters. The divisors are 1 for short wavelengths, factor for long
// ones, and 1/((1−s)/factor + s) in between, with s linear in 1/wavelength:
// s = (original/wavelength − low)/(high − low). So factor is the largest
// divisor, and two in-between divisors give low and high for the original
// context (from the metadata, or Llama 3's 8192); with fewer, Llama 3.1's
// low 1 and high 4 are tried. Whatever is found must reproduce every
// divisor, or the file is refused.
func llama3Scaling(t *gguf.Tensor, theta float64, headDim int, original int) (map[string]any, error) {
	div, err := t.Float32()
	if err != nil {
		return nil, err
	}
	if len(div) != headDim/2 {
		return nil, fmt.Errorf("tensor %s has %d values for a head width of %d", ropeFreqsName, len(div), headDim)
	}
	factor := 1.0
	for _, d := range div {
		if !(d >= 1) || math.IsInf(float64(d), 0) {
			return nil, fmt.Errorf("tensor %s holds %g, not a divisor ≥ 1 of a rotary frequency", ropeFreqsName, d)
		}
		factor = max(factor, float64(d))
	}
	if factor == 1 {
		return nil, nil // no frequency is scaled: plain rotary embeddings
	}
	orig := float64(original)
	type point struct{ invWavelen, s float64 }
	var mid []point
	for k, d := range div {
		if d == 1 || float64(d) == factor {
			continue
		}
		s := (1/float64(d) - 1/factor) / (1 - 1/factor)
		f := math.Pow(theta, -float64(2*k)/float64(headDim))
		mid = append(mid, point{f / (2 * math.Pi), s})
	}
	low, high := 1.0, 4.0
	if n := len(mid); n >= 2 && mid[0].s != mid[n-1].s {
		a, b := mid[0], mid[n-1]
		delta := orig * (a.invWavelen - b.invWavelen) / (a.s - b.s)
		low = orig*a.invWavelen - a.s*delta
		high = low + delta
	}
	spec := Spec{RopeTheta: theta, HeadDim: headDim, Llama3: [3]float64{factor, low, high}, Llama3Original: original}
	for k, want := range spec.ropeFactors() {
		if math.Abs(float64(want-div[k])) > 1e-4*float64(div[k]) {
			return nil, fmt.Errorf("tensor %s is not Llama 3.1's rope scaling (divisor %d is %g; factor %g, low %g, high %g, original context %d give %g)",
				ropeFreqsName, k, div[k], factor, low, high, original, want)
		}
	}
	return map[string]any{"rope_type": "llama3", "factor": factor, "low_freq_factor": low,
		"high_freq_factor": high, "original_max_position_embeddings": original}, nil
}
