package model

import (
	"fmt"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"

	"github.com/ragen-go/ragen/internal/torchrt"
)

// ScoreOptions bounds the memory of sequence scoring.
type ScoreOptions struct {
	MicroBatch int        // sequences per forward pass; 0 = all
	ChunkRows  int        // token positions per lm-head chunk; 0 = 1024
	Only       *ts.Tensor // [B, T−1] or nil: score only where non-zero (0 elsewhere)
}

// TokenScores are per-token statistics of a batch, [B, T−1] fp32 on the
// model's device: position j describes the prediction of token j+1 from
// tokens ≤ j (the one-token shift of causal language modelling).
type TokenScores struct {
	LogProbs *ts.Tensor // log p(ids[:, j+1] | ids[:, ≤j])
	Entropy  *ts.Tensor // entropy of the distribution at position j
}

// Drop frees the scores.
func (s TokenScores) Drop() { dropAll(s.LogProbs, s.Entropy) }

// Score computes per-token log-probabilities and entropies of ids [B, T]
// (left-padded, mask [B, T] int64) without autograd. The lm head runs on
// ChunkRows positions at a time, so the B×T×V logits are never
// materialised: peak extra memory is ChunkRows×V fp32.
func (m *CausalLM) Score(ids, mask *ts.Tensor, o ScoreOptions) (out TokenScores, err error) {
	sh := size(ids)
	if len(sh) != 2 || sh[1] < 2 {
		return out, fmt.Errorf("scoring needs ids of shape [B, T≥2], got %v", sh)
	}
	if ms := size(mask); !equalShape(ms, sh) {
		return out, fmt.Errorf("mask shape %v differs from ids shape %v", ms, sh)
	}
	if o.Only != nil && !equalShape(size(o.Only), []int64{sh[0], sh[1] - 1}) {
		return out, fmt.Errorf("scoring: the position selection has shape %v, want [%d, %d]", size(o.Only), sh[0], sh[1]-1)
	}
	err = torchrt.NoGrad(func() (err error) {
		defer torchrt.Catch(&err, "scoring")
		out = m.score(ids, mask, o)
		return nil
	})
	return out, err
}

func (m *CausalLM) score(ids, mask *ts.Tensor, o ScoreOptions) TokenScores {
	B := size(ids)[0]
	mb := int64(o.MicroBatch)
	if mb <= 0 || mb > B {
		mb = B
	}
	var lps, ents []*ts.Tensor
	defer func() { dropAll(lps...); dropAll(ents...) }()
	for start := int64(0); start < B; start += mb {
		n := min(mb, B-start)
		var only *ts.Tensor
		if o.Only != nil {
			only = must(o.Only.Narrow(0, start, n, false))
		}
		lp, ent := m.scoreMicroBatch(must(ids.Narrow(0, start, n, false)), must(mask.Narrow(0, start, n, false)), only, o.ChunkRows)
		lps, ents = append(lps, lp), append(ents, ent)
	}
	return TokenScores{LogProbs: must(ts.Cat(lps, 0)), Entropy: must(ts.Cat(ents, 0))}
}

