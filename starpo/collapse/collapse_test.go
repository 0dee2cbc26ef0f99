package collapse

import (
	"math"
	"runtime"
	"slices"
	"testing"

	"github.com/ragen-go/ragen/internal/torchrt"
	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/model/modeltest"
	"github.com/ragen-go/ragen/starpo/batch"
)

// near reports |a − b| ≤ tol·max(1, |b|).
func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol*max(1, math.Abs(b)) }

func checkMetrics(t *testing.T, got, want map[string]float64, tol float64) {
	t.Helper()
	for k, w := range want {
		g, ok := got[k]
		if !ok || !near(g, w, tol) {
			t.Errorf("%s = %.15g (present %v), want %.15g", k, g, ok, w)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected metric %s = %g", k, got[k])
		}
	}
}

func TestStatsDiagonal(t *testing.T) {
	// Two prompts, each sample most likely under its own:
	//   L = [[−1, −3], [−4, −2]], |z| = [2, 1], col = [0, 1].
	// Per sequence, matched − marginal = L_own − log((e^L0 + e^L1)/2) is
	// log 2 − log(1 + e^−2) for both rows (the gap is 2 in each).
	// Per token L̄ = [[−0.5, −1.5], [−4, −2]]: gaps 1 and 2, so
	// mi = log 2 − (log(1+e^−1) + log(1+e^−2))/2.
	// Conditional entropies −mean(matched): (1+2)/2 and (0.5+2)/2;
	// reasoning entropies −mean(marginal) = conditional + mi.
	seq := [][]float64{{-1, -3}, {-4, -2}}
	l1, l2 := math.Log1p(math.Exp(-1)), math.Log1p(math.Exp(-2))
	mi, miSeq := math.Ln2-(l1+l2)/2, math.Ln2-l2
	checkMetrics(t, Stats(seq, []int{2, 1}, []int{0, 1}), map[string]float64{
		MIEstimate: mi, MISeqEstimate: miSeq, MIUpperBound: math.Ln2,
		ConditionalEntropy: 1.25, ConditionalEntropySeq: 1.5,
		ReasoningEntropy: 1.25 + mi, ReasoningEntropySeq: 1.5 + miSeq,
		RetrievalAccuracy: 1, RetrievalChanceLevel: 0.5, RetrievalAboveChance: 0.5,
		NumSamples: 2, NumPrompts: 2,
	}, 1e-14)
}

func TestStatsCollapsed(t *testing.T) {
	// Every reasoning is as likely under each of the 3 prompts: the
	// marginal equals the matched score, so mi is 0 exactly, and each
	// sample ties three ways, retrieved with credit 1/3 (chance).
	seq := [][]float64{{-7.3, -7.3, -7.3}, {-0.1, -0.1, -0.1}, {-41.9, -41.9, -41.9}}
	got := Stats(seq, []int{3, 1, 17}, []int{0, 1, 2})
	for _, k := range []string{MIEstimate, MISeqEstimate, RetrievalAboveChance} {
		if got[k] != 0 {
			t.Errorf("%s = %g, want exactly 0", k, got[k])
		}
	}
	if !near(got[RetrievalAccuracy], 1.0/3, 1e-15) || got[ConditionalEntropy] != got[ReasoningEntropy] {
		t.Errorf("retrieval %g (want 1/3), conditional entropy %g vs reasoning entropy %g (want equal)",
			got[RetrievalAccuracy], got[ConditionalEntropy], got[ReasoningEntropy])
	}
}

func TestStatsRetrievalTies(t *testing.T) {
	// Credits: own column in a 2-way tie → 1/2; own column not the
	// largest → 0; own column the unique largest → 1. Mean 1.5/3.
	seq := [][]float64{{-1, -1, -2}, {-1, -2, -3}, {-3, -4, -2}}
	got := Stats(seq, []int{1, 1, 1}, []int{0, 1, 2})
	if !near(got[RetrievalAccuracy], 0.5, 1e-15) || !near(got[RetrievalAboveChance], 0.5-1.0/3, 1e-15) {
		t.Errorf("retrieval %g above chance %g, want 0.5 and 1/6", got[RetrievalAccuracy], got[RetrievalAboveChance])
	}
}

