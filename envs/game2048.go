package envs

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"strconv"
	"strings"
)

// game2048Instruction is RAGEN's game_2048 instruction (config/envs.yaml),
// verbatim with the line breaks of its YAML block. Its "small penalty" is
// RAGEN's raw reward; the log reward RAGEN trains with turns it into 0.
const game2048Instruction = "You are playing the 2048 game on a 4x4 grid. Merge equal tiles by sliding Up, Right, Down, or Left.\n" +
	"If a move is invalid (no tiles move), a small penalty is applied. Respond with a single action.\n" +
	"Example: <answer>Up</answer>\n"

// game2048Actions are RAGEN's action_lookup 0..3, in its order.
var game2048Actions = []string{"Up", "Right", "Down", "Left"}

// game2048Spec is RAGEN's game_2048 entry: 700 actions an episode, 8192
// tokens, the action list in the prompt.
func game2048Spec() Spec {
	return Spec{
		EnvType: "game_2048", MaxActionsPerTraj: 700, MaxTokens: 8192,
		Instruction: game2048Instruction, PromptActions: game2048Actions,
		Config: DefaultGame2048Config(),
	}
}

func newGame2048Env(spec Spec) (Env, error) {
	cfg, ok := spec.Config.(Game2048Config)
	if !ok {
		return nil, configTypeError(spec, "Game2048Config")
	}
	e, err := NewGame2048(cfg)
	if err != nil {
		return nil, err
	}
	return e, nil
}

// game2048MaxSize bounds Size so that a board fits the policy's arrays.
const game2048MaxSize = 8

// Game2048Config mirrors RAGEN's Game2048EnvConfig, plus when the episode
// ends.
type Game2048Config struct {
	Size         int     // the board is Size×Size
	TwoProb      float64 // chance that a new tile is a 2 rather than a 4
	UseLogReward bool    // reward a move 0.1·log2(merged+1), 0 when nothing merged, instead of the merged sum
	InvalidScore float64 // raw reward of a move that moves nothing; the log reward pays 0 for it instead
	Target       int     // the tile that counts as success, and the goal the observation names
	// StopAtTarget ends the episode as soon as a Target tile appears. RAGEN
	// (false) ends it only when no move is left, and judges success then.
	StopAtTarget bool
}

// DefaultGame2048Config returns RAGEN's defaults: 4×4, 90% twos, log
// reward, −0.1 for a move that moves nothing, 2048 to win.
func DefaultGame2048Config() Game2048Config {
	return Game2048Config{Size: 4, TwoProb: 0.9, UseLogReward: true, InvalidScore: -0.1, Target: 2048}
}

// Validate reports the first unusable field.
func (c Game2048Config) Validate() error {
	switch {
	case c.Size < 2 || c.Size > game2048MaxSize:
		return fmt.Errorf("game_2048: Size %d must be in [2, %d]", c.Size, game2048MaxSize)
	case !(c.TwoProb >= 0 && c.TwoProb <= 1):
		return fmt.Errorf("game_2048: TwoProb %v must be in [0, 1]", c.TwoProb)
	case math.IsNaN(c.InvalidScore) || math.IsInf(c.InvalidScore, 0):
		return fmt.Errorf("game_2048: InvalidScore %v must be finite", c.InvalidScore)
	case c.Target < 4 || c.Target&(c.Target-1) != 0:
		return fmt.Errorf("game_2048: Target %d must be a power of two of at least 4", c.Target)
	}
	return nil
}

// Game2048 is RAGEN's 2048: slide the tiles, equal neighbours merge once per
// move, and a 2 (or a 4) appears on a random empty cell after every move
// that moved something. The episode ends when no move is left (or, with
// StopAtTarget, at the target tile).
type Game2048 struct {
	cfg   Game2048Config
	rng   seededRand
	n     int
	cells []int // tile values row-major, 0 empty
	score int   // merged sums so far
	ready bool
}

// NewGame2048 builds a 2048 environment; call Reset before Step.
func NewGame2048(cfg Game2048Config) (*Game2048, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Game2048{cfg: cfg, rng: newSeededRand(), n: cfg.Size, cells: make([]int, cfg.Size*cfg.Size)}, nil
}

// Reset empties the board and spawns two tiles.
func (g *Game2048) Reset(seed int64) (string, error) {
	g.rng.seed(seed)
	clear(g.cells)
	g.score = 0
	g.spawn()
	g.spawn()
	g.ready = true
	return g.Render(), nil
}

