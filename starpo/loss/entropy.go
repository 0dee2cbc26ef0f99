package loss

import (
	"github.com/sugarme/gotch/ts"

	"github.com/ragen-go/ragen/internal/torchrt"
)

// EntropyLoss is the entropy term of the actor loss: agg(H) over the trained
// positions, H [B, T] the per-token categorical entropy of the policy
// (docs/ragen.md#policy-loss; the actor subtracts entropy_coeff 0.001 times
// it). It returns the scalar tensor and its value, the metric
// actor/entropy_loss. An unknown mode or mismatched shapes are errors.
func EntropyLoss(entropy, mask *ts.Tensor, mode AggMode) (loss *ts.Tensor, v float64, err error) {
	if err := mode.Check(); err != nil {
		return nil, 0, err
	}
	defer torchrt.Catch(&err, "entropy loss")
	s := &scope{}
	defer s.Drop()
	m := newMasked(s, mask, accDType(entropy))
	out := m.aggregate(m.clean("entropy", entropy), mode)
	v = value(out)
	return s.Release(out), v, nil
}
