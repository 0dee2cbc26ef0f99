package model

import (
	"reflect"
	"testing"

	"github.com/ragen-go/ragen/internal/torchrt"
)

var testSeqs = [][]int{{5, 9, 12, 3, 40, 7, 22}, {17, 2, 63, 8}, {33}}

// Decoding with the KV cache gives the logits a full forward gives at the
// same positions.
func TestKVCacheMatchesFullForward(t *testing.T) {
	dir, _ := writeTiny(t, false, 0)
	m := loadTiny(t, dir)
	seq := testSeqs[0]
	full := fullLogits(t, m, [][]int{seq})[0]
	prefix := 3
	cache, err := NewCache(m.Cfg, 1, int64(len(seq)), m.DType, m.Device)
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Drop()
	for step := prefix; step <= len(seq); step++ {
		var in []int
		if step == prefix {
			in = seq[:prefix]
		} else {
			in = seq[step-1 : step]
		}
		ids, _, _ := batch([][]int{in})
		maskVals := make([]int64, step)
		for i := range maskVals {
			maskVals[i] = 1
		}
		km := torchrt.Matrix(maskVals, 1, int64(step), m.Device)
		pos := make([]int64, len(in))
		for i := range pos {
			pos[i] = int64(step - len(in) + i)
		}
		pt := torchrt.Matrix(pos, 1, int64(len(in)), m.Device)
		bias, err := AttentionBias(km, int64(len(in)), m.DType)
		if err != nil {
			t.Fatal(err)
		}
		l, err := m.LastLogits(Inputs{IDs: ids, Positions: pt, Bias: bias}, cache)
		if err != nil {
			t.Fatal(err)
		}
		if d := maxAbsDiff(Float32s(l), full[step-1]); d > 1e-5 {
			t.Fatalf("position %d: cached logits differ from the full forward by %.3g", step-1, d)
		}
		dropAll(ids, km, pt, bias, l)
	}
}

// A left-padded batch generates exactly what each sequence generates alone.
func TestLeftPaddedBatchEqualsSingle(t *testing.T) {
	dir, _ := writeTiny(t, true, 0)
	m := loadTiny(t, dir)
	opt := GenerateOptions{MaxNewTokens: 12}
	batchOut, err := m.Generate(testSeqs, opt)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range testSeqs {
		alone, err := m.Generate([][]int{s}, opt)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(alone[0].IDs, batchOut[i].IDs) {
			t.Fatalf("sequence %d: batch %v, alone %v", i, batchOut[i].IDs, alone[0].IDs)
		}
		if d := maxAbsDiff(alone[0].LogProbs, batchOut[i].LogProbs); d > 1e-4 {
			t.Fatalf("sequence %d: log-probs differ by %.3g", i, d)
		}
	}
}

// Prefilling the prompts in row chunks (forced down to one row each) gives
// the same generations as one batch.
func TestChunkedPrefillEqualsBatch(t *testing.T) {
	dir, _ := writeTiny(t, true, 0)
	m := loadTiny(t, dir)
	opt := GenerateOptions{MaxNewTokens: 12}
	whole, err := m.Generate(testSeqs, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer func(b int) { prefillBudget = b }(prefillBudget)
	prefillBudget = 1
	chunked, err := m.Generate(testSeqs, opt)
	if err != nil {
		t.Fatal(err)
	}
	for i := range testSeqs {
		if !reflect.DeepEqual(whole[i].IDs, chunked[i].IDs) || maxAbsDiff(whole[i].LogProbs, chunked[i].LogProbs) > 1e-5 {
			t.Fatalf("sequence %d: batch %v, chunked %v", i, whole[i].IDs, chunked[i].IDs)
		}
	}
}

func TestGreedyDeterministicAndSeededSampling(t *testing.T) {
	dir, _ := writeTiny(t, false, 0)
	m := loadTiny(t, dir)
	greedy := GenerateOptions{MaxNewTokens: 10}
	a, err := m.Generate(testSeqs, greedy)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := m.Generate(testSeqs, greedy)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("greedy generation is not deterministic")
	}
	sampled := GenerateOptions{MaxNewTokens: 10, Seed: 3, Sampling: Sampling{Temperature: 1, TopP: 0.9, TopK: 20}}
	s1, err := m.Generate(testSeqs, sampled)
	if err != nil {
		t.Fatal(err)
	}
	s2, _ := m.Generate(testSeqs, sampled)
	if !reflect.DeepEqual(s1, s2) {
		t.Fatal("sampling with the same seed gave different outputs")
	}
	sampled.Seed = 4
	s3, _ := m.Generate(testSeqs, sampled)
	if reflect.DeepEqual(s1, s3) {
		t.Fatal("sampling with different seeds gave identical outputs for every sequence")
	}
}