// spawn puts a 2 (probability TwoProb) or a 4 on an empty cell drawn
// uniformly, as RAGEN does: the cell from the empties in row-major order,
// then the value.
func (g *Game2048) spawn() {
	var empty [game2048MaxSize * game2048MaxSize]int
	k := 0
	for i, v := range g.cells {
		if v == 0 {
			empty[k] = i
			k++
		}
	}
	if k == 0 {
		return
	}
	i := empty[g.rng.IntN(k)]
	g.cells[i] = 4
	if g.rng.Float64() < g.cfg.TwoProb {
		g.cells[i] = 2
	}
}

// Step slides the tiles. The raw reward is the sum of the tiles merged
// (InvalidScore when nothing moved); with UseLogReward the reward is
// 0.1·log2(raw+1) when raw > 0 and 0 otherwise. A move that moves nothing
// is valid as a name but, as in RAGEN, reported as neither valid nor
// effective; it spawns nothing.
func (g *Game2048) Step(action string) (string, float64, bool, Info) {
	a := actionIndex(game2048Actions, action)
	if a < 0 || !g.ready {
		return g.Render(), 0, g.over(), Info{Success: g.success()}
	}
	merged, moved := slideTiles(g.cells, g.n, a, false)
	raw := g.cfg.InvalidScore
	if moved {
		g.spawn()
		g.score += merged
		raw = float64(merged)
	}
	reward := raw
	if g.cfg.UseLogReward {
		reward = 0
		if raw > 0 {
			reward = log2Int(merged+1) * 0.1
		}
	}
	return g.Render(), reward, g.over(), Info{Success: g.success(), ActionIsValid: moved, ActionIsEffective: moved}
}

// log2Prec is the precision log2Int works in: enough that rounding its
// result to 64 bits is the correct rounding.
const log2Prec = 128

// bigLn2 is ln 2 to log2Prec bits.
var bigLn2 = bigLn(big.NewFloat(2).SetPrec(log2Prec))

// log2Int returns log2(m) for m ≥ 1, correctly rounded. The reward it
// feeds is printed in the prompt, so it should be the bits glibc's log2
// (which NumPy calls) gives: over the integers 2..20000 this differs from
// glibc on 4 near-ties (1621·2^k), math.Log2 on 455 (log2 9 among them).
func log2Int(m int) float64 {
	e := bits.Len(uint(m)) - 1
	if m == 1<<e {
		return float64(e)
	}
	f := new(big.Float).SetPrec(log2Prec).SetInt64(int64(m))
	f.SetMantExp(f, -e) // m / 2^e, in (1, 2)
	q := bigLn(f)
	q.Quo(q, bigLn2)
	q.Add(q, new(big.Float).SetInt64(int64(e)))
	r, _ := q.Float64()
	return r
}

// bigLn is ln x for x in [1, 2], as 2·atanh(z) = 2·Σ z^(2k+1)/(2k+1) with
// z = (x−1)/(x+1) ≤ 1/3, summed until the terms fall below the precision.
func bigLn(x *big.Float) *big.Float {
	one := big.NewFloat(1)
	z := new(big.Float).SetPrec(log2Prec).Sub(x, one)
	z.Quo(z, new(big.Float).SetPrec(log2Prec).Add(x, one))
	z2 := new(big.Float).SetPrec(log2Prec).Mul(z, z)
	sum := new(big.Float).SetPrec(log2Prec).Set(z)
	pow := new(big.Float).SetPrec(log2Prec).Set(z)
	term := new(big.Float).SetPrec(log2Prec)
	for k := int64(1); z.Sign() != 0; k++ {
		pow.Mul(pow, z2)
		term.Quo(pow, big.NewFloat(float64(2*k+1)))
		if term.MantExp(nil)-sum.MantExp(nil) < -log2Prec {
			break
		}
		sum.Add(sum, term)
	}
	return sum.Mul(sum, big.NewFloat(2))
}

// over reports the end of the episode: no move left, or the target reached
// when the episode stops there.
func (g *Game2048) over() bool {
	if !g.ready {
		return false
	}
	return (g.cfg.StopAtTarget && g.maxTile() >= g.cfg.Target) || len(g.legal()) == 0
}

