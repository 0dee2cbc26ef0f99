package model

import (
	"fmt"
	"math"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"
)

// Sampling chooses the next token from logits.
type Sampling struct {
	Temperature float64 // 0 = greedy (argmax)
	TopP        float64 // nucleus mass kept; 1 (or 0) = off
	TopK        int     // keep the k most likely; 0 or -1 = off
}

// Validate checks the sampling parameters, naming the one at fault.
func (s Sampling) Validate() error {
	switch {
	case s.Temperature < 0 || math.IsNaN(s.Temperature):
		return fmt.Errorf("temperature %g must be ≥ 0", s.Temperature)
	case s.TopP < 0 || s.TopP > 1 || math.IsNaN(s.TopP):
		return fmt.Errorf("top-p %g must be in (0, 1]", s.TopP)
	case s.TopK < -1:
		return fmt.Errorf("top-k %d must be ≥ 1, or 0/-1 for off", s.TopK)
	}
	return nil
}

// sample draws one token per row of logits [B, V] (fp32) and returns the
// ids [B] and their log-probabilities [B] under the model itself, before
// temperature and top-p/top-k: the numbers PPO compares against.
func sample(logits *ts.Tensor, o Sampling) (ids, logp *ts.Tensor) {
	var s scope
	defer s.Drop()
	all := s.Op(logits.LogSoftmax(-1, gotch.Float, false)) // [B, V]
	if o.Temperature == 0 {
		ids = must(logits.Argmax([]int64{-1}, true, false)) // [B, 1]
	} else {
		z := s.Op(logits.DivScalar(ts.FloatScalar(o.Temperature), false))
		if o.TopK > 0 && int64(o.TopK) < size(z)[1] {
			z = s.Keep(topK(z, int64(o.TopK)))
		}
		if o.TopP > 0 && o.TopP < 1 {
			z = s.Keep(topP(z, o.TopP))
		}
		probs := s.Op(z.Softmax(-1, gotch.Float, false))
		ids = must(probs.Multinomial(1, false, false)) // [B, 1]
	}
	logp = must(must(all.Gather(1, ids, false, false)).SqueezeDim(1, true))
	ids = must(ids.SqueezeDim(1, true))
	return ids, logp
}

// topK masks everything below each row's k-th largest logit.
func topK(z *ts.Tensor, k int64) *ts.Tensor {
	var s scope
	defer s.Drop()
	vals, idx := must2(z.Topk(k, -1, true, true, false))
	s.Keep(vals)
	s.Keep(idx)
	kth := s.Op(vals.Narrow(1, k-1, 1, false)) // [B, 1]
	below := s.Op(z.LtTensor(kth, false))
	return must(z.MaskedFill(below, ts.FloatScalar(math.Inf(-1)), false))
}

// topP keeps, per row, the smallest set of most likely tokens whose
// probability reaches p (HuggingFace's TopPLogitsWarper: the most likely
// token is always kept).
func topP(z *ts.Tensor, p float64) *ts.Tensor {
	var s scope
	defer s.Drop()
	sorted, idx := must2(z.Sort(-1, false, false)) // ascending
	s.Keep(sorted)
	s.Keep(idx)
	probs := s.Op(sorted.Softmax(-1, gotch.Float, false))
	cum := s.Op(probs.Cumsum(-1, gotch.Float, false))
	drop := s.Op(cum.Le(ts.FloatScalar(1-p), false)) // [B, V] in sorted order
	V := size(z)[1]
	last := s.Op(drop.Narrow(1, V-1, 1, false))
	check(last.Fill_(ts.IntScalar(0)))                  // keep the most likely token
	dropOrig := s.Op(drop.Scatter(1, idx, drop, false)) // back to vocabulary order
	return must(z.MaskedFill(dropOrig, ts.FloatScalar(math.Inf(-1)), false))
}
