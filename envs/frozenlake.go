package envs

import (
	"fmt"
	"strings"
)

// frozenLakeActions are RAGEN's names 1..4; they map to gymnasium's actions
// 0..3 (LEFT, DOWN, RIGHT, UP) in the same order.
var frozenLakeActions = []string{"Left", "Down", "Right", "Up"}

// frozenLakeGridVocab is RAGEN's FrozenLake legend.
var frozenLakeGridVocab = []Symbol{
	{"P", "player"}, {"_", "empty"}, {"O", "hole"}, {"G", "goal"},
	{"X", "player in hole"}, {"√", "player on goal"},
}

// frozenLakeMaxMaps bounds the boards drawn for one seed; with the default
// p = 0.8 a valid 4×4 board comes within a few draws.
const frozenLakeMaxMaps = 100000

// FrozenLakeConfig mirrors RAGEN's FrozenLakeEnvConfig, plus the planning
// horizon of the optimal policy.
type FrozenLakeConfig struct {
	Size     int     // the map is Size×Size
	P        float64 // probability that a cell is frozen (the rest are holes)
	Slippery bool    // moves may slip to either perpendicular direction
	// SuccessRate is gymnasium's success_rate: on slippery ice a move goes
	// the intended way with this probability and each perpendicular way with
	// half the rest. Classic FrozenLake, which RAGEN's paper ran, is 1/3.
	SuccessRate float64
	Observation string // observation_format: ObsGrid (default), ObsCoord or ObsGridCoord
	// PolicyHorizon is the number of steps, counted from Reset, that
	// PolicyAction maximises the success probability over; 0 plans without
	// a limit. The FrozenLake tag sets its action budget, 10.
	PolicyHorizon int
}

// classicSuccessRate is the slippery ice of gymnasium before success_rate
// existed: the intended way and each perpendicular way, 1/3 each.
const classicSuccessRate = 1.0 / 3

// DefaultFrozenLakeConfig returns the defaults of RAGEN's paper runs: 4×4,
// p = 0.8, slippery with 1/3 success. (RAGEN's current dataclass has p 0.9
// and success_rate 0.8: CoordFrozenLake uses those.)
func DefaultFrozenLakeConfig() FrozenLakeConfig {
	return FrozenLakeConfig{Size: 4, P: 0.8, Slippery: true, SuccessRate: classicSuccessRate, Observation: ObsGrid}
}

// Validate reports the first field that cannot make a map.
func (c FrozenLakeConfig) Validate() error {
	switch {
	case c.Size < 2 || c.Size > 64:
		return fmt.Errorf("frozen_lake: Size %d must be in [2, 64]", c.Size)
	case !(c.P > 0 && c.P <= 1):
		return fmt.Errorf("frozen_lake: P %v must be in (0, 1]", c.P)
	case !(c.SuccessRate > 0 && c.SuccessRate <= 1):
		return fmt.Errorf("frozen_lake: SuccessRate %v must be in (0, 1]", c.SuccessRate)
	case c.PolicyHorizon < 0:
		return fmt.Errorf("frozen_lake: PolicyHorizon %d must not be negative", c.PolicyHorizon)
	}
	return checkObservation("frozen_lake", c.Observation)
}

// FrozenLake is RAGEN's FrozenLake: gymnasium's dynamics on a random map
// whose start and goal are random cells joined by a path over ice.
type FrozenLake struct {
	cfg   FrozenLakeConfig
	rng   seededRand
	desc  []byte // 'S', 'F', 'H', 'G', row-major
	pos   int
	steps int
	ready bool
	plan  *lakePlan // built on first use after a Reset
}

// NewFrozenLake builds a FrozenLake environment; call Reset before Step.
func NewFrozenLake(cfg FrozenLakeConfig) (*FrozenLake, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	n := cfg.Size * cfg.Size
	return &FrozenLake{cfg: cfg, rng: newSeededRand(), desc: make([]byte, n)}, nil
}

