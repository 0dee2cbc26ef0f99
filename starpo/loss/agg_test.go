package loss

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestAggregate(t *testing.T) {
	// Trained: row 0 {1}, row 1 {5, 6}; 3 tokens of T = 4.
	//   token-mean              (1 + 5 + 6)/3      = 4
	//   seq-mean-token-sum      (1 + 11)/2         = 6
	//   seq-mean-token-mean     (1/1 + 11/2)/2     = 3.25
	//   seq-mean-token-sum-norm (1 + 5 + 6)/4      = 3
	// The NaN and Inf sit at untrained positions.
	l := tensor(t, [][]float64{{1, math.NaN(), 3, 7}, {math.Inf(1), 5, 6, 8}})
	mask := tensor(t, [][]float64{{1, 0, 0, 0}, {0, 1, 1, 0}})
	for _, tc := range []struct {
		mode AggMode
		want float64
	}{{TokenMean, 4}, {SeqMeanTokenSum, 6}, {SeqMeanTokenMean, 3.25}, {SeqMeanTokenSumNorm, 3}} {
		got, err := Aggregate(l, mask, tc.mode)
		if err != nil {
			t.Fatal(err)
		}
		if v := scalar(t, got); !approx(v, tc.want, 1e-6) {
			t.Errorf("%s = %v, want %v", tc.mode, v, tc.want)
		}
		got.MustDrop()
	}
}

func TestAggregateEmptyRow(t *testing.T) {
	// A row without trained tokens adds 0 and still counts: (0 + 11/2)/2.
	l := tensor(t, [][]float64{{1, 2, 3, 7}, {4, 5, 6, 8}})
	mask := tensor(t, [][]float64{{0, 0, 0, 0}, {0, 1, 1, 0}})
	got, err := Aggregate(l, mask, SeqMeanTokenMean)
	if err != nil {
		t.Fatal(err)
	}
	defer got.MustDrop()
	if v := scalar(t, got); !approx(v, 2.75, 1e-6) {
		t.Errorf("seq-mean-token-mean = %v, want 2.75", v)
	}
}

func TestAggregateMatchesLoops(t *testing.T) {
	for seed := range uint64(4) {
		r := rand.New(rand.NewPCG(seed, 11))
		m := randMask(r, 3, 9)
		l := f32(randn(r, 3, 9, 2))
		lt, mt := tensor(t, garbage(r, l, m)), tensor(t, m)
		for _, mode := range allModes {
			got, err := Aggregate(lt, mt, mode)
			if err != nil {
				t.Fatal(err)
			}
			if v, want := scalar(t, got), refAgg(l, m, mode); !approx(v, want, 1e-5) {
				t.Errorf("seed %d %s = %v, want %v", seed, mode, v, want)
			}
			got.MustDrop()
		}
	}
}

func TestAggregateErrors(t *testing.T) {
	l := tensor(t, [][]float64{{1, 2, 3}})
	if _, err := Aggregate(l, tensor(t, [][]float64{{1, 1, 1}}), "token-sum"); err == nil ||
		!strings.Contains(err.Error(), `"token-sum"`) {
		t.Errorf("unknown mode: err = %v", err)
	}
	if _, err := Aggregate(l, tensor(t, [][]float64{{1, 1, 1, 1}}), TokenMean); err == nil ||
		!strings.Contains(err.Error(), "loss has shape [1 3], mask [1 4]") {
		t.Errorf("shape mismatch: err = %v", err)
	}
}

func TestEntropyLoss(t *testing.T) {
	// Trained entropies 1, 2, 4, 5: token-mean 3.
	h := tensor(t, [][]float64{{1, 2, math.NaN()}, {3, 4, 5}})
	mask := tensor(t, [][]float64{{1, 1, 0}, {0, 1, 1}})
	loss, v, err := EntropyLoss(h, mask, TokenMean)
	if err != nil {
		t.Fatal(err)
	}
	defer loss.MustDrop()
	if !approx(v, 3, 1e-6) || !approx(scalar(t, loss), 3, 1e-6) {
		t.Errorf("entropy loss = %v (tensor %v), want 3", v, scalar(t, loss))
	}
	if _, _, err := EntropyLoss(h, mask, "mean"); err == nil {
		t.Error("unknown mode accepted")
	}
}

func TestNoTensorLeaks(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	m := randMask(r, 2, 6)
	lp, old, a := tensor(t, randn(r, 2, 6, 1)), tensor(t, randn(r, 2, 6, 1)), tensor(t, randn(r, 2, 6, 1))
	mt := tensor(t, m)
	before := liveTensors()
	for range 3 {
		loss, _, err := PolicyLoss(lp, old, a, mt, PolicyOptions{ClipLow: 0.2, ClipHigh: 0.28, ClipC: 3,
			Agg: SeqMeanTokenMean})
		if err != nil {
			t.Fatal(err)
		}
		loss.MustDrop()
		vl, _, err := ValueLoss(lp, old, a, mt, ValueOptions{Clip: 0.5, Agg: TokenMean})
		if err != nil {
			t.Fatal(err)
		}
		vl.MustDrop()
		kl, _, err := KLLoss(lp, old, mt, KLOptions{Type: KLLowVar, Agg: TokenMean})
		if err != nil {
			t.Fatal(err)
		}
		kl.MustDrop()
		// A failing op mid-way drops what it made too.
		if _, _, err := PolicyLoss(lp, old, tensor(t, [][]float64{{1}}), mt, PolicyOptions{ClipLow: 0.2, ClipHigh: 0.28,
			ClipC: 3, Agg: TokenMean}); err == nil {
			t.Fatal("mismatched advantages accepted")
		}
	}
	if after := liveTensors(); after != before+3 { // the 3 bad advantages, dropped at cleanup
		t.Errorf("live tensors %d → %d: temporaries leak", before, after)
	}
}
