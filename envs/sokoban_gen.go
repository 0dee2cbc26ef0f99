package envs

import "math/rand/v2"

// Level generation after RAGEN's sokoban/utils.py (itself adapted from
// gym-sokoban): carve a room by a random walk, drop the player and the
// targets on its floor, then play backwards from the solved position,
// pulling boxes off their targets, and keep the position whose boxes moved
// farthest. Every pull can be undone by a push, so every level is solvable.

const (
	genChangeDirection = 0.35   // chance per walk step of a new direction
	genTopologyTries   = 4      // rooms tried before the seed counts as failed
	genMaxExplored     = 300000 // reverse-play states explored at most
)

// genMasks are the five floor stamps of the walk, centred on its position.
var genMasks = [5][3][3]byte{
	{{0, 0, 0}, {1, 1, 1}, {0, 0, 0}},
	{{0, 1, 0}, {0, 1, 0}, {0, 1, 0}},
	{{0, 0, 0}, {1, 1, 0}, {0, 1, 0}},
	{{0, 0, 0}, {1, 1, 0}, {1, 1, 0}},
	{{0, 0, 0}, {0, 1, 1}, {0, 1, 0}},
}

// genWalkDirections is the walk's direction list, in RAGEN's order.
var genWalkDirections = [4][2]int{{1, 0}, {0, 1}, {-1, 0}, {0, -1}}

// sokoKey identifies a position: the player's cell, then the boxes' cells
// (cell<<1, plus 1 for a box the search has pulled, because RAGEN hashes
// its room array, where pulled boxes carry a different code), sorted.
type sokoKey [1 + sokobanMaxBoxes]uint16

// sokobanGen holds the scratch space of one environment's generator, reused
// across resets.
type sokobanGen struct {
	rows, cols, numBoxes, searchDepth int
	numWalkSteps                      int
	rng                               *rand.Rand

	fixed   []byte // the room: walls, floor, targets
	state   []byte // reverse play: fixed plus boxes (3 once pulled) and player
	player  int
	targets []int // box i started on targets[i]
	boxAt   []int // box i is now on boxAt[i]
	delta   [4]int

	explored  map[sokoKey]struct{}
	bestScore int
	bestDisp  int
	out       []byte // the best position found, then the generated level
}

func newSokobanGen(cfg SokobanConfig) *sokobanGen {
	n := cfg.DimX * cfg.DimY
	return &sokobanGen{
		rows: cfg.DimX, cols: cfg.DimY, numBoxes: cfg.NumBoxes, searchDepth: cfg.SearchDepth,
		numWalkSteps: int(1.7 * float64(cfg.DimX+cfg.DimY)),
		fixed:        make([]byte, n), state: make([]byte, n), out: make([]byte, n),
		targets: make([]int, 0, cfg.NumBoxes), boxAt: make([]int, 0, cfg.NumBoxes),
		delta:    [4]int{-cfg.DimY, cfg.DimY, -1, 1},
		explored: map[sokoKey]struct{}{},
	}
}

// generate makes a level into g.fixed and g.out from rng. It returns false
// where RAGEN raises (too little floor, or no pull moved a box in any of the
// tries), and the caller moves on to a derived seed.
func (g *sokobanGen) generate(rng *rand.Rand) bool {
	g.rng = rng
	for range genTopologyTries {
		g.carve()
		if !g.place() {
			return false
		}
		g.reversePlay()
		if g.bestDisp > 0 {
			break
		}
	}
	if g.bestDisp == 0 {
		return false
	}
	for i, c := range g.out {
		if c == cellBoxOnTarget {
			g.out[i] = cellBox // RAGEN's final room marks every box "off target"
		}
	}
	moveProb := 0.5
	if g.bestDisp == 1 {
		moveProb = 0.8 // a box one step from its target: move the player away more often
	}
	g.wanderPlayer(moveProb)
	return true
}

// carve draws the room: a random walk stamping floor masks, walls around.
func (g *sokobanGen) carve() {
	clear(g.fixed)
	rows, cols := g.rows, g.cols
	dir := genWalkDirections[g.rng.IntN(4)]
	r, c := 1+g.rng.IntN(rows-1), 1+g.rng.IntN(cols-1)
	for range g.numWalkSteps {
		if g.rng.Float64() < genChangeDirection {
			dir = genWalkDirections[g.rng.IntN(4)]
		}
		r = min(max(r+dir[0], 1), rows-2)
		c = min(max(c+dir[1], 1), cols-2)
		m := &genMasks[g.rng.IntN(len(genMasks))]
		for i := range 3 {
			for j := range 3 {
				if m[i][j] == 1 {
					g.fixed[(r-1+i)*cols+c-1+j] = cellFloor
				}
			}
		}
	}
	for i := range g.fixed {
		if r, c := i/cols, i%cols; r == 0 || c == 0 || r == rows-1 || c == cols-1 {
			g.fixed[i] = cellWall
		}
	}
}

// place puts the player and then each target on a uniformly drawn free
// floor cell; the boxes start on their targets.
func (g *sokobanGen) place() bool {
	floor := 0
	for _, c := range g.fixed {
		if c == cellFloor {
			floor++
		}
	}
	if floor <= g.numBoxes+1 {
		return false
	}
	copy(g.state, g.fixed)
	g.player = g.nthFloor(g.rng.IntN(floor))
	g.state[g.player] = cellPlayer
	for b := range g.numBoxes {
		t := g.nthFloor(g.rng.IntN(floor - 1 - b))
		g.fixed[t] = cellTarget
		g.state[t] = cellBox
	}
	g.targets, g.boxAt = g.targets[:0], g.boxAt[:0]
	for i, c := range g.fixed {
		if c == cellTarget {
			g.targets = append(g.targets, i) // box identities in row-major order, as NumPy lists them
			g.boxAt = append(g.boxAt, i)
		}
	}
	return true
}

