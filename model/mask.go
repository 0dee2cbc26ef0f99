package model

import (
	"math"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"

	"github.com/ragen-go/ragen/internal/torchrt"
)

// minValue is the additive mask value of a dtype (torch.finfo(dtype).min,
// as HuggingFace uses): finite, so a row with every key masked (a padding
// query) softmaxes to a uniform row instead of NaN.
func minValue(dt gotch.DType) float64 {
	switch dt {
	case gotch.BFloat16:
		return -3.3895313892515355e38
	case gotch.Half:
		return -65504
	default:
		return -math.MaxFloat32
	}
}

// AttentionBias builds the additive mask [B, 1, T, S] for T queries that are
// the last T of S positions: query i may attend key j when j ≤ S−T+i
// (causal) and keyMask[b, j] = 1 (not padding). keyMask is [B, S] int64.
func AttentionBias(keyMask *ts.Tensor, T int64, dt gotch.DType) (bias *ts.Tensor, err error) {
	defer torchrt.Catch(&err, "building the attention mask")
	return attentionBias(keyMask, T, dt), nil
}

func attentionBias(keyMask *ts.Tensor, T int64, dt gotch.DType) *ts.Tensor {
	var s scope
	defer s.Drop()
	sh := size(keyMask)
	B, S := sh[0], sh[1]
	dev := deviceOf(keyMask)
	causal := s.Op(s.Op(ts.Ones([]int64{T, S}, gotch.Bool, dev)).Tril(S-T, false)) // [T, S]
	causal = s.Op(causal.View([]int64{1, 1, T, S}, false))
	keys := s.Op(s.Op(keyMask.Ne(ts.IntScalar(0), false)).View([]int64{B, 1, 1, S}, false))
	allowed := s.Op(causal.LogicalAnd(keys, false)) // [B, 1, T, S]
	blocked := s.Op(allowed.LogicalNot(false))
	zeros := s.Op(ts.Zeros([]int64{B, 1, T, S}, dt, dev))
	return must(zeros.MaskedFill(blocked, ts.FloatScalar(minValue(dt)), false))
}

// PositionsFromMask is HuggingFace's and RAGEN's position rule for a
// left-padded batch: cumsum(mask) − 1, clamped at 0. mask is [B, T] int64.
func PositionsFromMask(mask *ts.Tensor) (pos *ts.Tensor, err error) {
	defer torchrt.Catch(&err, "computing positions")
	var s scope
	defer s.Drop()
	c := s.Op(mask.Cumsum(-1, gotch.Int64, false))
	c = s.Op(c.SubScalar(ts.IntScalar(1), false))
	return must(c.ClampMin(ts.IntScalar(0), false)), nil
}
