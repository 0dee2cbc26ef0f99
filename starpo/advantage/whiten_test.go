package advantage

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
)

func TestWhitenMasked(t *testing.T) {
	// Trained values 1, 2, 3, 4: mean 2.5, unbiased variance
	// (2.25 + 0.25 + 0.25 + 2.25)/3 = 5/3; the 99 and 0 are untrained.
	x := [][]float64{{1, 2, 99}, {3, 0, 4}}
	mask := [][]float64{{1, 1, 0}, {1, 0, 1}}
	got, err := WhitenMasked(x, mask)
	if err != nil {
		t.Fatal(err)
	}
	s := math.Sqrt(5.0/3 + 1e-8)
	checkMatrix(t, "whitened", got, [][]float64{{-1.5 / s, -0.5 / s, 0}, {0.5 / s, 0, 1.5 / s}}, 1e-15)
}

func TestWhitenMaskedIgnoresMaskedValues(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	mask := multiTurnMask(r, 4, 16)
	x := randMatrix(r, 4, 16)
	a, err := WhitenMasked(x, mask)
	if err != nil {
		t.Fatal(err)
	}
	b, err := WhitenMasked(withGarbage(r, x, mask), mask)
	if err != nil {
		t.Fatal(err)
	}
	if !identical(a, b) {
		t.Fatal("garbage at untrained positions changed the whitened values")
	}
}

func TestWhitenMaskedNeedsTwoPositions(t *testing.T) {
	for _, mask := range [][][]float64{{{0, 0}}, {{0, 1}}} {
		_, err := WhitenMasked([][]float64{{1, 2}}, mask)
		if err == nil || !strings.Contains(err.Error(), "at least 2") {
			t.Errorf("mask %v: err = %v, want one about at least 2 positions", mask, err)
		}
	}
}

// memSum is an in-memory all-reduce among n goroutines, for the
// data-parallel variants: each call blocks until all n have contributed.
type memSum struct {
	mu    sync.Mutex
	cond  *sync.Cond
	n     int
	round int
	acc   []float64
	seen  int
	out   []float64
}

func newMemSum(n int) *memSum { m := &memSum{n: n}; m.cond = sync.NewCond(&m.mu); return m }

func (m *memSum) sum(v ...*float64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seen == 0 {
		m.acc = make([]float64, len(v))
	}
	for i, p := range v {
		m.acc[i] += *p
	}
	m.seen++
	round := m.round
	if m.seen == m.n {
		m.out, m.seen, m.round = m.acc, 0, m.round+1
		m.cond.Broadcast()
	} else {
		for m.round == round {
			m.cond.Wait()
		}
	}
	for i, p := range v {
		*p = m.out[i]
	}
	return nil
}

// Whitening a batch split across processes gives what whitening it whole
// does, row for row.
func TestWhitenMaskedAcross(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	x, mask := make([][]float64, 7), make([][]float64, 7)
	for i := range x {
		x[i], mask[i] = make([]float64, 5), make([]float64, 5)
		for j := range x[i] {
			x[i][j], mask[i][j] = r.NormFloat64(), float64(r.IntN(2))
		}
	}
	whole, err := WhitenMasked(x, mask)
	if err != nil {
		t.Fatal(err)
	}
	cuts := []int{0, 3, 3, 7} // the middle shard is empty
	ms := newMemSum(3)
	got, errs := make([][][]float64, 3), make([]error, 3)
	var wg sync.WaitGroup
	for k := range 3 {
		wg.Go(func() {
			lo, hi := cuts[k], cuts[k+1]
			got[k], errs[k] = WhitenMaskedAcross(x[lo:hi], mask[lo:hi], ms.sum)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	checkMatrix(t, "sharded", append(append(got[0], got[1]...), got[2]...), whole, 1e-12)
}
