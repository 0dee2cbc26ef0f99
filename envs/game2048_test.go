package envs

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// newTest2048 returns a 2048 environment with cfg (the defaults when nil)
// loaded with a hand-made board.
func newTest2048(t *testing.T, cfg *Game2048Config, cells ...int) *Game2048 {
	t.Helper()
	c := DefaultGame2048Config()
	if cfg != nil {
		c = *cfg
	}
	g, err := NewGame2048(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.loadBoard(cells...); err != nil {
		t.Fatal(err)
	}
	return g
}

func TestSlideTiles(t *testing.T) {
	// Each line is written from the edge the tiles slide to; it is placed
	// on the board as the action reads it (row 2 for Left and Right, column
	// 2 for Up and Down), the rest of the board empty.
	for _, tt := range []struct {
		line, want []int
		merged     int
	}{
		{[]int{2, 2, 2, 2}, []int{4, 4, 0, 0}, 8},
		{[]int{2, 2, 4, 0}, []int{4, 4, 0, 0}, 4}, // no double merge into 8
		{[]int{4, 4, 8, 0}, []int{8, 8, 0, 0}, 8},
		{[]int{2, 2, 2, 0}, []int{4, 2, 0, 0}, 4}, // the pair at the edge merges
		{[]int{2, 0, 2, 4}, []int{4, 4, 0, 0}, 4},
		{[]int{0, 0, 0, 2}, []int{2, 0, 0, 0}, 0},
		{[]int{4, 2, 2, 4}, []int{4, 4, 4, 0}, 4},
		{[]int{8, 8, 4, 4}, []int{16, 8, 0, 0}, 24},
		{[]int{2, 4, 8, 16}, []int{2, 4, 8, 16}, 0},
		{[]int{0, 0, 0, 0}, []int{0, 0, 0, 0}, 0},
	} {
		for a, name := range game2048Actions {
			cells, want := make([]int, 16), make([]int, 16)
			for k := range 4 {
				cells[lineCell2048(4, a, 1, k)] = tt.line[k]
				want[lineCell2048(4, a, 1, k)] = tt.want[k]
			}
			merged, moved := slideTiles(cells, 4, a, false)
			if !slices.Equal(cells, want) || merged != tt.merged || moved != !slices.Equal(tt.line, tt.want) {
				t.Errorf("%s %v = %v merged %d moved %v; want %v merged %d", name, tt.line, cells, merged, moved, want, tt.merged)
			}
		}
	}
	// Hand-made boards, read as the rows appear.
	g := newTest2048(t, nil, 2, 0, 2, 4, 0, 0, 0, 0, 2, 0, 0, 0, 2, 2, 0, 0)
	slideTiles(g.cells, 4, 2, false) // Down
	if want := []int{0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 4, 2, 2, 4}; !slices.Equal(g.cells, want) {
		t.Errorf("Down = %v, want %v", g.cells, want)
	}
	slideTiles(g.cells, 4, 1, false) // Right
	if want := []int{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 4, 4, 4}; !slices.Equal(g.cells, want) {
		t.Errorf("Right = %v, want %v", g.cells, want)
	}
}

func TestSlideRanksMatchesTiles(t *testing.T) {
	// The expert slides log2 ranks; it must see the board the game makes.
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		n := 2 + rng.IntN(5)
		cells, ranks := make([]int, n*n), make([]int, n*n)
		for i := range cells {
			if r := rng.IntN(6); r > 0 {
				cells[i], ranks[i] = 1<<r, r
			}
		}
		a := rng.IntN(4)
		movable := canSlide2048(cells, n, a)
		_, moved := slideTiles(cells, n, a, false)
		_, rmoved := slideTiles(ranks, n, a, true)
		for i, v := range cells {
			if (v == 0 && ranks[i] != 0) || (v != 0 && bits.TrailingZeros(uint(v)) != ranks[i]) {
				t.Fatalf("n %d action %d: tiles %v, ranks %v", n, a, cells, ranks)
			}
		}
		if moved != rmoved || moved != movable {
			t.Fatalf("moved %v, ranks moved %v, canSlide %v", moved, rmoved, movable)
		}
	}
}

