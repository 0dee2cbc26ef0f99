package model

import (
	"math"
	"testing"

	"github.com/sugarme/gotch"

	"github.com/ragen-go/ragen/internal/torchrt"
)

// Score's chunked log-probs and entropies equal log-softmax of the full
// logits, shifted by one token, for any micro-batch and chunk size, and
// with a position selection (zeros outside it).
func TestScoreMatchesFullLogits(t *testing.T) {
	dir, _ := writeTiny(t, false, 0)
	m := loadTiny(t, dir)
	full := fullLogits(t, m, testSeqs)
	ids, mask, L := batch(testSeqs)
	defer dropAll(ids, mask)
	idv := Int64s(ids)
	selected := make([]int64, len(testSeqs)*(L-1))
	for k := range selected {
		selected[k] = int64(k % 3 % 2) // positions 0, 2 of every 3 skipped
	}
	only := torchrt.Matrix(selected, int64(len(testSeqs)), int64(L-1), gotch.CPU)
	defer only.MustDrop()
	for _, o := range []ScoreOptions{{}, {MicroBatch: 1, ChunkRows: 3}, {MicroBatch: 2, ChunkRows: 5}, {MicroBatch: 2, ChunkRows: 2, Only: only}} {
		sc, err := m.Score(ids, mask, o)
		if err != nil {
			t.Fatal(err)
		}
		lp, ent := Float32s(sc.LogProbs), Float32s(sc.Entropy)
		sc.Drop()
		for b := range testSeqs {
			for j := 0; j < L-1; j++ {
				z := full[b][j]
				lse := logSumExp(z)
				wantLP := float64(z[idv[b*L+j+1]]) - lse
				wantH := 0.0
				for _, v := range z {
					p := math.Exp(float64(v) - lse)
					wantH -= p * (float64(v) - lse)
				}
				k := b*(L-1) + j
				if o.Only != nil && selected[k] == 0 {
					wantLP, wantH = 0, 0
				}
				if math.Abs(float64(lp[k])-wantLP) > 1e-4 || math.Abs(float64(ent[k])-wantH) > 1e-4 {
					t.Fatalf("%+v b=%d j=%d: logp %v want %v, entropy %v want %v", o, b, j, lp[k], wantLP, ent[k], wantH)
				}
			}
		}
	}
}

func logSumExp(z []float32) float64 {
	m := math.Inf(-1)
	for _, v := range z {
		m = math.Max(m, float64(v))
	}
	s := 0.0
	for _, v := range z {
		s += math.Exp(float64(v) - m)
	}
	return m + math.Log(s)
}

// The critic loads from a policy checkpoint with a seeded new head and
// gives one value per token.
func TestValueModel(t *testing.T) {
	dir, _ := writeTiny(t, true, 0)
	opt := Options{Device: gotch.CPU, DType: gotch.Float}
	a, err := LoadValueModel(dir, opt, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Drop()
	b, err := LoadValueModel(dir, opt, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Drop()
	ids, mask, L := batch(testSeqs)
	defer dropAll(ids, mask)
	pos, _ := PositionsFromMask(mask)
	bias, _ := AttentionBias(mask, int64(L), gotch.Float)
	defer dropAll(pos, bias)
	va, err := a.Values(Inputs{IDs: ids, Positions: pos, Bias: bias})
	if err != nil {
		t.Fatal(err)
	}
	vb, _ := b.Values(Inputs{IDs: ids, Positions: pos, Bias: bias})
	defer dropAll(va, vb)
	if s := size(va); len(s) != 2 || s[0] != 3 || s[1] != int64(L) {
		t.Fatalf("values shape %v, want [3 %d]", s, L)
	}
	if d := maxAbsDiff(Float32s(va), Float32s(vb)); d != 0 {
		t.Fatalf("same seed, values differ by %g", d)
	}
}
