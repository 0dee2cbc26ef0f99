package envs

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// loadLake returns a FrozenLake on a hand-drawn map (S, F, H, G rows).
func loadLake(t *testing.T, slippery bool, horizon int, rows ...string) *FrozenLake {
	t.Helper()
	f, err := NewFrozenLake(FrozenLakeConfig{Size: len(rows), P: 0.8, Slippery: slippery, SuccessRate: classicSuccessRate, PolicyHorizon: horizon})
	if err != nil {
		t.Fatal(err)
	}
	f.desc = []byte(strings.Join(rows, ""))
	f.pos = strings.IndexByte(string(f.desc), 'S')
	f.ready = true
	return f
}

func TestFrozenLakeMapsHaveAPath(t *testing.T) {
	f := mustNew(t, "FrozenLake").(*FrozenLake)
	distinct := map[string]bool{}
	for seed := int64(0); seed < 1000; seed++ {
		obs := mustReset(t, f, seed)
		distinct[obs] = true
		d := string(f.desc)
		if strings.Count(d, "S") != 1 || strings.Count(d, "G") != 1 || f.pos != strings.IndexByte(d, 'S') {
			t.Fatalf("seed %d: map %q, player at %d", seed, d, f.pos)
		}
		// An independent breadth-first search over non-hole cells.
		n := f.cfg.Size
		seen := map[[2]int]bool{{f.pos / n, f.pos % n}: true}
		queue := [][2]int{{f.pos / n, f.pos % n}}
		found := false
		for len(queue) > 0 && !found {
			c := queue[0]
			queue = queue[1:]
			for _, d := range [][2]int{{0, 1}, {1, 0}, {0, -1}, {-1, 0}} {
				r, col := c[0]+d[0], c[1]+d[1]
				if r < 0 || col < 0 || r >= n || col >= n || seen[[2]int{r, col}] || f.desc[r*n+col] == 'H' {
					continue
				}
				found = found || f.desc[r*n+col] == 'G'
				seen[[2]int{r, col}] = true
				queue = append(queue, [2]int{r, col})
			}
		}
		if !found {
			t.Fatalf("seed %d: no path from start to goal on\n%s", seed, obs)
		}
	}
	if len(distinct) < 900 {
		t.Errorf("only %d distinct maps in 1000 seeds", len(distinct))
	}
}

func TestFrozenLakeHoleShare(t *testing.T) {
	// p = 0.8 is the chance of ice, so about a fifth of the cells other than
	// start and goal are holes (a little less: maps without a path are redrawn).
	f := mustNew(t, "FrozenLake").(*FrozenLake)
	holes, cells := 0, 0
	for seed := int64(0); seed < 2000; seed++ {
		mustReset(t, f, seed)
		holes += strings.Count(string(f.desc), "H")
		cells += len(f.desc) - 2
	}
	if share := float64(holes) / float64(cells); share < 0.15 || share > 0.21 {
		t.Errorf("hole share %.3f, want about 0.2", share)
	}
}

func TestFrozenLakeSlipFrequencies(t *testing.T) {
	// From the centre of an open 5×5 lake each direction is visible.
	rows := []string{"FFFFF", "FFFFF", "FFSFF", "FFFFF", "FFFFG"}
	const n = 30000
	for _, tt := range []struct {
		action string
		want   map[int]string // landing cell (from the centre, 12) per direction
	}{
		{"Down", map[int]string{17: "intended", 11: "left", 13: "right"}},
		{"Left", map[int]string{11: "intended", 7: "up", 17: "down"}},
	} {
		f := loadLake(t, true, 0, rows...)
		f.rng.seed(7)
		counts := map[int]int{}
		for range n {
			f.pos = 12
			f.Step(tt.action)
			counts[f.pos]++
		}
		for cell, name := range tt.want {
			if share := float64(counts[cell]) / n; math.Abs(share-1.0/3) > 0.015 {
				t.Errorf("%s: %s share %.4f, want 1/3 ± 0.015 (counts %v)", tt.action, name, share, counts)
			}
		}
		if len(counts) != 3 {
			t.Errorf("%s: landed on %v, want exactly the three cells", tt.action, counts)
		}
	}
}

func TestFrozenLakeStep(t *testing.T) {
	rows := []string{"SFH", "FFF", "GFF"}
	tests := []struct {
		name     string
		actions  []string
		reward   float64
		done     bool
		success  bool
		effect   bool
		rendered string
	}{
		{"start renders as ice", nil, 0, false, false, false, "P_O\n___\nG__"},
		{"move", []string{"Down"}, 0, false, false, true, "__O\nP__\nG__"},
		{"edge keeps the player", []string{"Left"}, 0, false, false, false, "P_O\n___\nG__"},
		{"goal pays 1", []string{"Down", "Down"}, 1, true, true, true, "__O\n___\n√__"},
		{"hole ends with 0", []string{"Right", "Right"}, 0, true, false, true, "__X\n___\nG__"},
		{"after the goal nothing moves", []string{"Down", "Down", "Right"}, 0, true, true, false, "__O\n___\n√__"},
		{"names ignore case", []string{"dOWN"}, 0, false, false, true, "__O\nP__\nG__"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := loadLake(t, false, 0, rows...)
			var (
				reward float64
				done   bool
				info   Info
			)
			for _, a := range tt.actions {
				_, reward, done, info = f.Step(a)
				if !info.ActionIsValid {
					t.Fatalf("Step(%q) invalid", a)
				}
			}
			if len(tt.actions) > 0 && (reward != tt.reward || done != tt.done || info.Success != tt.success || info.ActionIsEffective != tt.effect) {
				t.Errorf("reward %v done %v info %+v; want %v %v success %v effective %v", reward, done, info, tt.reward, tt.done, tt.success, tt.effect)
			}
			if got := f.Render(); got != tt.rendered {
				t.Errorf("render\n%s\nwant\n%s", got, tt.rendered)
			}
		})
	}
}

