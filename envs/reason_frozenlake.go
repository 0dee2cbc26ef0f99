package envs

import "slices"

// lakeGrammar reads FrozenLake claims (the forms in reason_grid.go) with
// these nouns: hole(s); goal or target; ice, frozen, empty, floor (a frozen
// cell, the start included); safe, free (any cell but a hole); edge, wall,
// border (off the map, for adjacent claims). Only hole and goal claims can
// say "anywhere that way".
var lakeGrammar = newGridGrammar(
	`holes|hole|goal|target|ice|frozen|empty|floor|safe|free|edge|wall|border`,
	`frozen|empty|safe|solid|open|thin|free`)

// Reason checks a think against the lake: its claims with lakeGrammar, its
// plan played without slips (Reasoning documents legality and progress).
func (f *FrozenLake) Reason(think string) Reasoning {
	r := Reasoning{Checked: true, Commits: commitments(think, frozenLakeActions, 0)}
	if !f.ready {
		return r
	}
	r.Claims, r.TrueClaims = countClaims(lakeGrammar.claims(think), f.claimTrue)
	r.PlanChecked = len(r.Commits) > 0 && !f.terminal()
	if r.PlanChecked {
		r.PlanLegal, r.PlanProgress = f.simulate(r.Commits)
	}
	return r
}

// claimTrue judges a claim in the current state; ok is false for a claim
// the grammar parses but FrozenLake cannot mean ("the ice is below me").
func (f *FrozenLake) claimTrue(c gridClaim) (isTrue, ok bool) {
	n := f.cfg.Size
	pr, pc := f.pos/n, f.pos%n
	if c.adjacent {
		r, col := pr+c.dir.dr, pc+c.dir.dc
		if r < 0 || col < 0 || r >= n || col >= n {
			return lakeNounIs(c.noun, 0), true
		}
		return lakeNounIs(c.noun, f.desc[r*n+col]), true
	}
	switch c.noun {
	case "hole", "holes", "goal", "target":
	default:
		return false, false
	}
	for i, cell := range f.desc {
		if lakeNounIs(c.noun, cell) && c.dir.lies(pr, pc, i/n, i%n) {
			return true, true
		}
	}
	return false, true
}

// lakeNounIs reports whether a map cell ('S', 'F', 'H', 'G', or 0 off the
// map) is what the noun names.
func lakeNounIs(noun string, cell byte) bool {
	switch noun {
	case "hole", "holes":
		return cell == 'H'
	case "goal", "target":
		return cell == 'G'
	case "ice", "frozen", "empty", "floor":
		return cell == 'F' || cell == 'S'
	case "safe", "free":
		return cell != 'H' && cell != 0
	}
	return cell == 0 // edge, wall, border
}

// deterministicCopy returns a lake in f's state that never slips and shares
// nothing mutable with f, so plans can be played on it without touching
// f's position or its random stream.
func (f *FrozenLake) deterministicCopy() *FrozenLake {
	c := *f
	c.cfg.Slippery = false
	c.desc = slices.Clone(f.desc)
	c.rng = newSeededRand()
	c.plan = nil
	return &c
}

// simulate plays plan without slips: illegal when a move lands on a hole;
// otherwise the progress of the shortest-path distance to the goal.
func (f *FrozenLake) simulate(plan []string) (legal bool, progress float64) {
	sim := f.deterministicCopy()
	for _, a := range plan {
		_, _, done, _ := sim.Step(a)
		if sim.desc[sim.pos] == 'H' {
			return false, 0
		}
		if done {
			break
		}
	}
	n := f.cfg.Size
	return true, progressRatio(lakeDistance(f.desc, n, f.pos), lakeDistance(f.desc, n, sim.pos))
}

// lakeDistance is the fewest moves from cell s to the goal without slips
// or holes, or -1 when there is no way.
func lakeDistance(desc []byte, n, s int) int {
	dist := make([]int, len(desc))
	for i := range dist {
		dist[i] = -1
	}
	dist[s] = 0
	for queue := []int{s}; len(queue) > 0; queue = queue[1:] {
		u := queue[0]
		if desc[u] == 'G' {
			return dist[u]
		}
		for a := range 4 {
			if v := lakeMove(u, a, n); dist[v] < 0 && desc[v] != 'H' {
				dist[v] = dist[u] + 1
				queue = append(queue, v)
			}
		}
	}
	return -1
}

// GroundedThink states what lies in the cell the plan's first move aims at
// (below, for an empty plan) and, unless the player is on it, where the goal
// lies, preferring the first move's direction; then the plan.
func (f *FrozenLake) GroundedThink(plan []string, style int) string {
	if !f.ready {
		return planSentence(plan, style)
	}
	dir := planStep(plan)
	n := f.cfg.Size
	obj := "the edge"
	if r, c := f.pos/n+dir.dr, f.pos%n+dir.dc; r >= 0 && c >= 0 && r < n && c < n {
		obj = map[byte]string{'H': "a hole", 'G': "the goal", 'F': "ice", 'S': "ice"}[f.desc[r*n+c]]
	}
	toward := ""
	if d, ok := f.goalDirection(dir); ok {
		toward = "the goal is " + gridPhrase(d)
	}
	return groundedGridThink(dir, obj, toward, plan, style)
}

// goalDirection returns a direction in which the goal strictly lies:
// prefer, then vertical, then horizontal; ok is false on the goal.
func (f *FrozenLake) goalDirection(prefer gridStep) (gridStep, bool) {
	n := f.cfg.Size
	g := slices.Index(f.desc, 'G')
	pr, pc, gr, gc := f.pos/n, f.pos%n, g/n, g%n
	switch {
	case prefer.lies(pr, pc, gr, gc):
		return prefer, true
	case gr != pr:
		return gridStep{sign(gr - pr), 0}, true
	case gc != pc:
		return gridStep{0, sign(gc - pc)}, true
	}
	return gridStep{}, false
}

func sign(x int) int {
	if x < 0 {
		return -1
	}
	return 1
}
