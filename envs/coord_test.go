package envs

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

// The expected texts below are written by hand from RAGEN's
// ragen/env/{sokoban,frozen_lake}/{env,utils}.py: _render_text's
// "Coordinates: \n" + format_coordinate_render(...) + "\n" + "Grid Map: \n"
// + the grid, with collect_entity_coordinates' lists in np.argwhere's
// row-major order and empty lists left out.

func TestSokobanCoordRender(t *testing.T) {
	level := []string{
		"######",
		"#√_X_#",
		"#_SO_#",
		"######",
	}
	tests := []struct {
		name    string
		format  string
		actions []string
		want    string
	}{
		{"grid_coord: box on target, player on target", ObsGridCoord, nil,
			"Coordinates: \n" +
				"Board size: 4 rows x 6 cols (zero-indexed).\n" +
				"Targets: (1, 1), (2, 2), (2, 3)\n" +
				"Boxes: (1, 3)\n" +
				"Boxes on target: (1, 1)\n" +
				"Player on target: (2, 2)\n" +
				"Grid Map: \n" +
				"######\n#√_X_#\n#_SO_#\n######"},
		{"grid_coord: player off the targets", ObsGridCoord, []string{"Up"},
			"Coordinates: \n" +
				"Board size: 4 rows x 6 cols (zero-indexed).\n" +
				"Targets: (1, 1), (2, 2), (2, 3)\n" +
				"Boxes: (1, 3)\n" +
				"Boxes on target: (1, 1)\n" +
				"Player: (1, 2)\n" +
				"Grid Map: \n" +
				"######\n#√PX_#\n#_OO_#\n######"},
		{"coord alone", ObsCoord, []string{"Up", "Right"},
			"Board size: 4 rows x 6 cols (zero-indexed).\n" +
				"Targets: (1, 1), (2, 2), (2, 3)\n" +
				"Boxes: (1, 4)\n" +
				"Boxes on target: (1, 1)\n" +
				"Player: (1, 3)"},
		{"grid", ObsGrid, []string{"Up", "Right"}, "######\n#√_PX#\n#_OO_#\n######"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultSokobanConfig()
			cfg.Observation = tt.format
			s, err := NewSokoban(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.loadText(level); err != nil {
				t.Fatal(err)
			}
			obs := s.Render()
			for _, a := range tt.actions {
				obs, _, _, _ = s.Step(a)
			}
			if obs != tt.want {
				t.Errorf("observation\n%q\nwant\n%q", obs, tt.want)
			}
		})
	}
}

// newCoordLake is loadLake's map with the coordinate observation, no slips.
func newCoordLake(t *testing.T, format string, rows ...string) *FrozenLake {
	t.Helper()
	f := loadLake(t, false, 0, rows...)
	f.cfg.Observation = format
	return f
}

func TestFrozenLakeCoordRender(t *testing.T) {
	rows := []string{"SFH", "FFF", "GFH"}
	tests := []struct {
		name    string
		format  string
		rows    []string
		actions []string
		want    string
	}{
		{"start", ObsGridCoord, rows, nil,
			"Coordinates: \n" +
				"Board size: 3 rows x 3 cols (zero-indexed).\n" +
				"Start: (0, 0)\n" +
				"Goal: (2, 0)\n" +
				"Player: (0, 0)\n" +
				"Holes: (0, 2), (2, 2)\n" +
				"Grid Map: \n" +
				"P_O\n___\nG_O"},
		{"player on the goal", ObsGridCoord, rows, []string{"Down", "Down"},
			"Coordinates: \n" +
				"Board size: 3 rows x 3 cols (zero-indexed).\n" +
				"Start: (0, 0)\n" +
				"Goal: (2, 0)\n" +
				"Player on goal: (2, 0)\n" +
				"Holes: (0, 2), (2, 2)\n" +
				"Grid Map: \n" +
				"__O\n___\n√_O"},
		{"player in a hole, coord alone", ObsCoord, rows, []string{"Right", "Right"},
			"Board size: 3 rows x 3 cols (zero-indexed).\n" +
				"Start: (0, 0)\n" +
				"Goal: (2, 0)\n" +
				"Player in hole: (0, 2)\n" +
				"Holes: (0, 2), (2, 2)"},
		{"no holes", ObsGridCoord, []string{"FS", "GF"}, []string{"Left"},
			"Coordinates: \n" +
				"Board size: 2 rows x 2 cols (zero-indexed).\n" +
				"Start: (0, 1)\n" +
				"Goal: (1, 0)\n" +
				"Player: (0, 0)\n" +
				"Grid Map: \n" +
				"P_\nG_"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newCoordLake(t, tt.format, tt.rows...)
			obs := f.Render()
			for _, a := range tt.actions {
				obs, _, _, _ = f.Step(a)
			}
			if obs != tt.want {
				t.Errorf("observation\n%q\nwant\n%q", obs, tt.want)
			}
		})
	}
}

