package model

import (
	"fmt"
	"slices"

	"github.com/sugarme/gotch/ts"

	"github.com/ragen-go/ragen/internal/torchrt"
)

// Session keeps the keys and values of the last Generate call's sequences
// (see GenerateOptions.Session), so that the next call prefills only what
// its prompts add: in a five-turn rollout the prompts grow to several times
// the new text per turn, and re-running them through the model was most of
// the rollout's time. The reuse is exact: the cached positions were
// computed from the same tokens at the same positions. A Session belongs to
// one model; Drop frees it.
type Session struct {
	seqs []sessionSeq
}

type sessionSeq struct {
	ids []int        // the tokens whose keys and values are held
	kv  []*ts.Tensor // per layer K then V, each [nKV, len(ids), hd]
}

// NewSession returns an empty session.
func NewSession() *Session { return &Session{} }

// Drop frees the held keys and values.
func (s *Session) Drop() { s.replace(nil) }

func (s *Session) replace(seqs []sessionSeq) {
	for _, q := range s.seqs {
		dropAll(q.kv...)
	}
	s.seqs = seqs
}

// match returns the held sequence that is the longest prefix of prompt.
func (s *Session) match(prompt []int) *sessionSeq {
	var best *sessionSeq
	for i := range s.seqs {
		q := &s.seqs[i]
		if len(q.ids) <= len(prompt) && (best == nil || len(q.ids) > len(best.ids)) && slices.Equal(q.ids, prompt[:len(q.ids)]) {
			best = q
		}
	}
	return best
}

// restore copies held keys and values into cache for the prompts (left-
// padded by offs into L columns) and returns S, the number of last
// columns still to prefill: the longest new part over the batch (at least
// one token each, for its logits). Rows with a shorter new part recompute
// some cached tokens inside the block, which gives the same values.
func (s *Session) restore(cache *Cache, prompts [][]int, offs []int, L int) int {
	reuse := make([]int, len(prompts))
	found := make([]*sessionSeq, len(prompts))
	S := 1
	for b, p := range prompts {
		if q := s.match(p); q != nil {
			found[b], reuse[b] = q, min(len(q.ids), len(p)-1)
		}
		S = max(S, len(p)-reuse[b])
	}
	for b, q := range found {
		n := min(reuse[b], L-S-offs[b]) // cached columns before the block
		if q == nil || n <= 0 {
			continue
		}
		for i, l := range cache.layers {
			for j, dst := range []*ts.Tensor{l.K, l.V} {
				row := must(dst.Narrow(0, int64(b), 1, false))
				cols := must(row.Narrow(2, int64(offs[b]), int64(n), false))
				src := must(q.kv[2*i+j].Narrow(1, 0, int64(n), false))
				src1 := must(src.Unsqueeze(0, false))
				torchrt.CopyInto(cols, src1)
				dropAll(row, cols, src, src1)
			}
		}
	}
	return S
}

// saveSeq copies row r's keys and values for its fed tokens (the prompt,
// then every generated id but the last, which was never fed), columns
// [off, cache.Len).
func saveSeq(cache *Cache, r, off int, prompt, gen []int) sessionSeq {
	ids := append(slices.Clone(prompt), gen[:len(gen)-1]...)
	n := cache.Len - int64(off)
	if n != int64(len(ids)) {
		check(fmt.Errorf("session: row %d holds %d positions for %d fed tokens", r, n, len(ids)))
	}
	q := sessionSeq{ids: ids}
	for _, l := range cache.layers {
		for _, t := range []*ts.Tensor{l.K, l.V} {
			row := must(t.Narrow(0, int64(r), 1, false))
			cols := must(row.Narrow(2, int64(off), n, false))
			sq := must(cols.SqueezeDim(0, false))
			cp := must(ts.Zeros(size(sq), sq.DType(), deviceOf(sq)))
			torchrt.CopyInto(cp, sq)
			q.kv = append(q.kv, cp)
			dropAll(row, cols, sq)
		}
	}
	return q
}