func TestStatsSharedColumn(t *testing.T) {
	// Samples 0 and 1 share prompt 0. Each row's mi term is
	// L_own − log((e^L0 + e^L1)/2): row 0 (own column 2 above the other)
	// log 2 − log(1+e^−2), row 1 (2 below) log 2 − log(1+e^2), row 2 as
	// row 0. Matched scores −1, −3, −3: conditional entropy 7/3; row 1 is
	// not retrieved.
	seq := [][]float64{{-1, -3}, {-3, -1}, {-5, -3}}
	got := Stats(seq, []int{1, 1, 1}, []int{0, 0, 1})
	a, b := math.Ln2-math.Log1p(math.Exp(-2)), math.Ln2-math.Log1p(math.Exp(2))
	checkMetrics(t, got, map[string]float64{
		MIEstimate: (2*a + b) / 3, MISeqEstimate: (2*a + b) / 3, MIUpperBound: math.Ln2,
		ConditionalEntropy: 7.0 / 3, ConditionalEntropySeq: 7.0 / 3,
		ReasoningEntropy: 7.0/3 + (2*a+b)/3, ReasoningEntropySeq: 7.0/3 + (2*a+b)/3,
		RetrievalAccuracy: 2.0 / 3, RetrievalChanceLevel: 0.5, RetrievalAboveChance: 2.0/3 - 0.5,
		NumSamples: 3, NumPrompts: 2,
	}, 1e-14)
}

func TestStatsOnePrompt(t *testing.T) {
	checkMetrics(t, Stats([][]float64{{-1}, {-2}}, []int{1, 4}, []int{0, 0}),
		map[string]float64{NumSamples: 2, NumPrompts: 1}, 0)
	checkMetrics(t, Stats(nil, nil, nil), map[string]float64{NumSamples: 0, NumPrompts: 0}, 0)
}

func TestColumns(t *testing.T) {
	samples := []Sample{{Prompt: []int{5, 6}}, {Prompt: []int{5}}, {Prompt: []int{5, 6}}, {Prompt: []int{6, 5}}, {Prompt: []int{5}}}
	prompts, col := columns(samples)
	if want := [][]int{{5, 6}, {5}, {6, 5}}; !slices.EqualFunc(prompts, want, slices.Equal) {
		t.Errorf("prompts %v, want %v", prompts, want)
	}
	if want := []int{0, 1, 0, 2, 1}; !slices.Equal(col, want) {
		t.Errorf("columns %v, want %v", col, want)
	}
}

func TestPick(t *testing.T) {
	s := func(p, z int) Sample { return Sample{Prompt: []int{p}, Reasoning: make([]int, z)} }
	long := make([]Sample, 100)
	for k := range long {
		long[k] = s(k, 1)
	}
	long[3].Reasoning = nil // never picked
	trajs := [][]Sample{long, {s(-1, 2)}, {s(-2, 0)}}

	got := Pick(trajs, 5, 7)
	if again := Pick(trajs, 5, 7); !slices.EqualFunc(got, again, equalSample) {
		t.Fatal("Pick is not deterministic for a seed")
	}
	if all := Pick(trajs, 1000, 7); len(all) != 100 {
		t.Errorf("Pick(1000) returned %d samples, want the 100 non-empty turns", len(all))
	} else {
		seen := map[int]bool{}
		for _, x := range all {
			if seen[x.Prompt[0]] || x.Prompt[0] == 3 || len(x.Reasoning) == 0 {
				t.Fatalf("Pick(1000) returned prompt %d twice or with an empty reasoning", x.Prompt[0])
			}
			seen[x.Prompt[0]] = true
		}
	}
	// Trajectory-uniform: with 2 picks, the short trajectory's one turn is
	// chosen first with probability 1/2, else second with 1/2, so in 3/4 of
	// the seeds (not about 2/100 as turn-uniform picking would give).
	n, hits := 4000, 0
	for seed := range uint64(n) {
		for _, x := range Pick(trajs, 2, seed) {
			if x.Prompt[0] == -1 {
				hits++
			}
		}
	}
	if f := float64(hits) / float64(n); math.Abs(f-0.75) > 0.04 {
		t.Errorf("the short trajectory was picked in %.3f of seeds, want 0.75 ± 0.04", f)
	}
}

