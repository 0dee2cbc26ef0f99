package advantage

import (
	"fmt"
	"math"
)

// WhitenMasked is verl's masked_whiten over the trained positions of the
// whole batch:
//
//	x̂ = (x − μ) / sqrt(σ² + 1e-8),   μ, σ² = masked mean, unbiased variance
//
// with σ² = Σ(x−μ)²/(n−1) over the n trained positions of every row.
// Untrained positions come back as 0 (verl leaves whitened values there,
// which every masked loss then ignores), so the result does not depend on
// what x holds outside the mask. Fewer than two trained positions is an
// error, as in verl. Shapes that differ from mask's panic.
//
// μ and σ² divide by n and n − 1 exactly; verl's masked_mean divides by
// n + 1e-8, which moves them by a relative 1e-8/n (parity/ measures up to
// 5e-8 in the whitened values at n = 2), below anything fp32 training
// resolves.
func WhitenMasked(x, mask [][]float64) ([][]float64, error) { return WhitenMaskedAcross(x, mask, nil) }

// WhitenMaskedAcross is WhitenMasked with μ and σ² taken over a batch
// split across data-parallel processes: sum adds its arguments over all of
// them in place (nil: this process holds the whole batch). Two passes, as
// above, so the result equals WhitenMasked of the joined batch.
func WhitenMaskedAcross(x, mask [][]float64, sum func(v ...*float64) error) ([][]float64, error) {
	checkShape("advantage.WhitenMasked", "x", x, mask)
	if sum == nil {
		sum = func(...*float64) error { return nil }
	}
	n, total := 0.0, 0.0
	for b, m := range mask {
		for t, w := range m {
			if w != 0 {
				n++
				total += x[b][t]
			}
		}
	}
	if err := sum(&n, &total); err != nil {
		return nil, err
	}
	if n < 2 {
		return nil, fmt.Errorf("whitening needs at least 2 trained positions, the mask has %d", int(n))
	}
	mu := total / n
	ss := 0.0
	for b, m := range mask {
		for t, w := range m {
			if w != 0 {
				ss += (x[b][t] - mu) * (x[b][t] - mu)
			}
		}
	}
	if err := sum(&ss); err != nil {
		return nil, err
	}
	inv := 1 / math.Sqrt(ss/(n-1)+1e-8)
	out := make([][]float64, len(mask))
	for b, m := range mask {
		out[b] = make([]float64, len(m))
		for t, w := range m {
			if w != 0 {
				out[b][t] = (x[b][t] - mu) * inv
			}
		}
	}
	return out, nil
}
