// Package batch holds training rows in the shapes the updates use: the
// left-padded tokens of whole episodes, or of single turns in their context
// windows, with the response mask and the log-probabilities each token was
// sampled with. The PPO step (starpo) and the supervised warm start
// (starpo/sft) both train on a Batch, a few rows at a time.
package batch

import (
	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"

	"github.com/ragen-go/ragen/internal/torchrt"
	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/starpo/rollout"
)

// Batch is a left-padded set of training rows (a trajectory's whole
// episode, or one turn of it in its context window).
// Token coordinates [Rows, Length]: IDs and the attention mask Attn.
// Response coordinates [Rows, Length−1] (position j predicts token j+1, as
// RAGEN's responses = input_ids[:, 1:]): the response mask Resp (1 where
// token j+1 was sampled) and the log-probabilities it was sampled with.
type Batch struct {
	Rows, Length int
	IDs          []int64     // [Rows·Length]
	Attn         []int64     // [Rows·Length]
	Resp         [][]float64 // [Rows][Length−1]: 1 where the next token was sampled (trained)
	OldLogProbs  [][]float64 // [Rows][Length−1]
	TurnEnds     [][]int     // [Rows][turns]: the position predicting each turn's last sampled token
}

// New lays rows out left-padded to the longest.
func New(rows []rollout.Sequence) *Batch {
	b := &Batch{Rows: len(rows)}
	for _, t := range rows {
		b.Length = max(b.Length, len(t.IDs))
	}
	L := b.Length
	b.IDs, b.Attn = make([]int64, b.Rows*L), make([]int64, b.Rows*L)
	b.Resp, b.OldLogProbs, b.TurnEnds = make([][]float64, b.Rows), make([][]float64, b.Rows), make([][]int, b.Rows)
	for i, t := range rows {
		off := L - len(t.IDs) // left padding
		for j, id := range t.IDs {
			b.IDs[i*L+off+j], b.Attn[i*L+off+j] = int64(id), 1
		}
		b.Resp[i], b.OldLogProbs[i] = make([]float64, L-1), make([]float64, L-1)
		for j := 1; j < len(t.IDs); j++ { // token j of the row sits at off+j
			b.Resp[i][off+j-1] = t.LossMask[j]
			b.OldLogProbs[i][off+j-1] = t.OldLogProbs[j]
		}
		for _, e := range t.TurnEnds {
			b.TurnEnds[i] = append(b.TurnEnds[i], off+e-1)
		}
	}
	return b
}

// Sequences are the training sequences of trajs, in order: a trajectory's
// whole episode, or with a context window one sequence per turn
// (rollout.Trajectory.PerTurn: each turn in the window it was sampled in).
// owner[r] is the index in trajs of row r, turn[r] its turn (0 for a whole
// episode).
func Sequences(trajs []rollout.Trajectory) (rows []rollout.Sequence, owner, turn []int) {
	for i, t := range trajs {
		for k, s := range t.Rows() {
			rows, owner, turn = append(rows, s), append(owner, i), append(turn, k)
		}
	}
	return rows, owner, turn
}

// Tokens is the number of real (unpadded) tokens in the batch.
func (b *Batch) Tokens() int {
	n := 0
	for _, a := range b.Attn {
		n += int(a)
	}
	return n
}

// Span is a range [Lo, Hi) of batch rows.
type Span struct{ Lo, Hi int }

// Split cuts [lo, hi) into pieces of at most size rows (size ≤ 0: one).
func Split(lo, hi, size int) []Span {
	if size <= 0 {
		size = hi - lo
	}
	var out []Span
	for s := lo; s < hi; s += size {
		out = append(out, Span{s, min(hi, s+size)})
	}
	return out
}

// Tensors returns rows sp's ids and attention mask, [n, Length] int64 on
// dev, held by s.
func (b *Batch) Tensors(sp Span, dev gotch.Device, s *torchrt.Scope) (ids, attn *ts.Tensor) {
	n, L := int64(sp.Hi-sp.Lo), int64(b.Length)
	ids = s.Keep(torchrt.Matrix(b.IDs[sp.Lo*b.Length:sp.Hi*b.Length], n, L, dev))
	attn = s.Keep(torchrt.Matrix(b.Attn[sp.Lo*b.Length:sp.Hi*b.Length], n, L, dev))
	return ids, attn
}

// Micro returns rows sp as ids and attention [n, Length] and the response
// mask [n, Length−1] on dev, all held by s.
func (b *Batch) Micro(sp Span, dev gotch.Device, s *torchrt.Scope) (ids, attn, resp *ts.Tensor) {
	ids, attn = b.Tensors(sp, dev, s)
	return ids, attn, s.Keep(FloatRows(b.Resp, sp, dev))
}

// FloatRows makes an fp32 [n, T] tensor of rows sp of m on dev.
func FloatRows(m [][]float64, sp Span, dev gotch.Device) *ts.Tensor {
	T := len(m[sp.Lo])
	flat := make([]float32, 0, (sp.Hi-sp.Lo)*T)
	for _, r := range m[sp.Lo:sp.Hi] {
		for _, v := range r {
			flat = append(flat, float32(v))
		}
	}
	return torchrt.Matrix(flat, int64(sp.Hi-sp.Lo), int64(T), dev)
}

// ToRows copies an fp32 [n, T] tensor into Go rows.
func ToRows(t *ts.Tensor) [][]float64 {
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
