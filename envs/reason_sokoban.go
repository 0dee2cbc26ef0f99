package envs

import (
	"slices"
	"strings"
)

// sokobanGrammar reads Sokoban claims (the forms in reason_grid.go) with
// these nouns: wall(s), edge, border (a wall, or off the grid); box(es),
// crate(s) (a box, on a target or not); target(s), goal(s) (a target cell,
// covered or not); floor, empty, free, open (a cell the player can walk
// onto: floor or an uncovered target). Only box and target claims can say
// "anywhere that way". Names follow the default legend whatever symbols
// the level is drawn with.
var sokobanGrammar = newGridGrammar(
	`walls|wall|edge|border|boxes|box|crates|crate|targets|target|goals|goal|floor|empty|free|open`,
	`empty|free|open|solid`)

// Reason checks a think against the level: its claims with sokobanGrammar,
// its plan played on a copy (Reasoning documents legality and progress).
func (s *Sokoban) Reason(think string) Reasoning {
	r := Reasoning{Checked: true, Commits: commitments(think, sokobanActions, 0)}
	if !s.ready {
		return r
	}
	r.Claims, r.TrueClaims = countClaims(sokobanGrammar.claims(think), s.claimTrue)
	r.PlanChecked = len(r.Commits) > 0 && !s.over()
	if r.PlanChecked {
		r.PlanLegal, r.PlanProgress = s.simulate(r.Commits)
	}
	return r
}

// sokobanKind is the object class a noun names.
func sokobanKind(noun string) string {
	switch {
	case strings.HasPrefix(noun, "wall"), noun == "edge", noun == "border":
		return "wall"
	case strings.HasPrefix(noun, "box"), strings.HasPrefix(noun, "crate"):
		return "box"
	case strings.HasPrefix(noun, "target"), strings.HasPrefix(noun, "goal"):
		return "target"
	}
	return "free"
}

// claimTrue judges a claim in the current state; ok is false for a claim
// the grammar parses but Sokoban cannot mean ("the floor is below me").
func (s *Sokoban) claimTrue(c gridClaim) (isTrue, ok bool) {
	kind := sokobanKind(c.noun)
	pr, pc := s.player/s.cols, s.player%s.cols
	if c.adjacent {
		r, col := pr+c.dir.dr, pc+c.dir.dc
		if r < 0 || col < 0 || r >= s.rows || col >= s.cols {
			return kind == "wall", true
		}
		return s.cellIs(r*s.cols+col, kind), true
	}
	if kind != "box" && kind != "target" {
		return false, false
	}
	for i := range s.state {
		if s.cellIs(i, kind) && c.dir.lies(pr, pc, i/s.cols, i%s.cols) {
			return true, true
		}
	}
	return false, true
}

// cellIs reports whether cell i holds an object of kind.
func (s *Sokoban) cellIs(i int, kind string) bool {
	switch kind {
	case "wall":
		return s.fixed[i] == cellWall
	case "box":
		return s.state[i] == cellBox || s.state[i] == cellBoxOnTarget
	case "target":
		return s.fixed[i] == cellTarget
	}
	return isFree(s.state[i])
}

// clone returns a copy of the level and episode that shares nothing
// mutable with s. It can Step, not Reset.
func (s *Sokoban) clone() *Sokoban {
	c := *s
	c.fixed, c.state = slices.Clone(s.fixed), slices.Clone(s.state)
	c.gen, c.rng = nil, newSeededRand()
	return &c
}

// simulate plays plan on a clone: illegal at the first illegal move (see
// legalMove); otherwise the progress of the summed box-to-target distance.
func (s *Sokoban) simulate(plan []string) (legal bool, progress float64) {
	sim := s.clone()
	for _, a := range plan {
		if !sim.legalMove(actionIndex(sokobanActions, a)) {
			return false, 0
		}
		if _, _, done, _ := sim.Step(a); done {
			break
		}
	}
	if sim.solved() {
		return true, 1
	}
	return true, progressRatio(s.boxDistance(), sim.boxDistance())
}

// legalMove reports whether move a (0 up, 1 down, 2 left, 3 right) moves
// the player without walking into a wall, without a push that fails (box
// against a wall or a box), and without pushing a box into a dead corner.
func (s *Sokoban) legalMove(a int) bool {
	if a < 0 {
		return false
	}
	d := s.delta(a)
	next := s.player + d
	if s.fixed[next] == cellWall {
		return false
	}
	if c := s.state[next]; c != cellBox && c != cellBoxOnTarget {
		return true
	}
	beyond := next + d // inside: the box is not on the wall border
	return isFree(s.state[beyond]) && (s.fixed[beyond] == cellTarget || !s.deadCorner(beyond))
}

// deadCorner reports walls on two orthogonal sides of interior cell i: a
// box there can be pushed neither along one axis nor the other.
func (s *Sokoban) deadCorner(i int) bool {
	wall := func(j int) bool { return s.fixed[j] == cellWall }
	return (wall(i-s.cols) || wall(i+s.cols)) && (wall(i-1) || wall(i+1))
}

// boxDistance sums, over boxes, the Manhattan distance to the nearest
// target; 0 when every box is on a target.
func (s *Sokoban) boxDistance() int {
	var targets []int
	for i, f := range s.fixed {
		if f == cellTarget {
			targets = append(targets, i)
		}
	}
	sum := 0
	for i, c := range s.state {
		if c != cellBox && c != cellBoxOnTarget {
			continue
		}
		best := -1
		for _, t := range targets {
			d := abs(i/s.cols-t/s.cols) + abs(i%s.cols-t%s.cols)
			if best < 0 || d < best {
				best = d
			}
		}
		sum += max(best, 0)
	}
	return sum
}

// GroundedThink states what is in the cell the plan's first move enters
// (below, for an empty plan) and where a box (style 1: a target) lies,
// preferring the first move's direction; then the plan.
func (s *Sokoban) GroundedThink(plan []string, style int) string {
	if !s.ready {
		return planSentence(plan, style)
	}
	dir := planStep(plan)
	kinds := []string{"box", "target"}
	if styleIndex(style) == 1 {
		kinds = []string{"target", "box"}
	}
	toward := ""
	for _, kind := range kinds {
		if d, ok := s.lieDirection(kind, dir); ok {
			toward = "the " + kind + " is " + gridPhrase(d)
			break
		}
	}
	return groundedGridThink(dir, s.adjacentObject(dir), toward, plan, style)
}

// adjacentObject names what the neighbouring cell in direction d holds.
func (s *Sokoban) adjacentObject(d gridStep) string {
	r, c := s.player/s.cols+d.dr, s.player%s.cols+d.dc
	if r < 0 || c < 0 || r >= s.rows || c >= s.cols {
		return "a wall"
	}
	i := r*s.cols + c
	switch {
	case s.cellIs(i, "wall"):
		return "a wall"
	case s.cellIs(i, "box"):
		return "a box"
	case s.cellIs(i, "target"):
		return "a target"
	}
	return "empty floor"
}

// lieDirection returns a direction in which an object of kind strictly
// lies, trying prefer first, then up, down, left, right.
func (s *Sokoban) lieDirection(kind string, prefer gridStep) (gridStep, bool) {
	for _, d := range []gridStep{prefer, {-1, 0}, {1, 0}, {0, -1}, {0, 1}} {
		if t, _ := s.claimTrue(gridClaim{noun: kind, dir: d}); t {
			return d, true
		}
	}
	return gridStep{}, false
}
