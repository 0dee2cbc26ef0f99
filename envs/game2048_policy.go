package envs

import (
	"math"
	"math/bits"
)

// The 2048 expert: expectimax to depth 2 over a board heuristic. It picks
// the move m1 that maximises
//
//	E over the tile spawned after m1 [ max over m2 of h(board after m2) ]
//
// where the spawn is each empty cell with equal chance and a 2 or a 4 with
// TwoProb and 1−TwoProb, and h is 0 when no m2 is left. h sums over every
// row and column, in ranks r = log2(tile) (0 for empty), the line score
//
//	200000 + 270·empty + 700·merges − 47·min(up, down) − 11·Σ r^3.5
//
// where merges counts neighbouring equal tiles (empties skipped), and up
// and down sum r^4 differences along the line where it rises or falls, so
// min(up, down) measures how far it is from monotone. The weights are those
// of nneonneo/2048-ai's heuristic: free cells, mergeable pairs and monotone
// lines pay, many large tiles cost. Depth 2 reaches 1024 or 2048 in most
// games; it is a demonstrator, not an optimal player.
const (
	h2048Base   = 200000.0
	h2048Empty  = 270.0
	h2048Merge  = 700.0
	h2048Mono   = 47.0
	h2048Sum    = 11.0
	h2048MonoP  = 4.0
	h2048SumP   = 3.5
	h2048Ranks  = 32 // ranks a table covers: tiles up to 2^31
	h2048Spawn4 = 2  // rank of a spawned 4
)

var h2048MonoPow, h2048SumPow = func() (mono, sum [h2048Ranks]float64) {
	for r := range h2048Ranks {
		mono[r] = math.Pow(float64(r), h2048MonoP)
		sum[r] = math.Pow(float64(r), h2048SumP)
	}
	return mono, sum
}()

// board2048 holds a board in ranks, so the search copies it by value.
type board2048 [game2048MaxSize * game2048MaxSize]int

// PolicyAction returns the expectimax move, or "" when the episode is over.
// The success probability is not computed: it is -1 while the game goes on,
// and 1 or 0 once it is over.
func (g *Game2048) PolicyAction() (string, float64) {
	if !g.ready || g.over() {
		if g.success() {
			return "", 1
		}
		return "", 0
	}
	var b board2048
	for i, v := range g.cells {
		if v != 0 {
			b[i] = bits.TrailingZeros(uint(v))
		}
	}
	best, bestV := -1, math.Inf(-1)
	for a := range game2048Actions {
		after := b
		if _, moved := slideTiles(after[:g.n*g.n], g.n, a, true); !moved {
			continue
		}
		if v := g.expectSpawn(&after); v > bestV {
			best, bestV = a, v
		}
	}
	return game2048Actions[best], -1
}

// PolicyPlan returns PolicyAction's move alone (n ≥ 1): the tile that
// spawns after it decides the next move, so no longer plan is worth
// writing.
func (g *Game2048) PolicyPlan(n int) []string {
	if n < 1 {
		return nil
	}
	if a, _ := g.PolicyAction(); a != "" {
		return []string{a}
	}
	return nil
}

// expectSpawn averages, over the tiles that can spawn on b, the best
// heuristic value one more move reaches.
func (g *Game2048) expectSpawn(b *board2048) float64 {
	cells := g.n * g.n
	total, empties := 0.0, 0
	for i := range cells {
		if b[i] != 0 {
			continue
		}
		empties++
		for _, s := range [2]struct {
			rank int
			p    float64
		}{{1, g.cfg.TwoProb}, {h2048Spawn4, 1 - g.cfg.TwoProb}} {
			if s.p == 0 {
				continue
			}
			b[i] = s.rank
			best := 0.0
			for a := range game2048Actions {
				after := *b
				if _, moved := slideTiles(after[:cells], g.n, a, true); moved {
					best = max(best, g.heuristic(&after))
				}
			}
			total += s.p * best
		}
		b[i] = 0
	}
	return total / float64(empties) // a move always leaves an empty cell
}

// heuristic sums the line score over every row and column of b.
func (g *Game2048) heuristic(b *board2048) float64 {
	n := g.n
	var line [game2048MaxSize]int
	total := 0.0
	for j := range n {
		for k := range n {
			line[k] = b[j*n+k]
		}
		total += h2048Line(line[:n])
		for k := range n {
			line[k] = b[k*n+j]
		}
		total += h2048Line(line[:n])
	}
	return total
}

// h2048Line is the line score of the expert's heuristic (see the top of
// this file), line in ranks.
func h2048Line(line []int) float64 {
	empty, merges, prev := 0, 0, 0
	sum, up, down := 0.0, 0.0, 0.0
	last := 0 // the previous cell's rank
	for k, r := range line {
		r = min(r, h2048Ranks-1)
		sum += h2048SumPow[r]
		if r == 0 {
			empty++
		} else {
			if r == prev {
				merges++
			}
			prev = r
		}
		if k > 0 {
			if d := h2048MonoPow[last] - h2048MonoPow[r]; d > 0 {
				down += d
			} else {
				up -= d
			}
		}
		last = r
	}
	return h2048Base + h2048Empty*float64(empty) + h2048Merge*float64(merges) -
		h2048Mono*min(up, down) - h2048Sum*sum
}
