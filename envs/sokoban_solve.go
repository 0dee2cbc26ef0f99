package envs

// sokobanSolveLimit bounds the positions the solver visits, so a huge or
// hopeless level costs bounded time and memory.
const sokobanSolveLimit = 2_000_000

// solveNode is one visited position of the solver and how it was reached.
type solveNode struct {
	key    sokoKey // the player's cell, then the box cells in ascending order
	parent int32   // index of the previous position, -1 at the start
	move   int8    // the move that led here
}

// solveSokoban finds a shortest sequence of moves (0 up, 1 down, 2 left,
// 3 right; fewest steps, as RAGEN's get_shortest_action_path counts) that
// puts every box on a target, by breadth-first search over
// (player, boxes) positions. It gives up after limit positions. The level
// (cols wide) must have wall borders.
func solveSokoban(cols int, fixed, state []byte, limit int) ([]int, bool) {
	var start sokoKey
	nb, player := 0, -1
	for i, c := range state {
		switch c {
		case cellPlayer:
			player = i
		case cellBox, cellBoxOnTarget:
			if nb == sokobanMaxBoxes {
				return nil, false
			}
			start[1+nb] = uint16(i) // row-major order is ascending
			nb++
		}
	}
	if player < 0 || nb == 0 {
		return nil, false
	}
	start[0] = uint16(player)
	onTargets := func(k *sokoKey) bool {
		for _, b := range k[1 : 1+nb] {
			if fixed[b] != cellTarget {
				return false
			}
		}
		return true
	}
	if onTargets(&start) {
		return []int{}, true
	}

	delta := [4]int{-cols, cols, -1, 1}
	nodes := []solveNode{{key: start, parent: -1}}
	seen := map[sokoKey]struct{}{start: {}}
	for head := 0; head < len(nodes); head++ {
		cur := nodes[head].key
		p := int(cur[0])
		for m, d := range delta {
			to := p + d
			if fixed[to] == cellWall {
				continue
			}
			next := cur
			next[0] = uint16(to)
			pushed := false
			if i := indexOf(cur[1:1+nb], uint16(to)); i >= 0 {
				beyond := to + d
				if fixed[beyond] == cellWall || indexOf(cur[1:1+nb], uint16(beyond)) >= 0 {
					continue
				}
				bx := next[1 : 1+nb]
				bx[i] = uint16(beyond)
				for j := i; j > 0 && bx[j-1] > bx[j]; j-- { // keep the boxes sorted
					bx[j-1], bx[j] = bx[j], bx[j-1]
				}
				for j := i; j+1 < nb && bx[j] > bx[j+1]; j++ {
					bx[j], bx[j+1] = bx[j+1], bx[j]
				}
				pushed = true
			}
			if _, dup := seen[next]; dup {
				continue
			}
			seen[next] = struct{}{}
			nodes = append(nodes, solveNode{key: next, parent: int32(head), move: int8(m)})
			if pushed && onTargets(&next) {
				return solvePath(nodes), true
			}
			if len(nodes) >= limit {
				return nil, false
			}
		}
	}
	return nil, false
}

// solvePath follows parent links back from the last node.
func solvePath(nodes []solveNode) []int {
	var rev []int
	for i := len(nodes) - 1; nodes[i].parent >= 0; i = int(nodes[i].parent) {
		rev = append(rev, int(nodes[i].move))
	}
	for l, r := 0, len(rev)-1; l < r; l, r = l+1, r-1 {
		rev[l], rev[r] = rev[r], rev[l]
	}
	return rev
}

func indexOf(xs []uint16, v uint16) int {
	for i, x := range xs {
		if x == v {
			return i
		}
	}
	return -1
}
