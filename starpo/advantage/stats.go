package advantage

import (
	"fmt"
	"math"
)

// Mean is the arithmetic mean of xs; 0 for none.
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// stdUnbiased is the sample standard deviation sqrt(Σ(x−x̄)²/(n−1)), as
// torch.std. Fewer than two values have no spread: it returns 0 where torch
// returns NaN (the callers document what that means for them).
func stdUnbiased(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	m := Mean(xs)
	ss := 0.0
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return math.Sqrt(ss / float64(len(xs)-1))
}

// maxOf is the largest of xs; −Inf for none.
func maxOf(xs []float64) float64 {
	m := math.Inf(-1)
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// checkShape panics unless m has mask's shape, row by row: mismatched
// shapes are programmer errors, named in the message.
func checkShape(fn, name string, m, mask [][]float64) {
	if len(m) != len(mask) {
		panic(fmt.Sprintf("%s: %s has %d rows, mask has %d", fn, name, len(m), len(mask)))
	}
	for b := range m {
		if len(m[b]) != len(mask[b]) {
			panic(fmt.Sprintf("%s: %s row %d has %d columns, mask has %d", fn, name, b, len(m[b]), len(mask[b])))
		}
	}
}

// indexBy groups the indices of keys by key: the keys in order of first
// appearance, and each key's indices in ascending order.
func indexBy[K comparable](keys []K) (order []K, members map[K][]int) {
	members = map[K][]int{}
	for i, k := range keys {
		if _, ok := members[k]; !ok {
			order = append(order, k)
		}
		members[k] = append(members[k], i)
	}
	return order, members
}
