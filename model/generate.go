package model

import (
	"encoding/binary"
	"fmt"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"

	"github.com/ragen-go/ragen/internal/torchrt"
)

// GenerateOptions controls batched generation.
type GenerateOptions struct {
	Sampling
	MaxNewTokens int   // per sequence
	Seed         int64 // seeds libtorch's generator, so a run is reproducible
	// EOS ends a sequence when generated (it is kept in the output, as
	// HuggingFace does); e.g. <|im_end|> and <|endoftext|>.
	EOS []int
	// Stop, when not nil, is asked after every new token whether the
	// sequence is done (for example because its text now ends in
	// "</answer>"); ids are that sequence's generated ids so far.
	Stop func(seq int, ids []int) bool
	// Session, when not nil, carries keys and values between calls: a
	// prompt that extends a sequence of the previous call (its prompt and
	// generated tokens) prefills only its new tokens. Multi-turn rollouts
	// are exactly this: each turn's prompt is the last one, the answer and
	// the environment's reply.
	Session *Session
	// OnToken, when not nil, receives every new token as it is chosen.
	OnToken func(seq int, id int)
	// StaticCache decodes with fixed shapes (staticDecoder): the batch is
	// not compacted as sequences finish, and attention spans the whole
	// cache under a mask. The same ids and log-probabilities as the
	// default; slower on the CPU, the prerequisite of CUDAGraphs.
	StaticCache bool
	// CUDAGraphs replays the static decode step as a CUDA graph (it
	// implies StaticCache); an error on anything but a CUDA device with a
	// CUDA build of libtorch.
	CUDAGraphs bool
}

// Generation is one sequence's output.
type Generation struct {
	IDs      []int     // generated ids, the stopping one included
	LogProbs []float32 // log p(id) under the model, before temperature/top-p/top-k
	Reason   string    // "eos", "stop" or "length"
}

// Generate continues every prompt. Prompts are left-padded into one batch
// and prefilled together; then all unfinished sequences decode together,
// one token per step, through a preallocated KV cache. A finished sequence
// is dropped from the batch (cache rows included) so it stops costing
// compute. Runs without autograd.
func (m *CausalLM) Generate(prompts [][]int, o GenerateOptions) (out []Generation, err error) {
	if err := o.Sampling.Validate(); err != nil {
		return nil, err
	}
	if len(prompts) == 0 {
		return nil, nil
	}
	L := 0
	for i, p := range prompts {
		if len(p) == 0 {
			return nil, fmt.Errorf("prompt %d is empty", i)
		}
		for _, id := range p {
			if id < 0 || id >= m.Cfg.VocabSize {
				return nil, fmt.Errorf("prompt %d: token id %d is outside the vocabulary [0, %d)", i, id, m.Cfg.VocabSize)
			}
		}
		L = max(L, len(p))
	}
	if o.MaxNewTokens < 1 {
		return nil, fmt.Errorf("max new tokens %d must be at least 1", o.MaxNewTokens)
	}
	if total := L + o.MaxNewTokens; total > m.Cfg.MaxPositionEmbeddings {
		return nil, fmt.Errorf("prompt of %d tokens plus %d new ones exceeds the model's %d positions", L, o.MaxNewTokens, m.Cfg.MaxPositionEmbeddings)
	}
	if err := m.checkDecodeOptions(o); err != nil {
		return nil, err
	}
	err = torchrt.NoGrad(func() (err error) {
		defer torchrt.Catch(&err, "generating")
		out = m.generate(prompts, L, o)
		return nil
	})
	torchrt.ReleaseFreeMemory()
	return out, err
}

// decodeState is the batch of unfinished sequences during generation.
type decodeState struct {
	rows    []int      // batch row → sequence index
	nextPos []int64    // per row: the position of its next token
	keyMask *ts.Tensor // [rows, S] int64: 1 for real tokens
}

