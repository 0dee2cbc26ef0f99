package starpo

import (
	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"

	"github.com/ragen-go/ragen/internal/torchrt"
	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/starpo/rollout"
)

// batch is a left-padded set of training rows (a trajectory's whole
// episode, or one turn of it in its context window) in the shapes the
// update uses.
// Token coordinates [B, L]: ids and the attention mask. Response
// coordinates [B, L−1] (position j predicts token j+1, as RAGEN's
// responses = input_ids[:, 1:]): the response mask (1 where token j+1 was
// sampled), the log-probabilities it was sampled with, and the rewards.
type batch struct {
	B, L     int
	ids      []int64     // [B·L]
	attn     []int64     // [B·L]
	resp     [][]float64 // [B][L−1]
	oldLogp  [][]float64 // [B][L−1]
	turnEnds [][]int     // [B][turns]: the position predicting each turn's last sampled token
}

func newBatch(rows []rollout.Sequence) *batch {
	b := &batch{B: len(rows)}
	for _, t := range rows {
		b.L = max(b.L, len(t.IDs))
	}
	b.ids, b.attn = make([]int64, b.B*b.L), make([]int64, b.B*b.L)
	b.resp, b.oldLogp, b.turnEnds = make([][]float64, b.B), make([][]float64, b.B), make([][]int, b.B)
	for i, t := range rows {
		off := b.L - len(t.IDs) // left padding
		for j, id := range t.IDs {
			b.ids[i*b.L+off+j], b.attn[i*b.L+off+j] = int64(id), 1
		}
		b.resp[i], b.oldLogp[i] = make([]float64, b.L-1), make([]float64, b.L-1)
		for j := 1; j < len(t.IDs); j++ { // token j of the row sits at off+j
			b.resp[i][off+j-1] = t.LossMask[j]
			b.oldLogp[i][off+j-1] = t.OldLogProbs[j]
		}
		for _, e := range t.TurnEnds {
			b.turnEnds[i] = append(b.turnEnds[i], off+e-1)
		}
	}
	return b
}

// trainingRows are the training sequences of trajs, in order: a
// trajectory's whole episode, or with a context window one sequence per
// turn (rollout.Trajectory.PerTurn: each turn in the window it was sampled
// in). owner[r] is the index in trajs of row r, turn[r] its turn (0 for a
// whole episode).
func trainingRows(trajs []rollout.Trajectory) (rows []rollout.Sequence, owner, turn []int) {
	for i, t := range trajs {
		if len(t.PerTurn) == 0 {
			rows, owner, turn = append(rows, t.Sequence), append(owner, i), append(turn, 0)
			continue
		}
		for k, s := range t.PerTurn {
			rows, owner, turn = append(rows, s), append(owner, i), append(turn, k)
		}
	}
	return rows, owner, turn
}

// tokens is the number of real (unpadded) tokens in the batch.
func (b *batch) tokens() int {
	n := 0
	for _, a := range b.attn {
		n += int(a)
	}
	return n
}

// rows returns the tensors of rows [lo, hi): ids and attention [n, L]
// int64 on dev.
func (b *batch) rows(lo, hi int, dev gotch.Device) (ids, attn *ts.Tensor) {
	n := int64(hi - lo)
	L := int64(b.L)
	return torchrt.Matrix(b.ids[lo*b.L:hi*b.L], n, L, dev), torchrt.Matrix(b.attn[lo*b.L:hi*b.L], n, L, dev)
}

// floatRows makes an fp32 [hi−lo, T] tensor of rows of m on dev.
func floatRows(m [][]float64, lo, hi int, dev gotch.Device) *ts.Tensor {
	T := len(m[lo])
	flat := make([]float32, 0, (hi-lo)*T)
	for _, r := range m[lo:hi] {
		for _, v := range r {
			flat = append(flat, float32(v))
		}
	}
	return torchrt.Matrix(flat, int64(hi-lo), int64(T), dev)
}

// toRows copies an fp32 [n, T] tensor into Go rows.
func toRows(t *ts.Tensor) [][]float64 {
	sh := torchrt.Size(t)
	flat := model.Float32s(t)
	out := make([][]float64, sh[0])
	for i := range out {
		out[i] = make([]float64, sh[1])
		for j := range out[i] {
			out[i][j] = float64(flat[int64(i)*sh[1]+int64(j)])
		}
	}
	return out
}

// microTensors returns rows [lo, hi) as ids and attention [n, L] and the
// response mask [n, L−1] on dev, all held by s.
func (b *batch) microTensors(mb span, dev gotch.Device, s *torchrt.Scope) (ids, attn, resp *ts.Tensor) {
	ids, attn = b.rows(mb.lo, mb.hi, dev)
	s.Keep(ids)
	s.Keep(attn)
	return ids, attn, s.Keep(floatRows(b.resp, mb.lo, mb.hi, dev))
}