// nthFloor returns the n-th (row-major) cell of g.state that is bare floor.
func (g *sokobanGen) nthFloor(n int) int {
	for i, c := range g.state {
		if c == cellFloor {
			if n == 0 {
				return i
			}
			n--
		}
	}
	panic("envs: nthFloor past the last floor cell") // place counts cells first
}

// reversePlay runs RAGEN's depth-first search of pulls and leaves the best
// position in g.out.
func (g *sokobanGen) reversePlay() {
	clear(g.explored)
	g.bestScore, g.bestDisp = -1, 0
	g.search(g.searchDepth, 0, -1)
}

// search is RAGEN's depth_first_search: ttl counts down per level, a
// position is expanded only the first time it is seen (at whatever depth),
// and a position scores swaps × displacement, or 0 while any target is
// covered. The first position with the strictly best score is kept.
func (g *sokobanGen) search(ttl, swaps, lastPull int) {
	ttl--
	if ttl <= 0 || len(g.explored) >= genMaxExplored {
		return
	}
	k := g.key()
	if _, seen := g.explored[k]; seen {
		return
	}
	g.explored[k] = struct{}{}
	disp := g.displacement()
	score := swaps * disp
	for _, t := range g.targets {
		if g.state[t] != cellTarget {
			score = 0
			break
		}
	}
	if score > g.bestScore {
		g.bestScore, g.bestDisp = score, disp
		copy(g.out, g.state)
	}
	for a := range 4 {
		u, moved := g.pull(a)
		if !moved {
			continue // RAGEN recurses into the same, already explored position
		}
		next, nextSwaps := lastPull, swaps
		if u.box >= 0 {
			next = u.box
		}
		if next != lastPull {
			nextSwaps++
		}
		g.search(ttl, nextSwaps, next)
		g.undo(u)
	}
}

// pullUndo records what one reverse move changed.
type pullUndo struct {
	from, to int  // the player's cells before and after
	box      int  // the box pulled, or -1
	boxFrom  int  // where it was
	boxCode  byte // and its code there
}

// pull is RAGEN's reverse_move: step into a free cell and drag along a box
// that stands directly behind.
func (g *sokobanGen) pull(a int) (pullUndo, bool) {
	p := g.player
	to := p + g.delta[a]
	if !isFree(g.state[to]) {
		return pullUndo{}, false
	}
	u := pullUndo{from: p, to: to, box: -1}
	g.state[p], g.state[to], g.player = g.fixed[p], cellPlayer, to
	behind := p - g.delta[a]
	if c := g.state[behind]; c == cellBox || c == cellBoxOnTarget {
		for i, b := range g.boxAt {
			if b == behind {
				u.box, u.boxFrom, u.boxCode = i, behind, c
				g.boxAt[i] = p
				break
			}
		}
		g.state[p], g.state[behind] = cellBoxOnTarget, g.fixed[behind]
	}
	return u, true
}

func (g *sokobanGen) undo(u pullUndo) {
	if u.box >= 0 {
		g.boxAt[u.box] = u.boxFrom
		g.state[u.boxFrom] = u.boxCode
	}
	g.state[u.from], g.state[u.to], g.player = cellPlayer, g.fixed[u.to], u.from
}

func (g *sokobanGen) key() sokoKey {
	var k sokoKey
	k[0] = uint16(g.player)
	boxes := k[1 : 1+len(g.boxAt)]
	for i, b := range g.boxAt {
		v := uint16(b << 1)
		if g.state[b] == cellBoxOnTarget {
			v |= 1
		}
		j := i
		for ; j > 0 && boxes[j-1] > v; j-- {
			boxes[j] = boxes[j-1]
		}
		boxes[j] = v
	}
	return k
}

// displacement is the sum of the boxes' Manhattan distances from the
// targets they started on.
func (g *sokobanGen) displacement() int {
	d := 0
	for i, b := range g.boxAt {
		t := g.targets[i]
		d += abs(b/g.cols-t/g.cols) + abs(b%g.cols-t%g.cols)
	}
	return d
}

// wanderPlayer is RAGEN's add_random_player_movement: with probability
// moveProb, walk the player 1 to 3 steps onto free cells it has not stood
// on, continuing after each step with probability 1/2. Without it the
// player would always start next to the box it last pulled.
func (g *sokobanGen) wanderPlayer(moveProb float64) {
	if g.rng.Float64() > moveProb {
		return
	}
	p := -1
	for i, c := range g.out {
		if c == cellPlayer {
			p = i
		}
	}
	visited := [4]int{p, -1, -1, -1}
	var options [4]int
	for step := 1; step <= 3; step++ {
		n := 0
		for a := range 4 {
			to := p + g.delta[a]
			if isFree(g.out[to]) && to != visited[0] && to != visited[1] && to != visited[2] {
				options[n] = to
				n++
			}
		}
		if n == 0 {
			return
		}
		to := options[g.rng.IntN(n)]
		g.out[p], g.out[to] = g.fixed[p], cellPlayer
		p = to
		visited[step] = p
		if step == 3 || g.rng.Float64() > 0.5 {
			return
		}
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
