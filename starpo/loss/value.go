package loss

import (
	"fmt"
	"math"

	"github.com/sugarme/gotch/ts"

	"github.com/ragen-go/ragen/internal/torchrt"
)

// ValueMetrics are the clipped value loss's metrics, over the trained
// positions of one call.
type ValueMetrics struct {
	VFLoss     float64 // critic/vf_loss: the loss, ½ included
	VFClipFrac float64 // critic/vf_clipfrac: share of tokens where the clipped term won
	VPredMean  float64 // critic/vpred_mean: masked mean of the predicted values
}

// Metrics returns the metrics under RAGEN's names (docs/ragen.md#metrics).
func (v ValueMetrics) Metrics() map[string]float64 {
	return map[string]float64{
		"critic/vf_loss":     v.VFLoss,
		"critic/vf_clipfrac": v.VFClipFrac,
		"critic/vpred_mean":  v.VPredMean,
	}
}

// ValueOptions are the clipped value loss's settings. StarPO's are Clip
// 0.5, Agg TokenMean.
type ValueOptions struct {
	Clip float64 // the values move at most this far from the rollout's (cliprange_value)
	Agg  AggMode // loss_agg_mode
}

// ValueLoss is verl's compute_value_loss, the clipped critic loss
// (docs/ragen.md#value-loss):
//
//	v_clip = clip(v, v_old − Clip, v_old + Clip)
//	loss   = ½ · agg(max((v − R)², (v_clip − R)²))
//
// v (which carries the graph), oldV (the rollout's values) and returns R
// are [B, T] like mask. A negative or non-finite Clip, an unknown mode or
// mismatched shapes are errors.
func ValueLoss(v, oldV, returns, mask *ts.Tensor, o ValueOptions) (loss *ts.Tensor, vm ValueMetrics, err error) {
	clip, mode := o.Clip, o.Agg
	if !(clip >= 0) || math.IsInf(clip, 1) {
		return nil, vm, fmt.Errorf("value loss: cliprange_value %v is not a non-negative number", clip)
	}
	if err := mode.Check(); err != nil {
		return nil, vm, err
	}
	defer torchrt.Catch(&err, "value loss")
	s := &scope{}
	defer s.Drop()
	m := newMasked(s, mask, accDType(v))
	vp := m.clean("vpreds", v)
	old := m.clean("values", oldV)
	R := m.clean("returns", returns)

	lo := s.Op(old.SubScalar(ts.FloatScalar(clip), false))
	hi := s.Op(old.AddScalar(ts.FloatScalar(clip), false))
	vclip := s.Op(vp.ClampTensor(lo, hi, false))
	l1 := s.Op(s.Op(vp.Sub(R, false)).Square(false))
	l2 := s.Op(s.Op(vclip.Sub(R, false)).Square(false))
	worst := s.Op(l1.Maximum(l2, false))

	out := s.Op(m.aggregate(worst, mode).MulScalar(ts.FloatScalar(0.5), false))
	vm.VFLoss = value(out)
	vm.VFClipFrac = m.fraction(s.Op(l2.GtTensor(l1, false)))
	vm.VPredMean = value(m.mean(vp))
	return s.Release(out), vm, nil
}
