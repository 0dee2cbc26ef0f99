package envs

import (
	"math/bits"
	"math/rand/v2"
)

// Puzzle generation. RAGEN fills a grid by randomised backtracking and then
// blanks a fixed share of cells at random, which often leaves puzzles with
// several solutions (and its reward then calls a valid, different answer
// "not optimal"). Here the removal keeps a clue whenever blanking it would
// admit a second solution, so every puzzle has exactly one: the counting
// solver below stops as soon as it has seen two.

const (
	// sudokuMaxAttempts bounds the full grids drawn for one seed; an attempt
	// fails when its removal order gets stuck above the clue target.
	sudokuMaxAttempts = 200
	// sudokuSearchBudget bounds the nodes of one count. A count that runs
	// out answers "not unique", so the clue stays: puzzles stay unique, at
	// worst with a clue more than asked for.
	sudokuSearchBudget = 200000
)

// sudokuBoard is a Size×Size grid, cells row-major, 0 for empty, with the
// values each row, column and box holds as bit masks (bit v-1 is value v),
// so that a cell's candidates are one mask operation.
type sudokuBoard struct {
	n, box        int
	cells         []int8
	row, col, blk []uint32
	full          uint32 // the bits of the values 1..n
}

func newSudokuBoard(n int) *sudokuBoard {
	box := sudokuBoxSize(n)
	return &sudokuBoard{
		n: n, box: box, cells: make([]int8, n*n),
		row: make([]uint32, n), col: make([]uint32, n), blk: make([]uint32, n),
		full: 1<<n - 1,
	}
}

// sudokuBoxSize is the side of a box: 2 for 4×4, 3 for 9×9, 4 for 16×16.
func sudokuBoxSize(n int) int {
	b := 1
	for b*b < n {
		b++
	}
	return b
}

// reset empties the board.
func (b *sudokuBoard) reset() {
	clear(b.cells)
	clear(b.row)
	clear(b.col)
	clear(b.blk)
}

// load copies cells (not b.cells itself) in and rebuilds the masks. It
// reports false when two equal values share a row, column or box.
func (b *sudokuBoard) load(cells []int8) bool {
	b.reset()
	ok := true
	for i, v := range cells {
		if v == 0 {
			continue
		}
		if b.candidates(i)&(1<<(v-1)) == 0 {
			ok = false
		}
		b.set(i, v)
	}
	return ok
}

func (b *sudokuBoard) blockOf(i int) int {
	r, c := i/b.n, i%b.n
	return r/b.box*b.box + c/b.box
}

// candidates are the values no cell of i's row, column or box holds.
func (b *sudokuBoard) candidates(i int) uint32 {
	return b.full &^ (b.row[i/b.n] | b.col[i%b.n] | b.blk[b.blockOf(i)])
}

func (b *sudokuBoard) set(i int, v int8) {
	m := uint32(1) << (v - 1)
	b.cells[i] = v
	b.row[i/b.n] |= m
	b.col[i%b.n] |= m
	b.blk[b.blockOf(i)] |= m
}

// unset empties cell i. Only valid on a board without conflicts, where no
// other cell of its units shares its value.
func (b *sudokuBoard) unset(i int) {
	m := ^(uint32(1) << (b.cells[i] - 1))
	b.cells[i] = 0
	b.row[i/b.n] &= m
	b.col[i%b.n] &= m
	b.blk[b.blockOf(i)] &= m
}

// mostConstrained returns the empty cell with the fewest candidates (the
// first in row-major order among ties) and its candidates, or -1 when the
// grid is full.
func (b *sudokuBoard) mostConstrained() (int, uint32) {
	best, bestCands, bestN := -1, uint32(0), b.n+1
	for i, v := range b.cells {
		if v != 0 {
			continue
		}
		c := b.candidates(i)
		if k := bits.OnesCount32(c); k < bestN {
			best, bestCands, bestN = i, c, k
			if k <= 1 {
				break // nothing beats a dead end or a forced cell
			}
		}
	}
	return best, bestCands
}

// count returns the number of solutions, stopping at limit, and spends one
// unit of budget per value tried; a count that exhausts the budget returns
// limit. The board is left as it was found.
func (b *sudokuBoard) count(limit int, budget *int) int {
	i, cands := b.mostConstrained()
	if i < 0 {
		return 1
	}
	found := 0
	for cands != 0 {
		if *budget <= 0 {
			return limit
		}
		*budget--
		v := int8(bits.TrailingZeros32(cands) + 1)
		cands &= cands - 1
		b.set(i, v)
		found += b.count(limit-found, budget)
		b.unset(i)
		if found >= limit {
			return found
		}
	}
	return found
}

// fill completes the board with values tried in random order, most
// constrained cell first, and reports whether it did within the budget.
// On failure the board is left as it was found.
func (b *sudokuBoard) fill(rng *rand.Rand, budget *int) bool {
	i, cands := b.mostConstrained()
	if i < 0 {
		return true
	}
	var vals [32]int8
	k := 0
	for ; cands != 0; cands &= cands - 1 {
		vals[k] = int8(bits.TrailingZeros32(cands) + 1)
		k++
	}
	rng.Shuffle(k, func(x, y int) { vals[x], vals[y] = vals[y], vals[x] })
	for _, v := range vals[:k] {
		if *budget <= 0 {
			return false
		}
		*budget--
		b.set(i, v)
		if b.fill(rng, budget) {
			return true
		}
		b.unset(i)
	}
	return false
}

// generateSudoku draws a full grid, then blanks cells in a random order,
// keeping each one whose removal would admit a second solution, until
// clues remain. An order that gets stuck above clues draws a new grid.
// puzzle and solution are written in place; ok is false when no attempt
// reached clues.
func generateSudoku(b *sudokuBoard, clues int, rng *rand.Rand, puzzle, solution []int8) bool {
	cells := len(b.cells)
	order := make([]int, cells)
	for range sudokuMaxAttempts {
		b.reset()
		budget := sudokuSearchBudget
		if !b.fill(rng, &budget) {
			continue
		}
		copy(solution, b.cells)
		for i := range order {
			order[i] = i
		}
		rng.Shuffle(cells, func(x, y int) { order[x], order[y] = order[y], order[x] })
		left := cells
		for _, i := range order {
			if left == clues {
				break
			}
			v := b.cells[i]
			b.unset(i)
			budget := sudokuSearchBudget
			if b.count(2, &budget) == 1 {
				left--
			} else {
				b.set(i, v)
			}
		}
		if left == clues {
			copy(puzzle, b.cells)
			return true
		}
	}
	return false
}
