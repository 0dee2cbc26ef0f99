package bench

import "github.com/ragen-go/ragen/model"

// FLOPs counts the matrix-multiply FLOPs (2 per multiply-add) of the
// computation a measurement needs, the convention of PaLM's MFU (and
// Megatron's, nanoGPT's): the linear layers, the attention scores and
// weighted values over the full T×S block, and the heads where they are
// applied. The count is of the model, not of an implementation: the
// baseline's eager attention computes the whole block, ours skips the
// masked upper triangle block-wise (model.attentionBlock), about 7% of an
// update's counted FLOPs on the 50M preset at 845 tokens, and both are
// credited the same. Elementwise work (norms, rotary, softmax) is not
// counted. Padding is not counted: each sequence at its own length, so a
// figure measures useful work and both implementations are credited the
// same FLOPs for the same tokens.

// LinearFLOPsPerToken is the FLOPs of the decoder layers' projections for
// one token: q, k, v, o and the three SwiGLU matrices, in every layer.
func LinearFLOPsPerToken(c model.Config) float64 {
	d, I, L := float64(c.HiddenSize), float64(c.IntermediateSize), float64(c.NumHiddenLayers)
	hd := float64(c.HeadDimension())
	q, kv := float64(c.NumAttentionHeads)*hd, float64(c.NumKeyValueHeads)*hd
	return 2 * L * (d*q + 2*d*kv + q*d + 3*d*I)
}

// AttentionFLOPs is the FLOPs of T queries attending S keys in every
// layer: q·kᵀ and p·v, each 2·T·S·nH·hd.
func AttentionFLOPs(c model.Config, T, S int) float64 {
	q := float64(c.NumAttentionHeads * c.HeadDimension())
	return 2 * float64(c.NumHiddenLayers) * 2 * float64(T) * float64(S) * q
}

// HeadFLOPs is the lm head on n positions.
func HeadFLOPs(c model.Config, n int) float64 {
	return 2 * float64(n) * float64(c.HiddenSize) * float64(c.VocabSize)
}

// ForwardFLOPs is one sequence's forward pass over T new tokens, each
// attending S keys (S = cached + T), with the lm head on heads positions.
func ForwardFLOPs(c model.Config, T, S, heads int) float64 {
	return float64(T)*LinearFLOPsPerToken(c) + AttentionFLOPs(c, T, S) + HeadFLOPs(c, heads)
}

// PrefillFLOPs is a batch of prompts of these lengths, prefilled with the
// head on each one's last position.
func PrefillFLOPs(c model.Config, lengths []int) float64 {
	f := 0.0
	for _, n := range lengths {
		f += ForwardFLOPs(c, n, n, 1)
	}
	return f
}

// DecodeFLOPs is batch sequences with prompt tokens of context decoding
// steps tokens each, one token at a time through the cache: step k feeds
// the token sampled at step k−1 and attends prompt+k keys.
func DecodeFLOPs(c model.Config, batch, prompt, steps int) float64 {
	f := 0.0
	for k := 1; k <= steps; k++ {
		f += ForwardFLOPs(c, 1, prompt+k, 1)
	}
	return float64(batch) * f
}

// TrainFLOPs is forward and backward (3× the forward: the backward computes
// the gradients of both the inputs and the weights) of one sequence of n
// tokens with the head on heads positions. A critic's head is one output
// wide; pass heads 0 and add CriticHeadFLOPs.
func TrainFLOPs(c model.Config, n, heads int) float64 {
	return 3 * ForwardFLOPs(c, n, n, heads)
}

// CriticHeadFLOPs is the critic's one-output score head, forward and
// backward, on n positions.
func CriticHeadFLOPs(c model.Config, n int) float64 {
	return 3 * 2 * float64(n) * float64(c.HiddenSize)
}

// MFU is achieved FLOP/s as a share of the peak (0 when the peak is unknown).
func MFU(flopPerS, peak float64) float64 {
	if peak <= 0 {
		return 0
	}
	return flopPerS / peak
}