func TestCoordTagSpecs(t *testing.T) {
	for _, tt := range []struct {
		tag, envType, instructionStart string
	}{
		{"CoordSokoban", "sokoban", "You are solving the Sokoban puzzle. You are the player and you need to push all boxes to targets.\n" +
			"You are provided with a symbol grid and the zero-indexed coordinates of the player, each box, and each target. \n"},
		{"CoordFrozenLake", "frozen_lake", "You are solving the FrozenLake puzzle. The observation includes both a symbol grid"},
	} {
		s, err := Lookup(tt.tag)
		if err != nil {
			t.Fatal(err)
		}
		if s.EnvType != tt.envType || s.MaxActionsPerTraj != 10 || s.MaxTokens != 120 ||
			!strings.HasPrefix(s.Instruction, tt.instructionStart) || !strings.HasSuffix(s.Instruction, "</answer>.\n") {
			t.Errorf("%s: spec %+v", tt.tag, s)
		}
		// RAGEN's prompt builder looks for observation_format at the entry's
		// top level, so the grid legend is listed after the instruction.
		p, _ := Prefix(tt.tag)
		if !strings.Contains(p, "</answer>.\n\nThe meaning of each symbol in the state is:\n") {
			t.Errorf("%s prefix %q", tt.tag, p)
		}
	}
	sok, _ := Lookup("CoordSokoban")
	if c := sok.Config.(SokobanConfig); c.DimX != 6 || c.DimY != 6 || c.NumBoxes != 1 || c.MaxSteps != 100 ||
		c.SearchDepth != 300 || c.Observation != ObsGridCoord {
		t.Errorf("CoordSokoban config %+v", c)
	}
	fl, _ := Lookup("CoordFrozenLake")
	if c := fl.Config.(FrozenLakeConfig); c.Size != 4 || c.P != 0.9 || !c.Slippery || c.SuccessRate != 0.8 ||
		c.Observation != ObsGridCoord || c.PolicyHorizon != 10 {
		t.Errorf("CoordFrozenLake config %+v", c)
	}
}

// gridPart is the grid of a grid_coord observation.
func gridPart(t *testing.T, obs string) string {
	t.Helper()
	_, grid, ok := strings.Cut(obs, "\nGrid Map: \n")
	if !ok || !strings.HasPrefix(obs, "Coordinates: \nBoard size: ") {
		t.Fatalf("not a grid_coord observation: %q", obs)
	}
	return grid
}

// CoordSokoban is SimpleSokoban drawn differently: the same level for a
// seed, the same solver, the same reading of a think.
func TestCoordSokobanPlaysLikeSimpleSokoban(t *testing.T) {
	coord := mustNew(t, "CoordSokoban").(*Sokoban)
	plain := mustNew(t, "SimpleSokoban").(*Sokoban)
	for seed := int64(0); seed < 30; seed++ {
		if got, want := gridPart(t, mustReset(t, coord, seed)), mustReset(t, plain, seed); got != want {
			t.Fatalf("seed %d: grid\n%s\nwant SimpleSokoban's\n%s", seed, got, want)
		}
		sol, ok := coord.Solve()
		if want, _ := plain.Solve(); !ok || !reflect.DeepEqual(sol, want) {
			t.Fatalf("seed %d: solution %v, SimpleSokoban's %v", seed, sol, want)
		}
		for i := 0; len(sol) > 0; i++ {
			plan := sol[:min(len(sol), 1+(int(seed)+i)%4)]
			checkGrounded(t, coord, plan)
			think := coord.GroundedThink(plan, i)
			if think != plain.GroundedThink(plan, i) || !reflect.DeepEqual(Reason(coord, think), Reason(plain, think)) {
				t.Fatalf("seed %d: think %q reads differently on the two", seed, think)
			}
			var obs string
			var info Info
			for _, a := range plan {
				obs, _, _, info = coord.Step(a)
				plain.Step(a)
			}
			if gridPart(t, obs) != plain.Render() {
				t.Fatalf("seed %d: after %v the grids differ", seed, plan)
			}
			sol = sol[len(plan):]
			if len(sol) == 0 && !info.Success {
				t.Fatalf("seed %d: the solution did not solve", seed)
			}
		}
	}
}

