package loss

import (
	"fmt"

	"github.com/sugarme/gotch/ts"

	"github.com/ragen-go/ragen/internal/torchrt"
)

// AggMode is verl's loss_agg_mode: how a [B, T] loss matrix becomes one
// number. It changes the effective loss scale, so it is chosen explicitly.
type AggMode string

// The aggregation modes, with L the loss matrix, m the mask, n_b = Σ_t m_bt.
// They are RAGEN's pinned verl's agg_loss (docs/ragen.md#sources,
// #policy-loss), which later verl changed; parity/ checks the relation against
// verl 0.9.1. verl 0.9.1 leaves rows without a trained token out of the
// seq-mean averages, divides seq-mean-token-sum-norm by that row count as well
// as by T, and divides token-mean by Σ m without the 1e-8. ragen-go keeps the
// pinned semantics on purpose; under RAGEN's setting, "loss_agg_mode:
// token-mean" (docs/ragen.md#defaults), the two agree to 1e-8/Σ m.
const (
	// TokenMean is Σ L·m / (Σ m + 1e-8): every trained token of the batch
	// weighs the same. verl's default; RAGEN applies it per micro-batch of
	// one sequence, which makes it SeqMeanTokenMean at mini-batch level
	// (docs/ragen.md#policy-loss).
	TokenMean AggMode = "token-mean"
	// SeqMeanTokenSum is mean_b Σ_t L·m: each sequence's summed loss.
	SeqMeanTokenSum AggMode = "seq-mean-token-sum"
	// SeqMeanTokenMean is mean_b (Σ_t L·m / (n_b + 1e-8)): each sequence's
	// mean loss, averaged over sequences. A sequence with no trained token
	// contributes 0 and still counts, as TokenMean on it alone would give.
	SeqMeanTokenMean AggMode = "seq-mean-token-mean"
	// SeqMeanTokenSumNorm is Σ L·m / T: summed loss over the padded length.
	SeqMeanTokenSumNorm AggMode = "seq-mean-token-sum-norm"
)

// Aggregate is verl's agg_loss: lossMat [B, T] reduced over the trained
// positions of mask [B, T] by mode, as a scalar tensor that keeps lossMat's
// graph. Untrained positions of lossMat are ignored, whatever they hold.
// An unknown mode or mismatched shapes are errors.
func Aggregate(lossMat, mask *ts.Tensor, mode AggMode) (loss *ts.Tensor, err error) {
	if err := mode.Check(); err != nil {
		return nil, err
	}
	defer torchrt.Catch(&err, "aggregating a loss")
	s := &scope{}
	defer s.Drop()
	m := newMasked(s, mask, accDType(lossMat))
	return s.Release(m.aggregate(m.clean("loss", lossMat), mode)), nil
}

// Check says whether mode is one of the aggregation modes.
func (mode AggMode) Check() error {
	switch mode {
	case TokenMean, SeqMeanTokenSum, SeqMeanTokenMean, SeqMeanTokenSumNorm:
		return nil
	}
	return fmt.Errorf("loss aggregation mode %q is not one of token-mean, seq-mean-token-sum, seq-mean-token-mean, "+
		"seq-mean-token-sum-norm", string(mode))
}

// aggregate reduces l, already zero at untrained positions, by mode.
func (m *masked) aggregate(l *ts.Tensor, mode AggMode) *ts.Tensor {
	s := m.s
	dt := m.weight.DType()
	rows := func(x *ts.Tensor) *ts.Tensor { // [B]: Σ_t x
		return s.Op(x.SumDimIntlist([]int64{-1}, false, dt, false))
	}
	switch mode {
	case TokenMean:
		return m.mean(l)
	case SeqMeanTokenSum:
		return s.Op(rows(l).Mean(dt, false))
	case SeqMeanTokenMean:
		n := s.Op(rows(m.weight).AddScalar(ts.FloatScalar(1e-8), false))
		return s.Op(s.Op(rows(l).Div(n, false)).Mean(dt, false))
	case SeqMeanTokenSumNorm:
		return s.Op(s.Op(l.Sum(dt, false)).DivScalar(ts.FloatScalar(float64(m.shape[1])), false))
	}
	panic("loss: unchecked aggregation mode " + string(mode))
}