// Each sequence stops on its own: on an EOS id, on a stop callback, or at
// the length limit.
func TestStopRules(t *testing.T) {
	dir, _ := writeTiny(t, false, 0)
	m := loadTiny(t, dir)
	free, err := m.Generate(testSeqs, GenerateOptions{MaxNewTokens: 8})
	if err != nil {
		t.Fatal(err)
	}
	eos := free[0].IDs[2] // make sequence 0's third token an EOS
	out, err := m.Generate(testSeqs, GenerateOptions{
		MaxNewTokens: 8, EOS: []int{eos},
		Stop: func(seq int, ids []int) bool { return seq == 1 && len(ids) == 4 },
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := out[0]; got.Reason != "eos" || len(got.IDs) > 3 || got.IDs[len(got.IDs)-1] != eos {
		t.Errorf("sequence 0: %+v, want it to end on eos %d within 3 tokens", got, eos)
	}
	if got := out[1]; got.Reason != "stop" && got.Reason != "eos" || len(got.IDs) > 4 {
		t.Errorf("sequence 1: %+v, want a stop after at most 4 tokens", got)
	}
	for i, g := range out {
		if len(g.IDs) != len(g.LogProbs) || len(g.IDs) > 8 {
			t.Errorf("sequence %d: %d ids, %d logprobs", i, len(g.IDs), len(g.LogProbs))
		}
		// Up to its stop, every sequence matches the unconstrained run.
		if !reflect.DeepEqual(g.IDs, free[i].IDs[:len(g.IDs)]) {
			t.Errorf("sequence %d: %v is not a prefix of %v", i, g.IDs, free[i].IDs)
		}
	}
}

// A session makes a follow-up prompt (the previous prompt, its generation
// and more tokens) prefill only the new tokens, with the same result as a
// fresh generation; prompts without a cached prefix mix in.
func TestSessionReusesPrefix(t *testing.T) {
	dir, _ := writeTiny(t, true, 0)
	m := loadTiny(t, dir)
	opt := GenerateOptions{MaxNewTokens: 6}
	sess := NewSession()
	defer sess.Drop()
	withSess := opt
	withSess.Session = sess
	first, err := m.Generate(testSeqs, withSess)
	if err != nil {
		t.Fatal(err)
	}
	var next [][]int
	for i, s := range testSeqs {
		p := append(append(append([]int{}, s...), first[i].IDs...), 5, 7, 9)
		next = append(next, p[:len(p)-i%2]) // some one token shorter
	}
	next = append(next, []int{3, 1, 4, 1, 5}) // no cached prefix
	want, err := m.Generate(next, opt)
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.Generate(next, withSess)
	if err != nil {
		t.Fatal(err)
	}
	for i := range next {
		if !reflect.DeepEqual(want[i].IDs, got[i].IDs) || maxAbsDiff(want[i].LogProbs, got[i].LogProbs) > 1e-4 {
			t.Fatalf("sequence %d: fresh %v %v, with session %v %v", i, want[i].IDs, want[i].LogProbs, got[i].IDs, got[i].LogProbs)
		}
	}
	if len(sess.seqs) != len(next) {
		t.Fatalf("session holds %d sequences, want %d", len(sess.seqs), len(next))
	}
}
