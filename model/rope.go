package model

import (
	"math"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"
)

// Rotary holds inv_freq[k] = 1/θ^(2k/hd), k < hd/2, in fp32, rescaled by
// the config's rotary scaling when it has one.
type Rotary struct {
	InvFreq *ts.Tensor // [hd/2]
}

func newRotary(headDim int, theta float64, scaling RopeScaling, dev gotch.Device) (*Rotary, error) {
	inv := make([]float32, headDim/2)
	for k := range inv {
		f := 1 / math.Pow(theta, float64(2*k)/float64(headDim))
		inv[k] = float32(scaling.apply(f))
	}
	t, err := ts.OfSlice(inv)
	if err != nil {
		return nil, err
	}
	if dev.IsCuda() {
		on, err := t.ToDevice(dev, gotch.Float, false, false, true)
		if err != nil {
			return nil, err
		}
		t = on
	}
	return &Rotary{InvFreq: t}, nil
}

// CosSin returns cos and sin of pos·inv_freq, repeated for both halves
// (HuggingFace's emb = cat(freqs, freqs)), computed in fp32 and cast to
// dtype: each [B, T, 1, hd], broadcasting over heads.
func (r *Rotary) CosSin(pos *ts.Tensor, dtype gotch.DType) (cos, sin *ts.Tensor) {
	var s scope
	defer s.Drop()
	p := s.Op(s.Op(pos.Totype(gotch.Float, false)).Unsqueeze(-1, false)) // [B, T, 1]
	freqs := s.Op(p.Mul(r.InvFreq, false))                               // [B, T, hd/2]
	emb := s.Op(ts.Cat([]*ts.Tensor{freqs, freqs}, -1))                  // [B, T, hd]
	emb = s.Op(emb.Unsqueeze(2, false))                                  // [B, T, 1, hd]
	cos = must(emb.Cos(false))
	sin = must(emb.Sin(false))
	if dtype != gotch.Float {
		cos = must(cos.Totype(dtype, true))
		sin = must(sin.Totype(dtype, true))
	}
	return cos, sin
}

// applyRotary rotates x [B, T, H, hd]: x·cos + rotate_half(x)·sin, with
// rotate_half(x) = cat(−x₂, x₁) for the halves x₁, x₂ of the last dimension.
func applyRotary(x, cos, sin *ts.Tensor) *ts.Tensor {
	var s scope
	defer s.Drop()
	hd := size(x)[3]
	x1 := s.Op(x.Narrow(3, 0, hd/2, false))
	x2 := s.Op(x.Narrow(3, hd/2, hd/2, false))
	rot := s.Op(ts.Cat([]*ts.Tensor{s.Op(x2.Neg(false)), x1}, 3))
	a := s.Op(x.Mul(cos, false))
	b := s.Op(rot.Mul(sin, false))
	return must(a.Add(b, false))
}

// apply rescales one inverse frequency f as Llama 3.1's rotary scaling
// does (transformers' _compute_llama3_parameters): wavelengths longer than
// original/low_freq_factor are stretched by factor, those shorter than
// original/high_freq_factor are kept, and those in between interpolate
// linearly in original/wavelength. Without scaling f is returned as is.
func (r RopeScaling) apply(f float64) float64 {
	if r.Type != "llama3" {
		return f
	}
	orig := float64(r.OriginalMaxPositionEmbeddings)
	lowWavelen, highWavelen := orig/r.LowFreqFactor, orig/r.HighFreqFactor
	wavelen := 2 * math.Pi / f
	switch {
	case wavelen < highWavelen:
		return f
	case wavelen > lowWavelen:
		return f / r.Factor
	}
	smooth := (orig/wavelen - r.LowFreqFactor) / (r.HighFreqFactor - r.LowFreqFactor)
	return (1-smooth)*f/r.Factor + smooth*f
}
