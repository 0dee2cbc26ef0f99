package envs

// Optimal play on FrozenLake by value iteration. The value of a cell is the
// probability of reaching the goal from it; reaching the goal pays 1, holes
// and the goal end the episode (their own value is 0: nothing more can be
// earned there).

const (
	lakeTieTolerance  = 1e-12  // a later action must beat an earlier one by this much
	lakeConvergence   = 1e-12  // unbounded planning stops when no value moves more
	lakeMaxIterations = 100000 // and in any case after this many sweeps
)

// lakePlan holds the policy for one map. With a horizon, value[k] and
// action[k] are for k steps left (k = 1..horizon); without, index 1 holds
// the converged values.
type lakePlan struct {
	horizon int
	value   [][]float64
	action  [][]int8
}

// planLake runs value iteration on a map (desc as in FrozenLake, n×n)
// whose moves go the intended way with probability successRate and each
// perpendicular way with half the rest.
func planLake(desc []byte, n int, successRate float64, horizon int) *lakePlan {
	cells := n * n
	// outcomes[s][a] lists the cells a move from s in direction a can end on:
	// the intended one alone, or the counter-clockwise perpendicular, the
	// intended and the clockwise perpendicular, weighted by probs. The
	// classic 1/3 keeps nil probs and averages, as it always has, so that
	// its plans and their ties stay exactly as before.
	var probs []float64
	if successRate != 1 && successRate != classicSuccessRate {
		fail := (1 - successRate) / 2
		probs = []float64{fail, successRate, fail}
	}
	outcomes := make([][4][]int, cells)
	for s := range cells {
		for a := range 4 {
			if successRate == 1 {
				outcomes[s][a] = []int{lakeMove(s, a, n)}
				continue
			}
			outcomes[s][a] = []int{lakeMove(s, (a+3)%4, n), lakeMove(s, a, n), lakeMove(s, (a+1)%4, n)}
		}
	}
	sweep := func(prev, value []float64, action []int8) (delta float64) {
		for s := range cells {
			if desc[s] == 'H' || desc[s] == 'G' {
				value[s], action[s] = 0, 0
				continue
			}
			best, bestA := -1.0, 0
			for a := range 4 {
				q := 0.0
				outs := outcomes[s][a]
				for i, t := range outs {
					v := prev[t]
					if desc[t] == 'G' {
						v = 1
					}
					if probs != nil {
						v *= probs[i]
					}
					q += v
				}
				if probs == nil {
					q /= float64(len(outs))
				}
				if q > best+lakeTieTolerance {
					best, bestA = q, a
				}
			}
			if d := best - prev[s]; d > delta || -d > delta {
				delta = max(d, -d)
			}
			value[s], action[s] = best, int8(bestA)
		}
		return delta
	}

	p := &lakePlan{horizon: horizon}
	if horizon > 0 {
		p.value = make([][]float64, horizon+1)
		p.action = make([][]int8, horizon+1)
		p.value[0], p.action[0] = make([]float64, cells), make([]int8, cells)
		for k := 1; k <= horizon; k++ {
			p.value[k], p.action[k] = make([]float64, cells), make([]int8, cells)
			sweep(p.value[k-1], p.value[k], p.action[k])
		}
		return p
	}
	prev, value, action := make([]float64, cells), make([]float64, cells), make([]int8, cells)
	for range lakeMaxIterations {
		d := sweep(prev, value, action)
		prev, value = value, prev
		if d < lakeConvergence {
			break
		}
	}
	p.value = [][]float64{nil, prev}
	p.action = [][]int8{nil, action}
	return p
}

// best returns the policy's action and success probability at cell s with
// left steps to go (clamped to [1, horizon]; ignored without a horizon).
func (p *lakePlan) best(s, left int) (int, float64) {
	k := 1
	if p.horizon > 0 {
		k = min(max(left, 1), p.horizon)
	}
	return int(p.action[k][s]), p.value[k][s]
}