func equalSample(a, b Sample) bool {
	return slices.Equal(a.Prompt, b.Prompt) && slices.Equal(a.Reasoning, b.Reasoning)
}

// TestMeasureMatchesSingleSequences compares every L[i][j] of the padded,
// micro-batched, Only-selected scoring with the single unpadded sequence
// [x_j; z_i] scored alone at every position, the reasoning positions then
// summed in Go.
func TestMeasureMatchesSingleSequences(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	m := modeltest.LoadTinyPolicy(t, 151646, 3)
	// Three samples, two distinct prompts of lengths 5 and 2, reasonings of
	// 3, 1 and 4 tokens: the six sequences have lengths 3 to 9.
	x0, x1 := []int{11, 4007, 151644, 88, 9}, []int{300, 151645}
	samples := []Sample{
		{Prompt: x0, Reasoning: []int{17, 23, 5000}},
		{Prompt: x1, Reasoning: []int{42}},
		{Prompt: slices.Clone(x0), Reasoning: []int{150000, 7, 7, 99}},
		{Prompt: x1}, // empty reasoning: dropped
	}
	prompts, col := columns(samples[:3])
	if len(prompts) != 2 || !slices.Equal(col, []int{0, 1, 0}) {
		t.Fatalf("columns %v of %d prompts, want [0 1 0] of 2", col, len(prompts))
	}
	want := make([][]float64, 3)
	for i, s := range samples[:3] {
		want[i] = make([]float64, 2)
		for j, x := range prompts {
			want[i][j] = scoreAlone(t, m, x, s.Reasoning)
		}
	}
	for _, o := range []Options{{}, {MicroBatch: 4, ChunkRows: 3}, {MicroBatch: 1}} {
		seq, err := crossLogProbs(m, prompts, samples[:3], o)
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			for j := range want[i] {
				if !near(seq[i][j], want[i][j], 1e-4) {
					t.Errorf("%+v: L[%d][%d] = %.6f, alone %.6f", o, i, j, seq[i][j], want[i][j])
				}
			}
		}
	}
	got, err := Measure(m, samples, Options{})
	if err != nil {
		t.Fatal(err)
	}
	wantStats := Stats(want, []int{3, 1, 4}, col)
	wantStats[NumEmptyDropped] = 1
	checkMetrics(t, got, wantStats, 1e-4)
}

// scoreAlone is Σ_t log p(z_t | x, z_<t) from the batch of the one
// unpadded sequence [x; z], every position scored: position p predicts
// token p+1, so z's tokens are predicted at |x|−1 … |x|+|z|−2.
func scoreAlone(t *testing.T, m *model.CausalLM, x, z []int) float64 {
	t.Helper()
	ids := slices.Concat(x, z)
	ids64, ones := make([]int64, len(ids)), make([]int64, len(ids))
	for k, id := range ids {
		ids64[k], ones[k] = int64(id), 1
	}
	b := &batch.Batch{Rows: 1, Length: len(ids), IDs: ids64, Attn: ones}
	var s torchrt.Scope
	defer s.Drop()
	idT, attn := b.Tensors(batch.Span{Lo: 0, Hi: 1}, m.Device, &s)
	sc, err := m.Score(idT, attn, model.ScoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Drop()
	lp := batch.ToRows(sc.LogProbs)[0]
	total := 0.0
	for p := len(x) - 1; p < len(ids)-1; p++ {
		total += lp[p]
	}
	return total
}

func TestMeasureCounts(t *testing.T) {
	// One distinct prompt: nothing to tell apart, nothing scored (a nil
	// model would crash if it were).
	x := []int{1, 2}
	got, err := Measure(nil, []Sample{{x, []int{3}}, {x, nil}, {slices.Clone(x), []int{4, 5}}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkMetrics(t, got, map[string]float64{NumSamples: 2, NumPrompts: 1, NumEmptyDropped: 1}, 0)
	if _, err := Measure(nil, []Sample{{nil, []int{3}}}, Options{}); err == nil {
		t.Error("an empty prompt was accepted")
	}
}
