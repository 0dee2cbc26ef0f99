package model

import (
	"fmt"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"

	"github.com/ragen-go/ragen/internal/torchrt"
)

// TrainScores is a training forward pass: per-token log-probabilities and
// entropies [B, T−1] that a loss can be built on, with a Backward that sends
// the loss's gradient into the model's weights.
//
// The lm head is the memory problem of RL on a 151,936-token vocabulary:
// autograd through B×T×V logits would keep them all for the backward pass.
// So the head is run in chunks outside autograd, and its gradient is
// computed in closed form, chunk by chunk again, from the gradients of the
// loss with respect to logp and H:
//
//	∂logp_y/∂z = onehot(y) − p        ∂H/∂z = −p ⊙ (log p + H)
//
// giving ∂L/∂z per chunk, then ∂L/∂h = ∂L/∂z·W and ∂L/∂W = (∂L/∂z)ᵀ·h. One
// autograd backward of Σ h·∂L/∂h + Σ W·∂L/∂W finishes the job through the
// backbone (and adds ∂L/∂W to the head's, or the tied embedding's, grad).
// Peak extra memory is one chunk of logits, ChunkRows×V, at any length.
type TrainScores struct {
	LogProbs *ts.Tensor // [B, T−1] leaf: build the loss on it
	Entropy  *ts.Tensor // [B, T−1] leaf

	m      *CausalLM
	hidden *ts.Tensor // [n, d] with the backbone's graph: the scored rows of the N = B·(T−1)
	target *ts.Tensor // [n] int64
	rows   *ts.Tensor // [n] int64 indices into N; nil = all rows
	n      int64      // N
	chunk  int64
}

// ScoreForTraining runs the backbone with autograd on ids [B, T] (left-
// padded, mask [B, T] int64) and the head in chunks of chunkRows positions
// (0 = 1024).
//
// only [B, T−1] (any dtype, may be nil) limits the head to the positions
// where it is non-zero, typically the loss mask: elsewhere LogProbs and
// Entropy are 0 and get no gradient. In RL the prompt and the environment's
// turns are most of each sequence, and the head is most of the cost of a
// small model on a 151k vocabulary, so this is where training time goes.
func (m *CausalLM) ScoreForTraining(ids, mask, only *ts.Tensor, chunkRows int) (out *TrainScores, err error) {
	sh := size(ids)
	if len(sh) != 2 || sh[1] < 2 {
		return nil, fmt.Errorf("scoring needs ids of shape [B, T≥2], got %v", sh)
	}
	if only != nil && !equalShape(size(only), []int64{sh[0], sh[1] - 1}) {
		return nil, fmt.Errorf("scoring: the position selection has shape %v, want [%d, %d]", size(only), sh[0], sh[1]-1)
	}
	if chunkRows <= 0 {
		chunkRows = 1024
	}
	defer torchrt.Catch(&err, "training forward pass")
	var s scope
	defer s.Drop()
	B, T := sh[0], sh[1]
	pos := s.Op(PositionsFromMask(mask))
	bias := s.Keep(attentionBias(mask, T, m.DType))
	h := s.Keep(m.Forward(Inputs{IDs: ids, Positions: pos, Bias: bias}, nil)) // [B, T, d]
	d := size(h)[2]
	h = s.Op(h.Narrow(1, 0, T-1, false))
	hidden := must(h.Reshape([]int64{B * (T - 1), d}, false)) // [N, d], graph kept
	tgt := s.Op(ids.Narrow(1, 1, T-1, false))
	target := must(tgt.Reshape([]int64{B * (T - 1)}, false))
	out = &TrainScores{m: m, chunk: int64(chunkRows), n: B * (T - 1), hidden: hidden, target: target}
	if only != nil {
		flatOnly := s.Op(only.Reshape([]int64{-1}, false))
		nz := s.Op(flatOnly.Nonzero(false)) // [n, 1]
		out.rows = must(nz.Reshape([]int64{-1}, false))
		if size(out.rows)[0] == 0 {
			out.Drop()
			return nil, fmt.Errorf("scoring: the position selection selects no position")
		}
		out.hidden = must(hidden.IndexSelect(0, out.rows, true))
		out.target = must(target.IndexSelect(0, out.rows, true))
	}
	err = torchrt.NoGrad(func() (err error) {
		defer torchrt.Catch(&err, "lm head")
		hd := s.Op(out.hidden.Detach(false))
		lp, ent := m.headStats(hd, out.target, chunkRows)
		lp, ent = out.scatter(lp), out.scatter(ent)
		out.LogProbs = leaf(must(lp.View([]int64{B, T - 1}, true)))
		out.Entropy = leaf(must(ent.View([]int64{B, T - 1}, true)))
		return nil
	})
	if err != nil {
		out.Drop()
		return nil, err
	}
	return out, nil
}