// CoordFrozenLake is a FrozenLake with RAGEN's current parameters drawn
// with coordinates: its twin in grid form has the same maps, policy and
// readings.
func TestCoordFrozenLakePlaysLikeItsGridTwin(t *testing.T) {
	spec, _ := Lookup("CoordFrozenLake")
	cfg := spec.Config.(FrozenLakeConfig)
	cfg.Observation = ObsGrid
	plain, err := NewFrozenLake(cfg)
	if err != nil {
		t.Fatal(err)
	}
	coord := mustNew(t, "CoordFrozenLake").(*FrozenLake)
	for seed := int64(0); seed < 50; seed++ {
		if got, want := gridPart(t, mustReset(t, coord, seed)), mustReset(t, plain, seed); got != want {
			t.Fatalf("seed %d: grid\n%s\nwant\n%s", seed, got, want)
		}
		for step := 0; step < 10 && !coord.terminal(); step++ {
			a, p := coord.PolicyAction()
			if pa, pp := plain.PolicyAction(); a != pa || p != pp {
				t.Fatalf("seed %d: policy %s %v, twin's %s %v", seed, a, p, pa, pp)
			}
			plan := coord.PolicyPlan(1 + int(seed)%3)
			checkGrounded(t, coord, plan)
			think := coord.GroundedThink(plan, step)
			if !reflect.DeepEqual(Reason(coord, think), Reason(plain, think)) {
				t.Fatalf("seed %d: think %q reads differently on the two", seed, think)
			}
			obs, _, _, _ := coord.Step(a)
			plain.Step(a)
			if gridPart(t, obs) != plain.Render() {
				t.Fatalf("seed %d: the twins parted after %s", seed, a)
			}
		}
	}
}

func TestFrozenLakeSuccessRate(t *testing.T) {
	// From the centre of an open 5×5 lake: Down lands below with the success
	// rate and on each side with half the rest.
	rows := []string{"FFFFF", "FFFFF", "FFSFF", "FFFFF", "FFFFG"}
	const n = 30000
	for _, sr := range []float64{0.8, 0.5, 1} {
		f := loadLake(t, true, 0, rows...)
		f.cfg.SuccessRate = sr
		f.rng.seed(11)
		counts := map[int]int{}
		for range n {
			f.pos = 12
			f.Step("Down")
			counts[f.pos]++
		}
		for cell, want := range map[int]float64{17: sr, 11: (1 - sr) / 2, 13: (1 - sr) / 2} {
			if share := float64(counts[cell]) / n; math.Abs(share-want) > 0.015 {
				t.Errorf("success rate %v: cell %d share %.4f, want %.3f ± 0.015", sr, cell, share, want)
			}
		}
	}
	// S G / F F: Right reaches G with the success rate; its slips stay (up,
	// off the edge) or go down.
	f := loadLake(t, true, 1, "SG", "FF")
	f.cfg.SuccessRate = 0.8
	if a, p := f.PolicyAction(); a != "Right" || math.Abs(p-0.8) > 1e-12 {
		t.Errorf("PolicyAction = %s, %v; want Right, 0.8", a, p)
	}
	// The policy's success chance is what playing it achieves.
	coord := mustNew(t, "CoordFrozenLake").(*FrozenLake)
	for _, seed := range []int64{0, 1} {
		mustReset(t, coord, seed)
		_, want := coord.PolicyAction()
		const episodes = 3000
		wins := 0
		for ep := range episodes {
			mustReset(t, coord, seed)
			coord.rng.seed(int64(ep) + 1e6)
			for range 10 {
				a, _ := coord.PolicyAction()
				if a == "" {
					break
				}
				coord.Step(a)
			}
			if coord.desc[coord.pos] == 'G' {
				wins++
			}
		}
		got := float64(wins) / episodes
		if sd := math.Sqrt(want * (1 - want) / episodes); math.Abs(got-want) > 4*sd+1e-3 {
			t.Errorf("seed %d: policy wins %.3f of episodes, predicts %.3f", seed, got, want)
		}
	}
}

func TestObservationAndSuccessRateChecked(t *testing.T) {
	lake := DefaultFrozenLakeConfig()
	for _, bad := range []func(*FrozenLakeConfig){
		func(c *FrozenLakeConfig) { c.SuccessRate = 0 },
		func(c *FrozenLakeConfig) { c.SuccessRate = 1.5 },
		func(c *FrozenLakeConfig) { c.SuccessRate = math.NaN() },
		func(c *FrozenLakeConfig) { c.Observation = "image" },
	} {
		c := lake
		bad(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("FrozenLakeConfig %+v accepted", c)
		}
	}
	sok := DefaultSokobanConfig()
	sok.Observation = "rgb_array"
	if err := sok.Validate(); err == nil || !strings.Contains(err.Error(), `Observation "rgb_array"`) {
		t.Errorf("Sokoban observation rgb_array: %v", err)
	}
}