func (m *CausalLM) generate(prompts [][]int, L int, o GenerateOptions) []Generation {
	B := len(prompts)
	dev := m.Device
	torchrt.ManualSeed(o.Seed)
	eos := map[int]bool{}
	for _, id := range o.EOS {
		eos[id] = true
	}

	ids := make([]int64, B*L)
	mask := make([]int64, B*L)
	offs := make([]int, B)
	st := decodeState{rows: make([]int, B), nextPos: make([]int64, B)}
	for b, p := range prompts {
		off := L - len(p) // left padding
		offs[b] = off
		for j, id := range p {
			ids[b*L+off+j] = int64(id)
			mask[b*L+off+j] = 1
		}
		st.rows[b] = b
		st.nextPos[b] = int64(len(p))
	}
	cache, err := NewCache(m.Cfg, int64(B), int64(L+o.MaxNewTokens), m.DType, dev)
	check(err)
	defer cache.Drop()
	// With a session, the block to prefill is the last S columns, S the
	// longest new part; cached keys and values fill the columns before it.
	S := L
	if o.Session != nil {
		S = o.Session.restore(cache, prompts, offs, L)
	}

	st.keyMask = torchrt.Matrix(mask, int64(B), int64(L), dev)
	defer func() { dropAll(st.keyMask) }()
	logits := m.prefillDistinct(ids, mask, B, L, S, cache)
	var static *staticDecoder
	if o.StaticCache || o.CUDAGraphs {
		var err error
		static, err = newStaticDecoder(m, cache, mask, B, L, st.nextPos, o.CUDAGraphs)
		if err != nil {
			logits.MustDrop()
			check(err)
		}
		defer static.Drop()
	}
	var kept []sessionSeq // this call's sequences, for the session
	defer func() {
		if o.Session != nil {
			o.Session.replace(kept)
		}
	}()

	out := make([]Generation, B)
	done := make([]bool, B)
	for step := 0; ; step++ {
		next, logp := sample(logits, o.Sampling)
		logits.MustDrop()
		nextIDs, nextLP := Int64s(next), Float32s(logp)
		dropAll(next, logp)
		finished := 0
		for r, seq := range st.rows {
			if done[seq] {
				finished++
				continue
			}
			g := &out[seq]
			id := int(nextIDs[r])
			g.IDs = append(g.IDs, id)
			g.LogProbs = append(g.LogProbs, nextLP[r])
			if o.OnToken != nil {
				o.OnToken(seq, id)
			}
			switch {
			case eos[id]:
				g.Reason = "eos"
			case o.Stop != nil && o.Stop(seq, g.IDs):
				g.Reason = "stop"
			case len(g.IDs) >= o.MaxNewTokens:
				g.Reason = "length"
			}
			if g.Reason != "" {
				done[seq] = true
				finished++
				if o.Session != nil {
					kept = append(kept, saveSeq(cache, r, offs[seq], prompts[seq], g.IDs))
				}
			}
		}
		if finished == len(st.rows) {
			return out
		}
		if static != nil {
			logits = static.step(nextIDs)
			continue
		}
		// Compact once an eighth of the batch has finished: dropping rows
		// copies the cache, so it is not worth doing for every sequence.
		if finished > 0 && finished*8 >= len(st.rows) {
			nextIDs = st.compact(cache, done, nextIDs)
		}
		logits = m.decodeStep(&st, cache, nextIDs)
	}
}

// compact keeps only the unfinished rows, returning their pending tokens.
func (st *decodeState) compact(cache *Cache, done []bool, pending []int64) []int64 {
	var keep []int64
	var rows []int
	var pos, toks []int64
	for r, seq := range st.rows {
		if !done[seq] {
			keep = append(keep, int64(r))
			rows = append(rows, seq)
			pos = append(pos, st.nextPos[r])
			toks = append(toks, pending[r])
		}
	}
	idx := torchrt.Matrix(keep, int64(len(keep)), 1, deviceOf(st.keyMask))
	defer idx.MustDrop()
	flat := must(idx.View([]int64{-1}, false))
	defer flat.MustDrop()
	check(cache.Keep(flat))
	st.keyMask = must(st.keyMask.IndexSelect(0, flat, true))
	st.rows, st.nextPos = rows, pos
	return toks
}

// decodeStep feeds one token per row and returns the next logits [rows, V].
func (m *CausalLM) decodeStep(st *decodeState, cache *Cache, toks []int64) *ts.Tensor {
	n := int64(len(st.rows))
	dev := m.Device
	in := torchrt.Matrix(toks, n, 1, dev)
	pos := torchrt.Matrix(st.nextPos, n, 1, dev)
	ones := must(ts.Ones([]int64{n, 1}, gotch.Int64, dev))
	km := must(ts.Cat([]*ts.Tensor{st.keyMask, ones}, 1))
	st.keyMask.MustDrop()
	st.keyMask = km
	bias := attentionBias(km, 1, m.DType)
	logits, err := m.LastLogits(Inputs{IDs: in, Positions: pos, Bias: bias}, cache)
	dropAll(in, pos, ones, bias)
	check(err)
	for r := range st.nextPos {
		st.nextPos[r]++
	}
	return logits
}