// scoreMicroBatch scores one micro-batch; it takes ownership of ids, mask
// and only (nil = every position).
func (m *CausalLM) scoreMicroBatch(ids, mask, only *ts.Tensor, chunkRows int) (lp, ent *ts.Tensor) {
	var s scope
	defer s.Drop()
	s.Keep(ids)
	s.Keep(mask)
	if only != nil {
		s.Keep(only)
	}
	sh := size(ids)
	B, T := sh[0], sh[1]
	pos := s.Op(PositionsFromMask(mask))
	bias := s.Keep(attentionBias(mask, T, m.DType))
	h := s.Keep(m.Forward(Inputs{IDs: ids, Positions: pos, Bias: bias}, nil)) // [B, T, d]
	d := size(h)[2]
	h = s.Op(h.Narrow(1, 0, T-1, false))                 // [B, T−1, d]
	h = s.Op(h.Reshape([]int64{B * (T - 1), d}, false))  // [N, d]
	tgt := s.Op(ids.Narrow(1, 1, T-1, false))            // [B, T−1]
	tgt = s.Op(tgt.Reshape([]int64{B * (T - 1)}, false)) // [N]
	var rows *ts.Tensor
	if only != nil {
		nz := s.Op(s.Op(only.Reshape([]int64{-1}, false)).Nonzero(false))
		rows = s.Op(nz.Reshape([]int64{-1}, false))
		h = s.Op(h.IndexSelect(0, rows, false))
		tgt = s.Op(tgt.IndexSelect(0, rows, false))
	}
	var lpFlat, entFlat *ts.Tensor // [N]
	if size(h)[0] == 0 {
		lpFlat = s.Op(ts.Zeros([]int64{B * (T - 1)}, gotch.Float, deviceOf(ids)))
		entFlat = s.Op(ts.Zeros([]int64{B * (T - 1)}, gotch.Float, deviceOf(ids)))
	} else {
		lpFlat, entFlat = m.headStats(h, tgt, chunkRows)
		s.Keep(lpFlat)
		s.Keep(entFlat)
		if rows != nil {
			lpFlat = s.Keep(scatterRows(lpFlat, rows, B*(T-1)))
			entFlat = s.Keep(scatterRows(entFlat, rows, B*(T-1)))
		}
	}
	return must(lpFlat.View([]int64{B, T - 1}, false)), must(entFlat.View([]int64{B, T - 1}, false))
}

// headStats applies the lm head to rows of h [N, d] in chunks and returns
// log p(tgt) and the entropy per row, [N] fp32.
func (m *CausalLM) headStats(h, tgt *ts.Tensor, chunkRows int) (lp, ent *ts.Tensor) {
	if chunkRows <= 0 {
		chunkRows = 1024
	}
	N := size(h)[0]
	var lps, ents []*ts.Tensor
	defer func() { dropAll(lps...); dropAll(ents...) }()
	for start := int64(0); start < N; start += int64(chunkRows) {
		n := min(int64(chunkRows), N-start)
		l, e := chunkStats(m, must(h.Narrow(0, start, n, false)), must(tgt.Narrow(0, start, n, false)))
		lps, ents = append(lps, l), append(ents, e)
	}
	return must(ts.Cat(lps, 0)), must(ts.Cat(ents, 0))
}

// chunkStats: with z the logits of one chunk and lse = logsumexp(z),
// log p(y) = z_y − lse and H = lse − Σ softmax(z)·z. Takes ownership of h, tgt.
func chunkStats(m *CausalLM, h, tgt *ts.Tensor) (lp, ent *ts.Tensor) {
	var s scope
	defer s.Drop()
	s.Keep(h)
	s.Keep(tgt)
	z := s.Keep(m.Logits(h))                                             // [n, V] fp32
	lse := s.Op(z.Logsumexp([]int64{-1}, true, false))                   // [n, 1]
	zy := s.Op(z.Gather(1, s.Op(tgt.Unsqueeze(1, false)), false, false)) // [n, 1]
	p := s.Op(s.Op(z.Sub(lse, false)).Exp(false))                        // [n, V]
	pz := s.Op(s.Op(p.Mul(z, false)).SumDimIntlist([]int64{-1}, true, gotch.Float, false))
	lp = must(s.Op(zy.Sub(lse, false)).SqueezeDim(1, false))
	ent = must(s.Op(lse.Sub(pz, false)).SqueezeDim(1, false))
	return lp, ent
}

// scatterRows places v [n] at rows of a zero vector [N].
func scatterRows(v, rows *ts.Tensor, N int64) *ts.Tensor {
	full := must(ts.Zeros([]int64{N}, v.DType(), deviceOf(v)))
	check(full.IndexCopy_(0, rows, v))
	return full
}
