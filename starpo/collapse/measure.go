package collapse

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/ragen-go/ragen/internal/torchrt"
	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/starpo/batch"
	"github.com/ragen-go/ragen/starpo/rollout"
)

// Sample is one turn's prompt and the reasoning the policy sampled after it.
type Sample struct {
	Prompt    []int // the ids the policy saw, ending with the <think> prefix
	Reasoning []int // the ids sampled between <think> and </think>, tags excluded
}

// Options bounds Measure's memory.
type Options struct {
	MicroBatch int // scoring sequences per forward pass; 0 = 8
	ChunkRows  int // token positions per lm-head chunk; 0 = 1024
}

// Measure scores every sample's reasoning after every distinct prompt with
// m (teacher forcing, no autograd) and returns Stats' metrics, plus
// collapse/num_empty_dropped, the samples dropped for an empty reasoning.
//
// Cost: with M samples kept and N distinct prompts, M·N forward-only
// sequences [x_j; z_i] of M·Σ_j|x_j| + N·Σ_i|z_i| tokens in all (plus
// padding within a micro-batch), the lm head on the N·Σ_i|z_i| reasoning
// positions only: about N times a forward pass over the samples
// themselves. Pick keeps M, and with it N, small. With N < 2 nothing is
// scored.
//
// Call it on the goroutine that does the trainer's libtorch work, locked
// to its OS thread (cmd/ragen locks it at start).
func Measure(m *model.CausalLM, samples []Sample, o Options) (map[string]float64, error) {
	var kept []Sample
	for i, s := range samples {
		if len(s.Prompt) == 0 {
			return nil, fmt.Errorf("collapse: sample %d has an empty prompt (it ends with the <think> prefix)", i)
		}
		if len(s.Reasoning) > 0 {
			kept = append(kept, s)
		}
	}
	prompts, col := columns(kept)
	tokens := make([]int, len(kept))
	for i, s := range kept {
		tokens[i] = len(s.Reasoning)
	}
	var out map[string]float64
	if len(prompts) < 2 {
		out = map[string]float64{NumSamples: float64(len(kept)), NumPrompts: float64(len(prompts))}
	} else {
		seq, err := crossLogProbs(m, prompts, kept, o)
		if err != nil {
			return nil, err
		}
		out = Stats(seq, tokens, col)
	}
	out[NumEmptyDropped] = float64(len(samples) - len(kept))
	return out, nil
}

// columns lists the distinct prompts of samples in order of first
// appearance, and each sample's index among them.
func columns(samples []Sample) (prompts [][]int, col []int) {
	index := map[string]int{}
	col = make([]int, len(samples))
	var key []byte
	for i, s := range samples {
		key = key[:0]
		for _, id := range s.Prompt {
			key = binary.AppendVarint(key, int64(id))
		}
		j, ok := index[string(key)]
		if !ok {
			j = len(prompts)
			index[string(key)] = j
			prompts = append(prompts, s.Prompt)
		}
		col[i] = j
	}
	return prompts, col
}

// pair is sample I's reasoning after prompt J.
type pair struct{ I, J int }

// crossLogProbs is L [M][N]: L[i][j] = log p(z_i | x_j), summed over z_i.
func crossLogProbs(m *model.CausalLM, prompts [][]int, samples []Sample, o Options) (seq [][]float64, err error) {
	defer torchrt.Catch(&err, "collapse: scoring the reasonings under every prompt")
	seq = make([][]float64, len(samples))
	pairs := make([]pair, 0, len(samples)*len(prompts))
	for i := range samples {
		seq[i] = make([]float64, len(prompts))
		for j := range prompts {
			pairs = append(pairs, pair{i, j})
		}
	}
	// Sequences of similar length share a micro-batch: less padding.
	length := func(p pair) int { return len(prompts[p.J]) + len(samples[p.I].Reasoning) }
	slices.SortStableFunc(pairs, func(a, b pair) int { return cmp.Compare(length(a), length(b)) })
	mb := o.MicroBatch
	if mb <= 0 {
		mb = 8
	}
	for _, sp := range batch.Split(0, len(pairs), mb) {
		part := pairs[sp.Lo:sp.Hi]
		for k, lp := range scorePairs(m, prompts, samples, part, o.ChunkRows) {
			seq[part[k].I][part[k].J] = lp
		}
	}
	return seq, nil
}

// scorePairs scores one micro-batch of pairs as a left-padded batch whose
// response mask marks the positions predicting z_i's tokens, passed to
// Score as Only: the lm head runs on those alone. It returns the sum of
// their log-probabilities per pair.
func scorePairs(m *model.CausalLM, prompts [][]int, samples []Sample, pairs []pair, chunkRows int) []float64 {
	rows := make([]rollout.Sequence, len(pairs))
	for k, p := range pairs {
		x, z := prompts[p.J], samples[p.I].Reasoning
		ids := slices.Concat(x, z)
		mask := make([]float64, len(ids))
		for t := len(x); t < len(ids); t++ {
			mask[t] = 1
		}
		// OldLogProbs is unused here; batch.New wants one per id.
		rows[k] = rollout.Sequence{IDs: ids, LossMask: mask, OldLogProbs: make([]float64, len(ids))}
	}
	b := batch.New(rows)
	var s torchrt.Scope
	defer s.Drop()
	ids, attn, only := b.Micro(batch.Span{Lo: 0, Hi: b.Rows}, m.Device, &s)
	sc, err := m.Score(ids, attn, model.ScoreOptions{ChunkRows: chunkRows, Only: only})
	torchrt.Check(err)
	defer sc.Drop()
	out := make([]float64, len(pairs))
	for k, r := range batch.ToRows(sc.LogProbs) {
		for t, lp := range r {
			if b.Resp[k][t] != 0 {
				out[k] += lp
			}
		}
	}
	return out
}