// prefillDistinct is prefill that computes each distinct prompt once. A
// rollout's group members share their initial state, so their first
// prompts are identical (RAGEN's groups; validation repeats few prompts
// too): the distinct rows are prefilled, then their keys, values and
// logits are copied to the rows that repeat them, and sampling makes the
// rows diverge. Only a prefill of whole prompts (nothing restored from a
// session, S = L) is shared this way.
func (m *CausalLM) prefillDistinct(ids, mask []int64, B, L, S int, cache *Cache) *ts.Tensor {
	first, of := distinctRows(ids, mask, B, L)
	if S != L || len(first) == B {
		return m.prefill(ids, mask, B, L, S, cache)
	}
	U := len(first)
	uids, umask := make([]int64, 0, U*L), make([]int64, 0, U*L)
	for _, b := range first {
		uids = append(uids, ids[b*L:(b+1)*L]...)
		umask = append(umask, mask[b*L:(b+1)*L]...)
	}
	logits := m.prefill(uids, umask, U, L, S, cache) // rows [0, U) of the cache
	idx := torchrt.Matrix(of, int64(B), 1, m.Device)
	defer idx.MustDrop()
	flat := must(idx.View([]int64{-1}, false))
	defer flat.MustDrop()
	check(cache.Keep(flat))
	return must(logits.IndexSelect(0, flat, true))
}

// distinctRows finds the distinct rows of the left-padded batch ids, mask
// [B·L]: first lists the first row of each distinct prompt, and of[b] is
// the position in first of row b's prompt.
func distinctRows(ids, mask []int64, B, L int) (first []int, of []int64) {
	seen := map[string]int64{}
	of = make([]int64, B)
	key := make([]byte, 0, 16*L)
	for b := range B {
		key = key[:0]
		for j := b * L; j < (b+1)*L; j++ {
			key = binary.LittleEndian.AppendUint64(key, uint64(ids[j]))
			key = append(key, byte(mask[j]))
		}
		u, ok := seen[string(key)]
		if !ok {
			u = int64(len(first))
			seen[string(key)] = u
			first = append(first, b)
		}
		of[b] = u
	}
	return first, of
}

// prefillBudget bounds one prefill chunk's attention scores, rows × heads ×
// L × L elements (64 MB in fp32). Long multi-turn prompts in a large batch
// would otherwise materialise gigabytes of scores per layer, and their
// allocation (fresh pages from the kernel every time) costs more than the
// arithmetic: a 64-prompt FrozenLake rollout spent 60% of its time in page
// faults before prompts were prefilled in chunks.
var prefillBudget = 16 << 20 // a variable so tests can force chunking

// prefill runs the last S columns of the prompts (ids, mask [B·L]) through
// the model in row chunks sized by prefillBudget, filling the cache from
// column L−S (the columns before are already there), and returns the last
// position's logits [B, V].
func (m *CausalLM) prefill(ids, mask []int64, B, L, S int, cache *Cache) *ts.Tensor {
	dev := m.Device
	rows := max(1, prefillBudget/(m.Cfg.NumAttentionHeads*S*L))
	blockIDs := make([]int64, 0, B*S)
	for b := range B {
		blockIDs = append(blockIDs, ids[b*L+L-S:(b+1)*L]...)
	}
	cache.Len = int64(L - S)
	var parts []*ts.Tensor
	defer func() { dropAll(parts...) }()
	for lo := 0; lo < B; lo += rows {
		n := min(rows, B-lo)
		func() {
			var s scope
			defer s.Drop()
			inIDs := s.Keep(torchrt.Matrix(blockIDs[lo*S:(lo+n)*S], int64(n), int64(S), dev))
			km := s.Keep(torchrt.Matrix(mask[lo*L:(lo+n)*L], int64(n), int64(L), dev))
			pos := s.Op(PositionsFromMask(km))
			pos = s.Op(pos.Narrow(1, int64(L-S), int64(S), false))
			bias := s.Keep(attentionBias(km, int64(S), m.DType))
			view := cache.view(int64(lo), int64(n))
			defer view.Drop()
			logits, err := m.LastLogits(Inputs{IDs: inIDs, Positions: pos, Bias: bias}, view)
			check(err)
			parts = append(parts, logits)
		}()
	}
	cache.Len = int64(L)
	if len(parts) == 1 {
		out := parts[0]
		parts = nil
		return out
	}
	return must(ts.Cat(parts, 0))
}