// success is RAGEN's: the episode is over with a Target tile on the board.
func (g *Game2048) success() bool { return g.over() && g.maxTile() >= g.cfg.Target }

func (g *Game2048) maxTile() int {
	m := 0
	for _, v := range g.cells {
		m = max(m, v)
	}
	return m
}

// legal lists the indices of the moves that would move a tile.
func (g *Game2048) legal() []int {
	var out []int
	for a := range game2048Actions {
		if canSlide2048(g.cells, g.n, a) {
			out = append(out, a)
		}
	}
	return out
}

// lineCell2048 is the cell of line j (a column for Up and Down, a row for
// Right and Left) that sits k cells from the edge the tiles slide to.
func lineCell2048(n, a, j, k int) int {
	switch a {
	case 0: // Up
		return k*n + j
	case 1: // Right
		return j*n + n - 1 - k
	case 2: // Down
		return (n-1-k)*n + j
	}
	return j*n + k // Left
}

// slideTiles moves every line towards action a's edge: the tiles close up,
// then each pair of equal neighbours, taken from that edge, merges once
// ([2 2 2 2] → [4 4 0 0], [4 4 8 0] → [8 8 0 0], never [16 0 0 0]). It
// returns the sum of the merged tiles and whether any tile moved. With
// ranks the cells hold log2 of the tiles (the expert's search), a merge
// adds one, and the sum returned is of merged ranks.
func slideTiles(cells []int, n, a int, ranks bool) (merged int, moved bool) {
	var line [game2048MaxSize]int
	for j := range n {
		w, pending := 0, 0
		for k := range n {
			v := cells[lineCell2048(n, a, j, k)]
			switch {
			case v == 0:
			case v == pending:
				m := 2 * v
				if ranks {
					m = v + 1
				}
				line[w], pending = m, 0
				merged += m
				w++
			default:
				if pending != 0 {
					line[w] = pending
					w++
				}
				pending = v
			}
		}
		if pending != 0 {
			line[w] = pending
			w++
		}
		clear(line[w:n])
		for k := range n {
			if i := lineCell2048(n, a, j, k); cells[i] != line[k] {
				cells[i], moved = line[k], true
			}
		}
	}
	return merged, moved
}

// canSlide2048 reports whether action a would move a tile: some tile has an
// empty cell or an equal tile next to it on the side the tiles slide to.
func canSlide2048(cells []int, n, a int) bool {
	for j := range n {
		for k := 1; k < n; k++ {
			v, ahead := cells[lineCell2048(n, a, j, k)], cells[lineCell2048(n, a, j, k-1)]
			if v != 0 && (ahead == 0 || ahead == v) {
				return true
			}
		}
	}
	return false
}

// Render is RAGEN's text: the rows as Python lists, the moves that would
// move a tile as index(Name), the goal and the score.
func (g *Game2048) Render() string {
	if !g.ready {
		return ""
	}
	var b strings.Builder
	b.WriteString("Current 2048 Grid:")
	for r := range g.n {
		fmt.Fprintf(&b, "\nRow %d: %s", r+1, pyIntList(g.cells[r*g.n:(r+1)*g.n]))
	}
	valid := "None"
	if legal := g.legal(); len(legal) > 0 {
		names := make([]string, len(legal))
		for i, a := range legal {
			names[i] = strconv.Itoa(a) + "(" + game2048Actions[a] + ")"
		}
		valid = strings.Join(names, ", ")
	}
	fmt.Fprintf(&b, "\n\nValid Actions: %s.\nGoal: Merge same numbers to reach %d.\nCurrent Score: %d\nWhat is your next move?",
		valid, g.cfg.Target, g.score)
	return b.String()
}

// Actions returns Up, Right, Down, Left. The slice is shared: do not
// modify it.
func (g *Game2048) Actions() []string { return game2048Actions }

// loadBoard replaces the board with cells (row-major) and zeroes the
// score. It lets tests set up exact positions.
func (g *Game2048) loadBoard(cells ...int) error {
	if len(cells) != len(g.cells) {
		return fmt.Errorf("game_2048: board has %d cells, want %d", len(cells), len(g.cells))
	}
	for i, v := range cells {
		if v < 0 || v == 1 || v&(v-1) != 0 {
			return fmt.Errorf("game_2048: cell %d: %d is neither 0 nor a power of two of at least 2", i, v)
		}
	}
	copy(g.cells, cells)
	g.score, g.ready = 0, true
	return nil
}