func TestFrozenLakeUnknownAction(t *testing.T) {
	f := loadLake(t, true, 0, "SF", "FG")
	for _, a := range []string{"", "Jump", "Left || Up", "左", strings.Repeat("|", 100)} {
		obs, r, done, info := f.Step(a)
		if obs != "P_\n_G" || r != 0 || done || info.ActionIsValid || f.steps != 0 {
			t.Errorf("Step(%q) = %q %v %v %+v, want no change", a, obs, r, done, info)
		}
	}
}

func TestFrozenLakeSameSeedSameEpisode(t *testing.T) {
	a, b := mustNew(t, "FrozenLake"), mustNew(t, "FrozenLake")
	for seed := int64(0); seed < 50; seed++ {
		if oa, ob := mustReset(t, a, seed), mustReset(t, b, seed); oa != ob {
			t.Fatalf("seed %d: maps differ", seed)
		}
		for i := range 10 {
			act := frozenLakeActions[i%4]
			oa, ra, da, _ := a.Step(act)
			ob, rb, db, _ := b.Step(act)
			if oa != ob || ra != rb || da != db {
				t.Fatalf("seed %d step %d: slips differ", seed, i)
			}
		}
	}
}

func TestFrozenLakePolicyByHand(t *testing.T) {
	// S G / F F: Right, Up and Down each reach G with 1/3 in one step (the
	// intended or a perpendicular slip goes right); Left never does.
	tests := []struct {
		name     string
		slippery bool
		horizon  int
		rows     []string
		action   string
		prob     float64
	}{
		{"slippery, one step", true, 1, []string{"SG", "FF"}, "Down", 1.0 / 3},
		{"slippery, no limit, no holes", true, 0, []string{"SG", "FF"}, "", 1}, // every action wins eventually
		{"deterministic", false, 3, []string{"SFF", "HHF", "GFF"}, "Right", 0},
		{"deterministic, long enough", false, 6, []string{"SFF", "HHF", "GFF"}, "Right", 1},
		// Along a wall, Left from the left edge can only stay or slide up:
		// safe, unlike Up, which may slip right into the hole.
		{"slippery, hug the wall", true, 0, []string{"GH", "SF"}, "Left", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := loadLake(t, tt.slippery, tt.horizon, tt.rows...)
			a, p := f.PolicyAction()
			if math.Abs(p-tt.prob) > 1e-9 || (tt.prob > 0 && tt.action != "" && a != tt.action) {
				t.Errorf("PolicyAction = %s, %v; want %s, %v", a, p, tt.action, tt.prob)
			}
		})
	}
}

func TestFrozenLakePolicyMatchesPlay(t *testing.T) {
	// Following the policy from the start succeeds, within the 10-action
	// budget, about as often as the policy predicts.
	f := mustNew(t, "FrozenLake").(*FrozenLake)
	for _, seed := range []int64{0, 1, 2} {
		mustReset(t, f, seed)
		_, want := f.PolicyAction()
		const episodes = 4000
		wins := 0
		for ep := range episodes {
			mustReset(t, f, seed)
			f.rng.seed(int64(ep) + 1e6) // vary the slips, keep the map
			for range 10 {
				a, _ := f.PolicyAction()
				if a == "" {
					break
				}
				f.Step(a)
			}
			if f.desc[f.pos] == 'G' {
				wins++
			}
		}
		got := float64(wins) / episodes
		if sd := math.Sqrt(want * (1 - want) / episodes); math.Abs(got-want) > 4*sd+1e-3 {
			t.Errorf("seed %d: policy wins %.3f of episodes, predicts %.3f", seed, got, want)
		}
	}
}

func TestFrozenLakePolicyPlan(t *testing.T) {
	// Without slips the plan is the whole path: S F F / H H F / G F F needs
	// Right, Right, Down, Down, Left, Left; asked for more it stops at G.
	f := loadLake(t, false, 6, "SFF", "HHF", "GFF")
	want := []string{"Right", "Right", "Down", "Down", "Left", "Left"}
	if got := f.PolicyPlan(10); !slices.Equal(got, want) {
		t.Fatalf("PolicyPlan(10) = %v, want %v", got, want)
	}
	if got := f.PolicyPlan(2); !slices.Equal(got, want[:2]) {
		t.Fatalf("PolicyPlan(2) = %v, want %v", got, want[:2])
	}
	for _, a := range want {
		f.Step(a)
	}
	if got := f.PolicyPlan(3); len(got) != 0 {
		t.Fatalf("on the goal PolicyPlan = %v, want nothing", got)
	}
	// On the slippery lake its first action is PolicyAction's.
	g := mustNew(t, "FrozenLake").(*FrozenLake)
	for seed := int64(0); seed < 20; seed++ {
		mustReset(t, g, seed)
		a, _ := g.PolicyAction()
		if p := g.PolicyPlan(3); len(p) == 0 || len(p) > 3 || p[0] != a {
			t.Fatalf("seed %d: PolicyPlan(3) = %v, PolicyAction %s", seed, p, a)
		}
	}
}
