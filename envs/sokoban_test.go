package envs

import (
	"strings"
	"testing"
	"time"
)

// newTestSokoban returns a Sokoban loaded with a hand-drawn level.
func newTestSokoban(t *testing.T, rows ...string) *Sokoban {
	t.Helper()
	s, err := NewSokoban(DefaultSokobanConfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.loadText(rows); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSokobanStepRewards(t *testing.T) {
	tests := []struct {
		name      string
		level     []string
		actions   []string
		reward    float64 // of the last action
		shown     string  // PyFloat of it, as the prompt prints it
		done      bool
		success   bool
		effective bool
		after     string
	}{
		{
			name:    "plain move",
			level:   []string{"#####", "#P_O#", "#_X_#", "#####"},
			actions: []string{"Right"}, reward: -0.1, shown: "-0.1", effective: true,
			after: "#####\n#_PO#\n#_X_#\n#####",
		},
		{
			name:    "walk into wall",
			level:   []string{"#####", "#P_O#", "#_X_#", "#####"},
			actions: []string{"Up"}, reward: -0.1, shown: "-0.1",
			after: "#####\n#P_O#\n#_X_#\n#####",
		},
		{
			name:    "solve one box",
			level:   []string{"#####", "#PXO#", "#####"},
			actions: []string{"Right"}, reward: 10.9, shown: "10.9", done: true, success: true, effective: true,
			after: "#####\n#_P√#\n#####",
		},
		{
			name:    "one of two boxes on target",
			level:   []string{"######", "#PXO_#", "#_XO_#", "######"},
			actions: []string{"Right"}, reward: 0.9, shown: "0.9", effective: true,
			after: "######\n#_P√_#\n#_XO_#\n######",
		},
		{
			name:    "box pushed off target",
			level:   []string{"######", "#P√__#", "#_XO_#", "######"},
			actions: []string{"Right"}, reward: -1.1, shown: "-1.1", effective: true,
			after: "######\n#_SX_#\n#_XO_#\n######",
		},
		{
			name:    "box against wall does not move",
			level:   []string{"#####", "#_PX#", "#O__#", "#####"},
			actions: []string{"Right"}, reward: -0.1, shown: "-0.1",
			after: "#####\n#_PX#\n#O__#\n#####",
		},
		{
			name:    "box against box does not move",
			level:   []string{"######", "#PXX_#", "#OO__#", "######"},
			actions: []string{"Right"}, reward: -0.1, shown: "-0.1",
			after: "######\n#PXX_#\n#OO__#\n######",
		},
		{
			name:    "walking away does not pull",
			level:   []string{"######", "#_XP_#", "#O___#", "######"},
			actions: []string{"Right"}, reward: -0.1, shown: "-0.1", effective: true,
			after: "######\n#_X_P#\n#O___#\n######",
		},
		{
			name:    "player on target renders S",
			level:   []string{"######", "#PO__#", "#_X_O#", "######"},
			actions: []string{"Right"}, reward: -0.1, shown: "-0.1", effective: true,
			after: "######\n#_S__#\n#_X_O#\n######",
		},
		{
			name:    "names ignore case",
			level:   []string{"#####", "#PXO#", "#####"},
			actions: []string{"rIGHT"}, reward: 10.9, shown: "10.9", done: true, success: true, effective: true,
			after: "#####\n#_P√#\n#####",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestSokoban(t, tt.level...)
			var (
				obs    string
				reward float64
				done   bool
				info   Info
			)
			for _, a := range tt.actions {
				obs, reward, done, info = s.Step(a)
			}
			if reward != tt.reward || PyFloat(reward) != tt.shown {
				t.Errorf("reward = %v (%s), want %v (%s)", reward, PyFloat(reward), tt.reward, tt.shown)
			}
			if done != tt.done || info.Success != tt.success || info.ActionIsEffective != tt.effective || !info.ActionIsValid {
				t.Errorf("done %v info %+v, want done %v success %v effective %v valid", done, info, tt.done, tt.success, tt.effective)
			}
			if obs != tt.after || s.Render() != tt.after {
				t.Errorf("observation\n%s\nwant\n%s", obs, tt.after)
			}
		})
	}
}

func TestSokobanInvalidActionChangesNothing(t *testing.T) {
	level := []string{"#####", "#PXO#", "#####"}
	for _, a := range []string{"", "Jump", "up ", "Up || Down", "↑", strings.Repeat("x", 10000)} {
		s := newTestSokoban(t, level...)
		obs, reward, done, info := s.Step(a)
		if obs != "#####\n#PXO#\n#####" || reward != 0 || done || info.ActionIsValid || info.ActionIsEffective {
			t.Errorf("Step(%.20q) = %q, %v, %v, %+v; want the state unchanged and invalid", a, obs, reward, done, info)
		}
		if s.steps != 0 {
			t.Errorf("Step(%.20q) counted a step", a)
		}
	}
}

func TestSokobanMaxSteps(t *testing.T) {
	cfg := DefaultSokobanConfig()
	cfg.MaxSteps = 3
	s, err := NewSokoban(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.loadText([]string{"######", "#P___#", "#_XO_#", "######"}); err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{false, false, true} {
		if _, _, done, info := s.Step("Up"); done != want || info.Success {
			t.Fatalf("step %d: done %v success %v, want done %v", i+1, done, info.Success, want)
		}
	}
}

func TestSokobanSameSeedSameLevel(t *testing.T) {
	for _, tag := range []string{"SimpleSokoban", "LargerSokoban", "SokobanDifferentGridVocab"} {
		a, b := mustNew(t, tag), mustNew(t, tag)
		distinct := map[string]bool{}
		for seed := int64(0); seed < 100; seed++ {
			oa := mustReset(t, a, seed)
			ob := mustReset(t, b, seed)
			mustReset(t, a, seed+1000) // a reset in between must not leak state
			if oc := mustReset(t, a, seed); oa != ob || oa != oc {
				t.Fatalf("%s seed %d: levels differ:\n%s\n\n%s\n\n%s", tag, seed, oa, ob, oc)
			}
			distinct[oa] = true
		}
		if len(distinct) < 90 {
			t.Errorf("%s: only %d distinct levels in 100 seeds", tag, len(distinct))
		}
	}
}

func TestSokobanAlternativeSymbols(t *testing.T) {
	e := mustNew(t, "SokobanDifferentGridVocab")
	obs := mustReset(t, e, 1)
	if strings.ContainsAny(obs, "#_OX√PS") || !strings.Contains(obs, "A") || !strings.Contains(obs, "B") {
		t.Errorf("observation uses default symbols:\n%s", obs)
	}
	// The same seed draws the same room as SimpleSokoban (same size and boxes).
	plain := mustReset(t, mustNew(t, "SimpleSokoban"), 1)
	translate := strings.NewReplacer("#", "W", "_", ".", "O", "G", "√", "C", "X", "B", "P", "A", "S", "@")
	if translate.Replace(plain) != obs {
		t.Errorf("SokobanDifferentGridVocab seed 1:\n%s\nis not SimpleSokoban's\n%s\nredrawn", obs, plain)
	}
}

func TestSokobanSolverShortest(t *testing.T) {
	tests := []struct {
		name   string
		level  []string
		length int    // the optimum by hand; -1 when unsolvable
		exact  string // the unique optimal solution, when there is one
	}{
		{"already solved", []string{"####", "#P√#", "####"}, 0, ""},
		{"one push", []string{"#####", "#PXO#", "#####"}, 1, "Right"},
		{"walk around then push", []string{"######", "#____#", "#_XP_#", "#_O__#", "######"}, 3, "Up,Left,Down"},
		// Upper box first: 2 pushes, 3 steps round to the lower box, 2
		// pushes. Lower box first costs 8.
		{"two boxes", []string{"#######", "#PX_O_#", "#_X_O_#", "#######"}, 7, ""},
		{"box in a corner", []string{"#####", "#X__#", "#_PO#", "#####"}, -1, ""},
		{"boxes in a row", []string{"########", "#PXX_OO#", "########"}, -1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestSokoban(t, tt.level...)
			got, ok := s.Solve()
			if tt.length < 0 {
				if ok {
					t.Fatalf("Solve = %v, want no solution", got)
				}
				return
			}
			if !ok || len(got) != tt.length || (tt.exact != "" && strings.Join(got, ",") != tt.exact) {
				t.Fatalf("Solve = %v, %v; want %d moves %s", got, ok, tt.length, tt.exact)
			}
			replaySolution(t, s, got)
		})
	}
}

// replaySolution plays moves and checks that exactly the last one solves.
func replaySolution(t *testing.T, s *Sokoban, moves []string) {
	t.Helper()
	for i, m := range moves {
		_, _, done, info := s.Step(m)
		if last := i == len(moves)-1; done != last || info.Success != last {
			t.Fatalf("move %d of %v (%s): done %v success %v\n%s", i+1, moves, m, done, info.Success, s.Render())
		}
	}
}

func TestSokobanGeneratedLevelsAreSolvable(t *testing.T) {
	n := 1000
	if testing.Short() {
		n = 100
	}
	for _, tag := range []string{"SimpleSokoban", "LargerSokoban", "SokobanDifferentGridVocab"} {
		t.Run(tag, func(t *testing.T) {
			spec, _ := Lookup(tag)
			cfg := spec.Config.(SokobanConfig)
			e := mustNew(t, tag).(*Sokoban)
			for seed := int64(0); seed < int64(n); seed++ {
				mustReset(t, e, seed)
				checkLevelShape(t, e, cfg, seed)
				moves, ok := e.Solve()
				if !ok || len(moves) == 0 {
					t.Fatalf("seed %d: Solve = %v, %v\n%s", seed, moves, ok, e.Render())
				}
				// Reverse play explores at most SearchDepth-2 moves and the
				// player then wanders at most 3 steps, which bounds the optimum.
				if bound := cfg.SearchDepth - 2 + 3; len(moves) > bound {
					t.Fatalf("seed %d: shortest solution has %d moves, more than %d", seed, len(moves), bound)
				}
				total := 0.0
				for _, m := range moves {
					_, r, _, _ := e.Step(m)
					total += r
				}
				// Each move costs 0.1, the boxes land once more each than they
				// leave, and the last one earns 10.
				want := -0.1*float64(len(moves)) + float64(cfg.NumBoxes) + 10
				if diff := total - want; diff > 1e-9 || diff < -1e-9 || !e.solved() {
					t.Fatalf("seed %d: replaying %v gives total %v (want %v), solved %v", seed, moves, total, want, e.solved())
				}
			}
		})
	}
}

// checkLevelShape checks what every generated level must be: walls around,
// one player, NumBoxes boxes off NumBoxes targets.
func checkLevelShape(t *testing.T, s *Sokoban, cfg SokobanConfig, seed int64) {
	t.Helper()
	if s.rows != cfg.DimX || s.cols != cfg.DimY || len(s.state) != cfg.DimX*cfg.DimY {
		t.Fatalf("seed %d: level is %d×%d, want %d×%d", seed, s.rows, s.cols, cfg.DimX, cfg.DimY)
	}
	count := map[byte]int{}
	targets := 0
	for i, c := range s.state {
		count[c]++
		if s.fixed[i] == cellTarget {
			targets++
		}
		if r, col := i/s.cols, i%s.cols; (r == 0 || col == 0 || r == s.rows-1 || col == s.cols-1) && c != cellWall {
			t.Fatalf("seed %d: border cell %d is %d\n%s", seed, i, c, s.Render())
		}
	}
	if count[cellPlayer] != 1 || count[cellBox] != cfg.NumBoxes || count[cellBoxOnTarget] != 0 || targets != cfg.NumBoxes {
		t.Fatalf("seed %d: %d players, %d boxes, %d on target, %d targets\n%s",
			seed, count[cellPlayer], count[cellBox], count[cellBoxOnTarget], targets, s.Render())
	}
}

func TestSokobanGenerationIsFast(t *testing.T) {
	e := mustNew(t, "SimpleSokoban")
	const n = 200
	start := time.Now()
	for seed := range int64(n) {
		mustReset(t, e, seed)
	}
	if per := time.Since(start) / n; per > 5*time.Millisecond {
		t.Errorf("a 6×6 one-box level takes %v, want at most 5ms", per)
	}
}

func mustNew(t testing.TB, tag string) Env {
	t.Helper()
	e, err := New(tag)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func mustReset(t testing.TB, e Env, seed int64) string {
	t.Helper()
	obs, err := e.Reset(seed)
	if err != nil {
		t.Fatal(err)
	}
	return obs
}

func TestSokobanImpossibleConfigFails(t *testing.T) {
	cfg := DefaultSokobanConfig()
	cfg.DimX, cfg.DimY, cfg.NumBoxes = 3, 3, 1 // one interior cell: no room for a player and a box
	s, err := NewSokoban(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Reset(5); err == nil || !strings.Contains(err.Error(), "seed 5") {
		t.Errorf("Reset on a 3×3 room: error %v, want one naming the seed", err)
	}
	if obs, r, done, info := s.Step("Up"); obs != "" || r != 0 || done || info.ActionIsValid {
		t.Errorf("Step after a failed Reset = %q %v %v %+v", obs, r, done, info)
	}
	for _, bad := range []SokobanConfig{
		{DimX: 2, DimY: 6, NumBoxes: 1, MaxSteps: 1, SearchDepth: 1},
		{DimX: 6, DimY: 6, NumBoxes: 0, MaxSteps: 1, SearchDepth: 1},
		{DimX: 6, DimY: 6, NumBoxes: 8, MaxSteps: 1, SearchDepth: 1},
		{DimX: 200, DimY: 200, NumBoxes: 1, MaxSteps: 1, SearchDepth: 1},
		{DimX: 6, DimY: 6, NumBoxes: 1, MaxSteps: 0, SearchDepth: 1},
		{DimX: 6, DimY: 6, NumBoxes: 1, MaxSteps: 1, SearchDepth: 0},
		{DimX: 6, DimY: 6, NumBoxes: 1, MaxSteps: 1, SearchDepth: 1}, // empty GridLookup
	} {
		if _, err := NewSokoban(bad); err == nil {
			t.Errorf("NewSokoban(%+v) accepted", bad)
		}
	}
}
