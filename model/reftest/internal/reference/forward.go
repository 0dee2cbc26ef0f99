package reference

import (
	"fmt"
	"slices"
)

// Forward computes logits [B][T][V] for a batch of token ids [B][T].
// attentionMask [B][T] holds 1 for real tokens and 0 for padding (left
// padding included); nil means all ones. As in HF and RAGEN, position ids are
// cumsum(mask) − 1 clamped at 0, and query i attends keys j ≤ i with
// mask[j] = 1. Logits at padding positions are finite but meaningless (see
// attend).
func (m *Model) Forward(ids [][]int, attentionMask [][]int) ([][][]float32, error) {
	hidden, err := m.HiddenStates(ids, attentionMask)
	if err != nil {
		return nil, err
	}
	logits := make([][][]float32, len(hidden))
	for b, seq := range hidden {
		logits[b] = make([][]float32, len(seq))
		for t, h := range seq {
			logits[b][t] = m.lmHead.apply(h) // [V]
		}
	}
	return logits, nil
}

// HiddenStates is Qwen2Model's last_hidden_state [B][T][d]: the output of
// the final RMSNorm, before lm_head.
func (m *Model) HiddenStates(ids [][]int, attentionMask [][]int) ([][][]float32, error) {
	if err := m.checkBatch(ids, attentionMask); err != nil {
		return nil, err
	}
	out := make([][][]float32, len(ids))
	for b := range ids {
		mask := slices.Repeat([]int{1}, len(ids[b]))
		if attentionMask != nil {
			mask = attentionMask[b]
		}
		out[b] = m.sequence(ids[b], mask)
	}
	return out, nil
}

// sequence runs the decoder on one row of the batch: rows never interact.
func (m *Model) sequence(ids, mask []int) [][]float32 {
	pos := positions(mask)
	allowed := func(i, j int) bool { return j <= i && mask[j] == 1 }
	h := make([][]float32, len(ids)) // h: [T][d], the residual stream
	for t, id := range ids {
		h[t] = slices.Clone(m.embed.w[id*m.embed.in : (id+1)*m.embed.in])
	}
	for _, l := range m.layers {
		l.forward(m, h, pos, allowed)
	}
	for t := range h {
		h[t] = rmsNorm(h[t], m.norm, m.cfg.RMSNormEps)
	}
	return h
}

// forward is one decoder layer, updating the residual stream h in place:
//
//	h += o(attention(rope(q(n)), rope(k(n)), v(n))),  n = rmsNorm(h)
//	h += down(silu(gate(n)) · up(n)),                 n = rmsNorm(h)
func (l layer) forward(m *Model, h [][]float32, pos []int, allowed func(i, j int) bool) {
	c := m.cfg
	hd := c.HeadDimension()
	q := make([][]float32, len(h)) // q: [T][nH·hd]
	k := make([][]float32, len(h)) // k: [T][nKV·hd]
	v := make([][]float32, len(h)) // v: [T][nKV·hd]
	for t := range h {
		n := rmsNorm(h[t], l.inputNorm, c.RMSNormEps)
		q[t], k[t], v[t] = l.q.apply(n), l.k.apply(n), l.v.apply(n)
		rope(q[t], hd, pos[t], m.invFreq)
		rope(k[t], hd, pos[t], m.invFreq)
	}
	a := attend(q, k, v, c.NumAttentionHeads, c.NumKeyValueHeads, hd, allowed) // a: [T][nH·hd]
	for t := range h {
		addInto(h[t], l.o.apply(a[t]))
		n := rmsNorm(h[t], l.postNorm, c.RMSNormEps)
		gate, up := l.gate.apply(n), l.up.apply(n) // [I]
		for i := range gate {
			gate[i] = float32(silu(float64(gate[i])) * float64(up[i]))
		}
		addInto(h[t], l.down.apply(gate))
	}
}

// addInto adds y to x elementwise.
func addInto(x, y []float32) {
	for i := range x {
		x[i] += y[i]
	}
}

// positions is cumsum(mask) − 1 clamped at 0: left padding starts every
// sequence at position 0, as HF's generate and RAGEN compute it.
func positions(mask []int) []int {
	pos := make([]int, len(mask))
	sum := 0
	for i, v := range mask {
		sum += v
		pos[i] = max(sum-1, 0)
	}
	return pos
}

// checkBatch requires rectangular ids in the vocabulary and a 0/1 mask of
// the same shape.
func (m *Model) checkBatch(ids, mask [][]int) error {
	if mask != nil && len(mask) != len(ids) {
		return fmt.Errorf("reference forward: attention mask has %d rows, ids %d", len(mask), len(ids))
	}
	for b, row := range ids {
		if len(row) != len(ids[0]) {
			return fmt.Errorf("reference forward: row %d has %d tokens, row 0 has %d", b, len(row), len(ids[0]))
		}
		if mask != nil && len(mask[b]) != len(row) {
			return fmt.Errorf("reference forward: mask row %d has %d entries, ids %d", b, len(mask[b]), len(row))
		}
		for t, id := range row {
			if id < 0 || id >= m.cfg.VocabSize {
				return fmt.Errorf("reference forward: token %d at [%d][%d] is outside the vocabulary of %d", id, b, t, m.cfg.VocabSize)
			}
			if mask != nil && mask[b][t] != 0 && mask[b][t] != 1 {
				return fmt.Errorf("reference forward: mask value %d at [%d][%d] is not 0 or 1", mask[b][t], b, t)
			}
		}
	}
	return nil
}