// scatter puts per-selected-row values v [n] back into all N rows (zeros
// elsewhere); it takes ownership of v.
func (p *TrainScores) scatter(v *ts.Tensor) *ts.Tensor {
	if p.rows == nil {
		return v
	}
	defer v.MustDrop()
	return scatterRows(v, p.rows, p.n)
}

// gather picks the selected rows of a gradient g [N]; it takes ownership.
func (p *TrainScores) gather(g *ts.Tensor) *ts.Tensor {
	if g == nil || p.rows == nil {
		return g
	}
	defer g.MustDrop()
	return must(g.IndexSelect(0, p.rows, false))
}

// leaf makes t a fresh autograd leaf.
func leaf(t *ts.Tensor) *ts.Tensor {
	l := must(t.Detach(true))
	check(l.RequiresGrad_(true))
	return l
}

// gradOrNil returns t's gradient, or nil when the loss did not use t.
func gradOrNil(t *ts.Tensor) *ts.Tensor {
	g := must(t.Grad(false))
	if ok, err := g.Defined(); err != nil || !ok {
		g.MustDrop()
		return nil
	}
	return g
}

// Backward propagates the gradients that a loss's backward left on
// LogProbs and Entropy into the model's weights (accumulating, as autograd
// does, so micro-batches add up).
func (p *TrainScores) Backward() (err error) {
	defer torchrt.Catch(&err, "training backward pass")
	var s scope
	defer s.Drop()
	gLP, gH := gradOrNil(p.LogProbs), gradOrNil(p.Entropy)
	if gLP == nil && gH == nil {
		return fmt.Errorf("the loss depends on neither the log-probabilities nor the entropy")
	}
	for _, g := range []*ts.Tensor{gLP, gH} {
		if g != nil {
			s.Keep(g)
		}
	}
	// A frozen head (a partial fine-tune: model.TopLayers) needs no ∂L/∂W.
	headTrained, err := p.m.LMHead.RequiresGrad()
	if err != nil {
		return err
	}
	var gradH, gradW *ts.Tensor
	err = torchrt.NoGrad(func() (err error) {
		defer torchrt.Catch(&err, "lm head gradient")
		gradH, gradW = p.headGrad(p.gather(flat(gLP)), p.gather(flat(gH)), headTrained)
		return nil
	})
	if err != nil {
		return err
	}
	s.Keep(gradH)
	// One backward through the backbone: ∂/∂θ of Σ h·gradH + Σ W·gradW.
	total := s.Op(s.Op(p.hidden.Mul(gradH, false)).Sum(gotch.Float, false))
	if gradW != nil {
		s.Keep(gradW)
		b := s.Op(s.Op(p.m.LMHead.Mul(gradW, false)).Sum(gotch.Float, false))
		total = s.Op(total.Add(b, false))
	}
	return total.Backward()
}

func flat(g *ts.Tensor) *ts.Tensor {
	if g == nil {
		return nil
	}
	return must(g.Reshape([]int64{-1}, false))
}