// Reset draws the map for seed (RAGEN's generate_random_map: redraw the
// whole board until start and goal differ and are connected) and puts the
// player on the start. The same generator then drives the slips.
func (f *FrozenLake) Reset(seed int64) (string, error) {
	f.rng.seed(seed)
	f.ready, f.plan, f.steps = false, nil, 0
	n := f.cfg.Size
	for range frozenLakeMaxMaps {
		for i := range f.desc {
			f.desc[i] = 'H'
			if f.rng.Float64() < f.cfg.P {
				f.desc[i] = 'F'
			}
		}
		start := f.rng.IntN(n)*n + f.rng.IntN(n)
		goal := f.rng.IntN(n)*n + f.rng.IntN(n)
		if start == goal {
			continue
		}
		f.desc[start], f.desc[goal] = 'S', 'G'
		if lakeConnected(f.desc, n, start) {
			f.pos, f.ready = start, true
			return f.Render(), nil
		}
	}
	return "", fmt.Errorf("frozen_lake: no connected map for seed %d in %d boards (Size %d, P %v)",
		seed, frozenLakeMaxMaps, n, f.cfg.P)
}

// lakeConnected reports whether the goal can be reached from start
// without stepping on a hole (RAGEN's is_valid).
func lakeConnected(desc []byte, n, start int) bool {
	seen := make([]bool, len(desc))
	stack := []int{start}
	seen[start] = true
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for a := range 4 {
			t := lakeMove(s, a, n)
			if seen[t] || desc[t] == 'H' {
				continue
			}
			if desc[t] == 'G' {
				return true
			}
			seen[t] = true
			stack = append(stack, t)
		}
	}
	return false
}

// lakeMove is gymnasium's move for action a (0 left, 1 down, 2 right,
// 3 up) from cell s; a move off the edge stays put.
func lakeMove(s, a, n int) int {
	r, c := s/n, s%n
	switch a {
	case 0:
		c = max(c-1, 0)
	case 1:
		r = min(r+1, n-1)
	case 2:
		c = min(c+1, n-1)
	case 3:
		r = max(r-1, 0)
	}
	return r*n + c
}

// slip returns the direction actually taken for intended direction a: a
// itself with probability SuccessRate, otherwise one of its two
// perpendiculars, equally likely. The classic 1/3 draws as it always has,
// so that its seeds replay the episodes of earlier runs.
func (f *FrozenLake) slip(a int) int {
	sr := f.cfg.SuccessRate
	switch {
	case !f.cfg.Slippery || sr == 1:
		return a
	case sr == classicSuccessRate:
		return (a + 3 + f.rng.IntN(3)) % 4 // (a-1)%4, a, (a+1)%4
	}
	u := f.rng.Float64()
	switch {
	case u < sr:
		return a
	case u < sr+(1-sr)/2:
		return (a + 3) % 4
	}
	return (a + 1) % 4
}

// successRate is the probability that a move goes the intended way: 1 on
// ice that does not slip.
func (f *FrozenLake) successRate() float64 {
	if !f.cfg.Slippery {
		return 1
	}
	return f.cfg.SuccessRate
}

// Step moves the player. Reaching the goal pays 1 and ends the episode;
// falling into a hole ends it with 0; there is no step cost. Stepping after
// the end leaves the player where it is, as gymnasium's absorbing states do.
func (f *FrozenLake) Step(action string) (string, float64, bool, Info) {
	a := actionIndex(frozenLakeActions, action)
	if a < 0 || !f.ready {
		return f.Render(), 0, f.terminal(), Info{Success: f.ready && f.desc[f.pos] == 'G'}
	}
	f.steps++
	before := f.pos
	reward := 0.0
	if !f.terminal() {
		f.pos = lakeMove(f.pos, f.slip(a), f.cfg.Size)
		if f.desc[f.pos] == 'G' {
			reward = 1
		}
	}
	return f.Render(), reward, f.terminal(), Info{
		Success:           f.desc[f.pos] == 'G',
		ActionIsValid:     true,
		ActionIsEffective: f.pos != before,
	}
}