func TestGame2048Step(t *testing.T) {
	board := []int{2, 2, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 8}
	// Log reward: 0.1·log2(merged+1), pinned to Python's math.log2 values.
	g := newTest2048(t, nil, board...)
	g.rng.seed(7)
	obs, r, done, info := g.Step("left")
	if r != 0.23219280948873622 || done || info != (Info{ActionIsValid: true, ActionIsEffective: true}) {
		t.Errorf("Left merging 2+2: %v %v %+v; want 0.23219280948873622", r, done, info)
	}
	tiles, sum := 0, 0
	for _, v := range g.cells {
		if v != 0 {
			tiles++
			sum += v
		}
	}
	if g.cells[0] != 4 || g.cells[1] != 4 || g.cells[12] != 8 || tiles != 4 || (sum != 18 && sum != 20) || g.score != 4 {
		t.Errorf("after Left: %v score %d; want 4 4 in row 1, the 8, and one spawned 2 or 4", g.cells, g.score)
	}
	if !strings.Contains(obs, "Row 1: [4, 4, ") || !strings.Contains(obs, "Current Score: 4") {
		t.Errorf("observation:\n%s", obs)
	}
	if _, r, _, _ := g.Step("Left"); r != 0.31699250014423125 {
		t.Errorf("Left merging 4+4: reward %v, want 0.31699250014423125", r)
	}

	// A move that moves nothing: no spawn, reward 0 under the log reward,
	// neither valid nor effective (RAGEN's info).
	g = newTest2048(t, nil, 2, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	before := g.Render()
	if obs, r, done, info := g.Step("Left"); obs != before || r != 0 || done || info != (Info{}) {
		t.Errorf("Left against the wall: %v %v %+v, changed %v", r, done, info, obs != before)
	}
	// Without the log reward: the merged sum, and InvalidScore.
	raw := DefaultGame2048Config()
	raw.UseLogReward = false
	g = newTest2048(t, &raw, 2, 2, 4, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	if _, r, _, _ := g.Step("Left"); r != 12 {
		t.Errorf("raw Left: %v, want 12", r)
	}
	g = newTest2048(t, &raw, 2, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	if _, r, _, _ := g.Step("Up"); r != -0.1 {
		t.Errorf("raw Up against the wall: %v, want -0.1", r)
	}
	// Unknown names change nothing.
	for _, a := range []string{"", "Jump", "up || down", "0", strings.Repeat("L", 1<<16)} {
		g = newTest2048(t, nil, board...)
		if obs, r, done, info := g.Step(a); obs != g.Render() || r != 0 || done || info != (Info{}) || g.cells[15] != 8 || g.cells[3] != 0 {
			t.Errorf("Step(%.10q) = %v %v %+v", a, r, done, info)
		}
	}
}

func TestLog2IntMatchesPython(t *testing.T) {
	// Python's repr(math.log2(m + 1.0) * 0.1), RAGEN's log reward for a
	// merged sum m (glibc's log2, as NumPy's).
	for m, want := range map[int]string{
		4: "0.23219280948873622", 8: "0.31699250014423125", 12: "0.37004397181410925",
		16: "0.40874628412503394", 20: "0.4392317422778761", 24: "0.46438561897747244",
		32: "0.5044394119358454", 36: "0.520945336562895", 64: "0.6022367813028455",
		128: "0.7011227255423255", 2048: "1.1000704269011246", 4096: "1.20003521774803",
	} {
		if got := PyFloat(log2Int(m+1) * 0.1); got != want {
			t.Errorf("log reward of %d = %s, want %s", m, got, want)
		}
	}
	for m := 1; m < 1<<20; m = m*3 + 1 {
		if d := log2Int(m) - math.Log2(float64(m)); math.Abs(d) > 1e-15*math.Max(1, math.Log2(float64(m))) {
			t.Errorf("log2Int(%d) = %v, math.Log2 %v", m, log2Int(m), math.Log2(float64(m)))
		}
	}
}

func TestGame2048GameOver(t *testing.T) {
	// One move left: Left merges the 2s, and the tile spawned on the freed
	// corner matches no neighbour, so the board locks.
	lockable := []int{
		2, 2, 8, 16,
		32, 64, 128, 256,
		512, 1024, 32, 64,
		4, 8, 16, 4,
	}
	for seed := range int64(20) {
		g := newTest2048(t, nil, lockable...)
		g.rng.seed(seed)
		_, _, done, info := g.Step("Left")
		stuck := len(g.legal()) == 0
		if done != stuck || info.Success || g.over() != stuck {
			t.Fatalf("seed %d: board %v done %v over %v stuck %v", seed, g.cells, done, g.over(), stuck)
		}
		if stuck {
			if a, p := g.PolicyAction(); a != "" || p != 0 || g.PolicyPlan(3) != nil {
				t.Errorf("policy after the loss: %q %v", a, p)
			}
			if !strings.Contains(g.Render(), "Valid Actions: None.") {
				t.Errorf("render after the loss:\n%s", g.Render())
			}
		}
	}
	// Success is judged when the game ends: a 2048 on a locked board.
	won := []int{
		2048, 4, 8, 16,
		32, 64, 128, 256,
		512, 1024, 32, 64,
		4, 8, 16, 2,
	}
	g := newTest2048(t, nil, won...)
	if !g.over() || !g.success() {
		t.Error("a locked board with 2048 is not a success")
	}
	if _, _, done, info := g.Step("Up"); !done || !info.Success {
		t.Errorf("a step on the finished board: done %v success %v", done, info.Success)
	}
	if a, p := g.PolicyAction(); a != "" || p != 1 {
		t.Errorf("policy after the win: %q %v", a, p)
	}
	// RAGEN plays on past the target; StopAtTarget ends there.
	g = newTest2048(t, nil, 1024, 1024, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	if _, _, done, info := g.Step("Left"); done || info.Success {
		t.Errorf("RAGEN's rule ended the game at 2048: done %v success %v", done, info.Success)
	}
	stop := DefaultGame2048Config()
	stop.StopAtTarget, stop.Target = true, 16
	g = newTest2048(t, &stop, 8, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	if obs, _, done, info := g.Step("Left"); !done || !info.Success || !strings.Contains(obs, "reach 16.") {
		t.Errorf("StopAtTarget 16: done %v success %v\n%s", done, info.Success, obs)
	}
}

func TestGame2048Render(t *testing.T) {
	g := newTest2048(t, nil, 2, 0, 0, 0, 4, 0, 0, 0, 8, 0, 0, 0, 16, 0, 0, 2)
	want := `Current 2048 Grid:
Row 1: [2, 0, 0, 0]
Row 2: [4, 0, 0, 0]
Row 3: [8, 0, 0, 0]
Row 4: [16, 0, 0, 2]

Valid Actions: 0(Up), 1(Right), 3(Left).
Goal: Merge same numbers to reach 2048.
Current Score: 0
What is your next move?`
	if got := g.Render(); got != want {
		t.Errorf("render:\n%s\nwant\n%s", got, want)
	}
	spec, err := Lookup("game_2048")
	if err != nil {
		t.Fatal(err)
	}
	prefix, _ := Prefix("game_2048")
	wantPrefix := "You are playing the 2048 game on a 4x4 grid. Merge equal tiles by sliding Up, Right, Down, or Left.\n" +
		"If a move is invalid (no tiles move), a small penalty is applied. Respond with a single action.\n" +
		"Example: <answer>Up</answer>\n" +
		"\nYour available actions are:\nUp, Right, Down, Left\n" +
		"You can make up to 700 actions, separated by the action separator \" || \"\n"
	if spec.EnvType != "game_2048" || spec.MaxActionsPerTraj != 700 || spec.MaxTokens != 8192 || prefix != wantPrefix {
		t.Errorf("spec %+v\nprefix %q", spec, prefix)
	}
}

func TestGame2048Deterministic(t *testing.T) {
	a, b := mustNew(t, "game_2048"), mustNew(t, "game_2048")
	for seed := range int64(10) {
		mustReset(t, a, seed)
		mustReset(t, b, seed+100)
		if mustReset(t, b, seed) != a.Render() {
			t.Fatalf("seed %d: different first boards", seed)
		}
		for k := range 60 {
			act := game2048Actions[(k*7+int(seed))%4]
			oa, ra, da, _ := a.Step(act)
			ob, rb, db, _ := b.Step(act)
			if oa != ob || ra != rb || da != db {
				t.Fatalf("seed %d step %d: the games diverged", seed, k)
			}
		}
	}
}

func TestGame2048SpawnShares(t *testing.T) {
	g := mustNew(t, "game_2048").(*Game2048)
	twos, fours := 0, 0
	for seed := range int64(2000) {
		mustReset(t, g, seed)
		for _, v := range g.cells {
			switch v {
			case 2:
				twos++
			case 4:
				fours++
			}
		}
	}
	if share := float64(twos) / float64(twos+fours); twos+fours != 4000 || share < 0.88 || share > 0.92 {
		t.Errorf("%d twos and %d fours in 2000 first boards: share of twos %.3f, want 0.9", twos, fours, share)
	}
}

func TestGame2048Policy(t *testing.T) {
	g := newTest2048(t, nil, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	if a, p := g.PolicyAction(); a == "" || p != -1 || !slices.Equal(g.PolicyPlan(5), []string{a}) || g.PolicyPlan(0) != nil {
		t.Errorf("PolicyAction = %q %v, PolicyPlan(5) = %v", a, p, g.PolicyPlan(5))
	}
	// Only Down moves anything here.
	g = newTest2048(t, nil, 2, 4, 8, 16, 32, 64, 128, 256, 2, 4, 8, 16, 0, 0, 0, 0)
	if a, _ := g.PolicyAction(); a != "Down" {
		t.Errorf("only Down moves, expert says %q", a)
	}
	if testing.Short() {
		t.Skip("plays whole games")
	}
	// Whole games: every move the expert picks moves a tile, and it reaches
	// 512 (random play rarely passes 256).
	for seed := range int64(3) {
		e := mustNew(t, "game_2048").(*Game2048)
		mustReset(t, e, seed)
		moves := 0
		for !e.over() && moves < 5000 {
			a, _ := e.PolicyAction()
			if _, _, _, info := e.Step(a); !info.ActionIsEffective {
				t.Fatalf("seed %d move %d: the expert's %s moved nothing", seed, moves, a)
			}
			moves++
		}
		t.Logf("seed %d: max tile %d after %d moves", seed, e.maxTile(), moves)
		if e.maxTile() < 512 {
			t.Errorf("seed %d: the expert reached only %d in %d moves", seed, e.maxTile(), moves)
		}
	}
}

func TestGame2048ConfigRejects(t *testing.T) {
	for _, tt := range []struct {
		edit func(*Game2048Config)
		want string
	}{
		{func(c *Game2048Config) { c.Size = 1 }, "Size 1"},
		{func(c *Game2048Config) { c.Size = 9 }, "Size 9"},
		{func(c *Game2048Config) { c.TwoProb = 1.5 }, "TwoProb 1.5"},
		{func(c *Game2048Config) { c.Target = 1000 }, "Target 1000"},
		{func(c *Game2048Config) { c.Target = 2 }, "Target 2"},
	} {
		c := DefaultGame2048Config()
		tt.edit(&c)
		if _, err := NewGame2048(c); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("NewGame2048(%+v) error %v; want one naming %q", c, err, tt.want)
		}
	}
	g, _ := NewGame2048(DefaultGame2048Config())
	if obs, r, done, info := g.Step("Up"); obs != "" || r != 0 || done || info != (Info{}) {
		t.Errorf("Step before Reset = %q %v %v %+v", obs, r, done, info)
	}
	if a, _ := g.PolicyAction(); a != "" {
		t.Errorf("PolicyAction before Reset = %q", a)
	}
}

// FuzzGame2048Step checks that Step never panics, and that the tiles keep
// the game's invariants: powers of two, the sum grows by exactly the
// spawned 2 or 4 after a move that moved and not at all otherwise, and the
// score grows by the merged sum.
func FuzzGame2048Step(f *testing.F) {
	f.Add(int64(0), "Up|Left|Down|Right|up|LEFT|fly||")
	f.Add(int64(3), strings.Repeat("Left|Down|", 300))
	g := mustNew(f, "game_2048").(*Game2048)
	f.Fuzz(func(t *testing.T, seed int64, actions string) {
		mustReset(t, g, seed)
		sum := func() int {
			s := 0
			for _, v := range g.cells {
				if v < 0 || v == 1 || v&(v-1) != 0 {
					t.Fatalf("tile %d on %v", v, g.cells)
				}
				s += v
			}
			return s
		}
		for _, a := range strings.Split(actions, "|") {
			before, score := sum(), g.score
			_, _, _, info := g.Step(a)
			grew := sum() - before
			if info.ActionIsEffective && grew != 2 && grew != 4 || !info.ActionIsEffective && grew != 0 {
				t.Fatalf("Step(%q) effective %v changed the tile sum by %d", a, info.ActionIsEffective, grew)
			}
			if g.score < score {
				t.Fatalf("Step(%q) lowered the score", a)
			}
		}
	})
}