// headGrad computes ∂L/∂h [N, d] and, when the head is trained, ∂L/∂W
// [V, d] (nil otherwise) chunk by chunk from gLP, gH [N] (either may be
// nil). Takes ownership of gLP and gH.
func (p *TrainScores) headGrad(gLP, gH *ts.Tensor, headTrained bool) (gradH, gradW *ts.Tensor) {
	defer dropAll(gLP, gH)
	m := p.m
	N := size(p.hidden)[0]
	hd := must(p.hidden.Detach(false))
	defer hd.MustDrop()
	W := m.LMHead
	if headTrained {
		gradW = must(ts.Zeros(size(W), gotch.Float, deviceOf(W)))
	}
	var parts []*ts.Tensor
	defer func() { dropAll(parts...) }()
	for start := int64(0); start < N; start += p.chunk {
		n := min(p.chunk, N-start)
		parts = append(parts, chunkGrad(m, hd, p.target, gLP, gH, gradW, start, n))
	}
	gradH = must(ts.Cat(parts, 0))
	if gradH.DType() != p.hidden.DType() {
		gradH = must(gradH.Totype(p.hidden.DType(), true))
	}
	if gradW != nil && gradW.DType() != W.DType() {
		gradW = must(gradW.Totype(W.DType(), true))
	}
	return gradH, gradW
}

// chunkGrad handles rows [start, start+n): returns ∂L/∂h for them and adds
// their ∂L/∂W into gradW (when not nil).
func chunkGrad(m *CausalLM, hd, target, gLP, gH, gradW *ts.Tensor, start, n int64) *ts.Tensor {
	var s scope
	defer s.Drop()
	h := s.Op(hd.Narrow(0, start, n, false))                               // [n, d]
	y := s.Op(s.Op(target.Narrow(0, start, n, false)).Unsqueeze(1, false)) // [n, 1]
	z := s.Keep(m.Logits(h))                                               // [n, V] fp32
	lse := s.Op(z.Logsumexp([]int64{-1}, true, false))                     // [n, 1]
	logp := s.Op(z.Sub(lse, false))                                        // log p
	prob := s.Op(logp.Exp(false))                                          // p
	coef := s.Op(ts.Zeros([]int64{n, 1}, gotch.Float, deviceOf(z)))        // g_lp + g_H·(log p + H), per row
	if gLP != nil {
		coef = s.Op(coef.Add(s.Keep(rows(gLP, start, n)), false))
	}
	var dz *ts.Tensor
	if gH != nil {
		H := s.Op(s.Op(s.Op(prob.Mul(logp, false)).SumDimIntlist([]int64{-1}, true, gotch.Float, false)).Neg(false)) // [n, 1]
		w := s.Op(s.Op(logp.Add(H, false)).Mul(s.Keep(rows(gH, start, n)), false))                                   // g_H·(log p + H) [n, V]
		dz = s.Op(s.Op(w.Add(coef, false)).Mul(prob, false))
	} else {
		dz = s.Op(prob.Mul(coef, false))
	}
	dz = s.Op(dz.Neg(false)) // −p·(g_lp + g_H(log p + H))
	if gLP != nil {
		check(dz.ScatterAdd_(1, y, s.Keep(rows(gLP, start, n)))) // + g_lp·onehot(y)
	}
	W := m.LMHead
	dzW := dz
	if W.DType() != gotch.Float {
		dzW = s.Op(dz.Totype(W.DType(), false))
	}
	hW := h
	if h.DType() != gotch.Float {
		hW = s.Op(h.Totype(gotch.Float, false))
	}
	if gradW != nil {
		gw := s.Op(s.Op(dz.Transpose(0, 1, false)).Matmul(hW, false)) // [V, d]
		check(gradW.Add_(gw))
	}
	return must(dzW.Matmul(W, false)) // [n, d]
}

// rows returns g[start:start+n] as a column [n, 1] in fp32.
func rows(g *ts.Tensor, start, n int64) *ts.Tensor {
	r := must(g.Narrow(0, start, n, false))
	r = must(r.Unsqueeze(1, true))
	if r.DType() != gotch.Float {
		r = must(r.Totype(gotch.Float, true))
	}
	return r
}

// Drop frees the pass (the backbone's graph with it).
func (p *TrainScores) Drop() {
	dropAll(p.LogProbs, p.Entropy, p.hidden, p.target, p.rows)
	p.LogProbs, p.Entropy, p.hidden, p.target, p.rows = nil, nil, nil, nil, nil
}

// SetTrainable switches autograd tracking of the parameters on or off.
func SetTrainable(params []Param, on bool) (err error) {
	defer torchrt.Catch(&err, "setting requires_grad")
	for _, p := range params {
		check(p.T.RequiresGrad_(on))
	}
	return nil
}