// terminal reports the player on a hole or the goal.
func (f *FrozenLake) terminal() bool {
	return f.ready && (f.desc[f.pos] == 'H' || f.desc[f.pos] == 'G')
}

// Render draws the state in the configured observation format: the map
// and/or its coordinates.
func (f *FrozenLake) Render() string {
	if !f.ready {
		return ""
	}
	return observe(f.cfg.Observation, f.renderCoords, f.renderGrid)
}

// renderCoords lists the cells as RAGEN's collect_entity_coordinates does:
// start, goal, the player (on the goal or in a hole when it is), holes.
func (f *FrozenLake) renderCoords() string {
	var start, goal, holes []int
	for i, c := range f.desc {
		switch c {
		case 'S':
			start = append(start, i)
		case 'G':
			goal = append(goal, i)
		case 'H':
			holes = append(holes, i)
		}
	}
	player := coordList{"Player", []int{f.pos}}
	switch f.desc[f.pos] {
	case 'G':
		player.label = "Player on goal"
	case 'H':
		player.label = "Player in hole"
	}
	n := f.cfg.Size
	return renderCoords(n, n, []coordList{{"Start", start}, {"Goal", goal}, player, {"Holes", holes}})
}

// renderGrid draws the map: P for the player (X in a hole, √ on the goal),
// _ for ice (the start too), O for holes, G for the goal.
func (f *FrozenLake) renderGrid() string {
	n := f.cfg.Size
	var b strings.Builder
	b.Grow(len(f.desc) + n + 2)
	for i, c := range f.desc {
		if i > 0 && i%n == 0 {
			b.WriteByte('\n')
		}
		switch {
		case i == f.pos && c == 'H':
			b.WriteByte('X')
		case i == f.pos && c == 'G':
			b.WriteString("√")
		case i == f.pos:
			b.WriteByte('P')
		case c == 'H':
			b.WriteByte('O')
		case c == 'G':
			b.WriteByte('G')
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// Actions returns Left, Down, Right, Up. The slice is shared: do not modify it.
func (f *FrozenLake) Actions() []string { return frozenLakeActions }

// PolicyAction returns the optimal action for the player's cell with the
// steps left in the planning horizon (one step when they are spent), and
// the probability that following the policy reaches the goal within them.
// On a hole or the goal it returns "" and 0 or 1.
func (f *FrozenLake) PolicyAction() (string, float64) {
	if !f.ready {
		return "", 0
	}
	if f.terminal() {
		if f.desc[f.pos] == 'G' {
			return "", 1
		}
		return "", 0
	}
	if f.plan == nil {
		f.plan = planLake(f.desc, f.cfg.Size, f.successRate(), f.cfg.PolicyHorizon)
	}
	a, p := f.plan.best(f.pos, f.cfg.PolicyHorizon-f.steps)
	return frozenLakeActions[a], p
}

// PolicyPlan follows the policy along the cells its moves aim at: what a
// player who writes several moves per answer would plan, knowing the ice
// may send it elsewhere (RAGEN executes an answer's actions in order and
// stops at the first that ends the episode).
func (f *FrozenLake) PolicyPlan(n int) []string {
	first, _ := f.PolicyAction() // also builds the plan
	if first == "" {
		return nil
	}
	var out []string
	pos := f.pos
	for i := range n {
		if c := f.desc[pos]; c == 'H' || c == 'G' {
			break
		}
		a, _ := f.plan.best(pos, f.cfg.PolicyHorizon-f.steps-i)
		out = append(out, frozenLakeActions[a])
		pos = lakeMove(pos, a, f.cfg.Size)
	}
	return out
}
