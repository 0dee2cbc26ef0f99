package envs

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

// sudokuTestPuzzle has one solution, sudokuTestSolution; its cell (1,2)
// takes 2 or 4 at the start, so a valid wrong placement is possible.
const (
	sudokuTestPuzzle   = "1.3.3..2.1..4..1"
	sudokuTestSolution = "1234341221434321"
)

// newTestSudoku returns a 4×4 Sudoku (with_feedback render, 16 steps)
// loaded with a hand-made puzzle.
func newTestSudoku(t *testing.T, puzzle string) *Sudoku {
	t.Helper()
	cfg := DefaultSudokuConfig()
	cfg.Size, cfg.Clues, cfg.MaxSteps, cfg.RenderFormat = 4, 10, 16, SudokuRenderWithFeedback
	s, err := NewSudoku(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.loadPuzzle(puzzle); err != nil {
		t.Fatal(err)
	}
	return s
}

func sudokuDigits(cells []int8) string {
	var b strings.Builder
	for _, v := range cells {
		b.WriteByte('0' + byte(v))
	}
	return b.String()
}

func TestSudokuClues(t *testing.T) {
	for _, tt := range []struct {
		size       int
		difficulty string
		want       int
	}{
		{9, "easy", 49}, {9, "medium", 41}, {9, "hard", 33},
		{4, "easy", 10}, {4, "medium", 8}, {4, "hard", 7},
		{16, "easy", 154}, {16, "medium", 128},
	} {
		if got, err := SudokuClues(tt.size, tt.difficulty); err != nil || got != tt.want {
			t.Errorf("SudokuClues(%d, %s) = %d, %v; want %d", tt.size, tt.difficulty, got, err, tt.want)
		}
	}
	if _, err := SudokuClues(9, "expert"); err == nil || !strings.Contains(err.Error(), `"expert"`) {
		t.Errorf("SudokuClues(9, expert) error %v", err)
	}
}

func TestSudokuInstructionIsRAGENs(t *testing.T) {
	// config/envs.yaml, SimpleSudoku's env_instruction block.
	want := `You are solving a Sudoku puzzle. Fill in the grid so that every row, column, and 3x3 box contains the numbers 1-9 without repetition.
Initial cells are shown in [brackets] and cannot be modified. Empty cells are shown as dots (.).
Place numbers one at a time using the format: <answer>place 5 at row 2 col 3</answer> or <answer>2,3,5</answer>
The environment will provide feedback on valid/invalid moves and show conflicts if any occur.
`
	if got := sudokuInstruction(9); got != want {
		t.Errorf("sudokuInstruction(9) =\n%s\nwant\n%s", got, want)
	}
	if got := sudokuInstruction(4); !strings.Contains(got, "2x2 box contains the numbers 1-4") || !strings.Contains(got, "<answer>2,3,4</answer>") {
		t.Errorf("sudokuInstruction(4) = %s", got)
	}
	for tag, want := range map[string]int{"SimpleSudoku": 20, "MediumSudoku": 30, "Sudoku4x4": 10} {
		spec, err := Lookup(tag)
		if err != nil {
			t.Fatal(err)
		}
		if spec.EnvType != "sudoku" || spec.MaxActionsPerTraj != want || spec.MaxTokens != 150 || spec.PromptActions != nil {
			t.Errorf("%s spec %+v", tag, spec)
		}
		if p, _ := Prefix(tag); p != spec.Instruction {
			t.Errorf("%s prefix %q adds to the instruction (RAGEN lists no actions for free text)", tag, p)
		}
	}
}

func TestSudokuGenerationDeterministic(t *testing.T) {
	for _, tag := range []string{"Sudoku4x4", "SimpleSudoku", "MediumSudoku"} {
		a, b := mustNew(t, tag), mustNew(t, tag)
		seen := map[string]bool{}
		for seed := range int64(20) {
			oa, ob := mustReset(t, a, seed), mustReset(t, b, seed)
			if oa != ob {
				t.Fatalf("%s seed %d: two environments drew different puzzles", tag, seed)
			}
			mustReset(t, b, seed+1000)
			if again := mustReset(t, b, seed); again != oa {
				t.Fatalf("%s seed %d: a Reset after another seed drew a different puzzle", tag, seed)
			}
			seen[oa] = true
		}
		if len(seen) < 18 {
			t.Errorf("%s: only %d distinct puzzles in 20 seeds", tag, len(seen))
		}
	}
}

// naiveSudokuCount counts the completions of cells (up to limit) by plain
// row-major backtracking with a direct rule check: an independent
// reference for the bit-mask solver.
func naiveSudokuCount(cells []int8, n, limit int) int {
	box := sudokuBoxSize(n)
	ok := func(i int, v int8) bool {
		r, c := i/n, i%n
		for k := range n {
			if cells[r*n+k] == v || cells[k*n+c] == v {
				return false
			}
		}
		r0, c0 := r/box*box, c/box*box
		for rr := r0; rr < r0+box; rr++ {
			for cc := c0; cc < c0+box; cc++ {
				if cells[rr*n+cc] == v {
					return false
				}
			}
		}
		return true
	}
	var rec func(from int) int
	rec = func(from int) int {
		i := from
		for i < len(cells) && cells[i] != 0 {
			i++
		}
		if i == len(cells) {
			return 1
		}
		found := 0
		for v := int8(1); int(v) <= n && found < limit; v++ {
			if ok(i, v) {
				cells[i] = v
				found += rec(i + 1)
				cells[i] = 0
			}
		}
		return found
	}
	return rec(0)
}

// naiveSudokuFull reports a full grid where every row, column and box
// holds 1..n.
func naiveSudokuFull(cells []int8, n int) bool {
	box := sudokuBoxSize(n)
	for u := range n {
		var row, col, blk []int8
		for k := range n {
			row = append(row, cells[u*n+k])
			col = append(col, cells[k*n+u])
			blk = append(blk, cells[(u/box*box+k/box)*n+u%box*box+k%box])
		}
		for _, unit := range [][]int8{row, col, blk} {
			slices.Sort(unit)
			for k, v := range unit {
				if int(v) != k+1 {
					return false
				}
			}
		}
	}
	return true
}

func TestSudokuPuzzlesHaveOneSolution(t *testing.T) {
	seeds := map[string]int64{"Sudoku4x4": 1000, "SimpleSudoku": 200, "MediumSudoku": 100}
	hard := DefaultSudokuConfig()
	hard.Clues, _ = SudokuClues(9, "hard")
	hardEnv, err := NewSudoku(hard)
	if err != nil {
		t.Fatal(err)
	}
	envs := map[string]*Sudoku{"hard 9×9": hardEnv}
	for tag := range seeds {
		envs[tag] = mustNew(t, tag).(*Sudoku)
	}
	seeds["hard 9×9"] = 30
	for name, s := range envs {
		for seed := range seeds[name] {
			mustReset(t, s, seed)
			clues := len(s.initial) - strings.Count(sudokuDigits(s.initial), "0")
			if clues != s.cfg.Clues {
				t.Fatalf("%s seed %d: %d clues, want %d", name, seed, clues, s.cfg.Clues)
			}
			for i, v := range s.initial {
				if v != 0 && v != s.solution[i] {
					t.Fatalf("%s seed %d: given %d at cell %d, solution has %d", name, seed, v, i, s.solution[i])
				}
			}
			if !naiveSudokuFull(s.solution, s.n) {
				t.Fatalf("%s seed %d: the solution %v breaks a rule", name, seed, s.solution)
			}
			if k := naiveSudokuCount(slices.Clone(s.initial), s.n, 2); k != 1 {
				t.Fatalf("%s seed %d: %d solutions (2 means at least 2)\n%s", name, seed, k, s.Render())
			}
		}
	}
}

func TestSudokuParse(t *testing.T) {
	s := newTestSudoku(t, sudokuTestPuzzle)
	for _, tt := range []struct {
		action        string
		row, col, num int // 1-based
		msg           string
	}{
		{"place 3 at row 2 col 4", 2, 4, 3, ""},
		{"  PLACE 3 AT ROW 2 COL 4 \n", 2, 4, 3, ""},
		{"place 3 at (2,4)", 2, 4, 3, ""},
		{"place 3 at 2, 4", 2, 4, 3, ""},
		{"3 at 2,4", 2, 4, 3, ""},
		{"(2,4,3)", 2, 4, 3, ""},
		{"2,4,3", 2, 4, 3, ""},
		{"I think 2, 4, 3", 2, 4, 3, ""},
		{"place 03 at row 02 col 004", 2, 4, 3, ""},
		{"place 3\tat row\u00a02 col\u20034", 2, 4, 3, ""}, // Python's \s takes Unicode spaces
		// RAGEN reads number, row, column whenever "at" appears anywhere.
		{"2,4,3 at last", 4, 3, 2, ""},
		{"place 3 at row 2 column 4", 0, 0, 0, "Could not parse action: 'place 3 at row 2 column 4'. Expected format: 'place 5 at row 2 col 3' or '2,3,5'"},
		{"Up", 0, 0, 0, "Could not parse action: 'up'. Expected format: 'place 5 at row 2 col 3' or '2,3,5'"},
		{"", 0, 0, 0, "Could not parse action: ''. Expected format: 'place 5 at row 2 col 3' or '2,3,5'"},
		{"place ٣ at row 2 col 4", 0, 0, 0, "Could not parse action: 'place ٣ at row 2 col 4'. Expected format: 'place 5 at row 2 col 3' or '2,3,5'"},
		{"place 3 at row 0 col 1", 0, 0, 0, "Row 0 is out of range (1-4)"},
		{"place 3 at row 1 col 5", 0, 0, 0, "Column 5 is out of range (1-4)"},
		{"place 0 at row 5 col 5", 0, 0, 0, "Row 5 is out of range (1-4)"},
		{"place 0 at row 1 col 1", 0, 0, 0, "Number 0 is out of range (1-4)"},
		{"place 3 at row 099999999999999999999 col 1", 0, 0, 0, "Row 99999999999999999999 is out of range (1-4)"},
	} {
		r, c, v, msg := s.parse(tt.action)
		if msg != tt.msg || (msg == "" && (r+1 != tt.row || c+1 != tt.col || int(v) != tt.num)) {
			t.Errorf("parse(%q) = row %d col %d num %d %q; want %d %d %d %q", tt.action, r+1, c+1, v, msg, tt.row, tt.col, tt.num, tt.msg)
		}
	}
}

func TestSudokuStepRules(t *testing.T) {
	s := newTestSudoku(t, sudokuTestPuzzle)
	valid := Info{ActionIsValid: true, ActionIsEffective: true}
	for i, tt := range []struct {
		action   string
		reward   float64
		info     Info
		feedback string
	}{
		{"place 4 at row 1 col 2", 0.5, valid, "⚠ Placed 4 at (1,2) - Valid but not optimal"},
		{"place 4 at row 1 col 2", -0.1, Info{}, "❌ Invalid placement: 4 conflicts with row 1, column 2, box (1,1)"},
		{"1,2,2", 1, valid, "✓ Correct! Placed 2 at (1,2)"},
		{"place 2 at row 1 col 4", -0.1, Info{}, "❌ Invalid placement: 2 conflicts with row 1, column 4, box (1,2)\n   Valid numbers for (1,4): [4]"},
		{"place 1 at row 1 col 1", -0.1, Info{}, "❌ Cannot modify initial cell at (1,1)"},
		{"place 9 at row 1 col 4", -0.1, Info{}, "❌ Invalid action format: Number 9 is out of range (1-4)"},
		{"hello", -0.1, Info{}, "❌ Invalid action format: Could not parse action: 'hello'. Expected format: 'place 5 at row 2 col 3' or '2,3,5'"},
	} {
		before := sudokuDigits(s.grid)
		obs, reward, done, info := s.Step(tt.action)
		if reward != tt.reward || done || info != tt.info || s.feedback != tt.feedback || s.steps != i+1 {
			t.Fatalf("Step(%q) = %v %v %+v, feedback %q, steps %d; want %v false %+v %q %d",
				tt.action, reward, done, info, s.feedback, s.steps, tt.reward, tt.info, tt.feedback, i+1)
		}
		if !strings.Contains(obs, "\n\n"+tt.feedback+"\n\n") || !strings.HasSuffix(obs, "Steps: "+strconv.Itoa(i+1)+"/16") {
			t.Errorf("Step(%q) observation lacks its feedback or step count:\n%s", tt.action, obs)
		}
		if !tt.info.ActionIsValid && sudokuDigits(s.grid) != before {
			t.Errorf("refused Step(%q) changed the grid", tt.action)
		}
	}
	// The rest of the solution: 1 each, and the last one 1 + 10.
	plan, ok := s.Solve()
	if !ok || len(plan) != 8 {
		t.Fatalf("Solve = %v %v; want 8 placements", plan, ok)
	}
	for k, a := range plan {
		_, reward, done, info := s.Step(a)
		last := k == len(plan)-1
		want := 1.0
		if last {
			want = 11
		}
		if reward != want || done != last || info.Success != last || !info.ActionIsValid {
			t.Fatalf("Step(%q) = %v %v %+v; want %v, done and success %v", a, reward, done, info, want, last)
		}
	}
	if sudokuDigits(s.grid) != sudokuTestSolution || !strings.HasSuffix(s.feedback, "\n🎉 Congratulations! Puzzle solved!") {
		t.Errorf("grid %s feedback %q", sudokuDigits(s.grid), s.feedback)
	}
	if _, r, done, info := s.Step("place 4 at row 1 col 2"); r != -0.1 || done || info.ActionIsValid {
		t.Errorf("a placement on the solved grid: %v %v %+v", r, done, info)
	}
}

func TestSudokuMaxSteps(t *testing.T) {
	s := newTestSudoku(t, sudokuTestPuzzle)
	s.cfg.MaxSteps = 3
	// Refused actions never end the episode, even past MaxSteps (RAGEN).
	for range 4 {
		if _, _, done, _ := s.Step("nonsense"); done {
			t.Fatal("a refused action ended the episode")
		}
	}
	if _, r, done, info := s.Step("place 4 at row 1 col 4"); r != 1 || !done || info.Success {
		t.Errorf("valid placement past MaxSteps: %v done %v %+v; want 1, done, no success", r, done, info)
	}
}

func TestSudokuRender(t *testing.T) {
	s := newTestSudoku(t, sudokuTestPuzzle)
	s.Step("place 4 at row 1 col 2")
	s.Step("1,2,2")
	want := `==================================================
SUDOKU PUZZLE
==================================================
[1] 2 | [3] .
[3] . |  . [2]
-------------
 . [1]|  .  .
[4] . |  . [1]

Legend: [N]=initial cell, N=user-placed, *N*=conflict, .=empty

✓ Correct! Placed 2 at (1,2)

💡 VALID NUMBERS FOR EMPTY CELLS:
  - (1,4): [4]
  - (2,2): [4]
  - (2,3): [1, 4]
  - (3,1): [2]
  - (3,3): [2, 4]
  - (3,4): [3, 4]
  - (4,2): [3]
  - (4,3): [2]

Progress: 8/16 cells filled (7 initial, 1 placed)
Steps: 2/16`
	if got := s.Render(); got != want {
		t.Errorf("with_feedback:\n%s\nwant\n%s", got, want)
	}
	s.cfg.RenderFormat = SudokuRenderDetailed
	if got, head := s.Render(), want[:strings.Index(want, "\n\n💡")]; got != head {
		t.Errorf("detailed:\n%s\nwant\n%s", got, head)
	}
	s.cfg.RenderFormat = SudokuRenderSimple
	if got, want := s.Render(), "1 2 | 3 .\n3 . | . 2\n---------\n. 1 | . .\n4 . | . 1"; got != want {
		t.Errorf("simple:\n%s\nwant\n%s", got, want)
	}

	// A clash cannot be placed, but the render marks one if a grid holds it.
	s.cfg.RenderFormat = SudokuRenderWithFeedback
	s.grid[2*4+2] = 1
	got := s.Render()
	for _, part := range []string{"\n . [1]| *1* .\n", "\n\n⚠ CONFLICTS DETECTED:\n  - Cell (3,2): 1\n  - Cell (3,3): 1\n  - Cell (4,4): 1\n\n💡"} {
		if !strings.Contains(got, part) {
			t.Errorf("render with a clash lacks %q:\n%s", part, got)
		}
	}

	// The first observation of a generated 9×9: no feedback, and no valid
	// numbers while more than 10 cells are empty.
	e := mustNew(t, "SimpleSudoku")
	obs := mustReset(t, e, 0)
	lines := strings.Split(obs, "\n")
	if len(lines) != 19 || lines[1] != "SUDOKU PUZZLE" || lines[6] != strings.Repeat("-", 29) ||
		lines[15] != "Legend: [N]=initial cell, N=user-placed, *N*=conflict, .=empty" ||
		lines[17] != "Progress: 49/81 cells filled (49 initial, 0 placed)" || lines[18] != "Steps: 0/81" {
		t.Errorf("SimpleSudoku seed 0:\n%s", obs)
	}
}

func TestSudokuSolve(t *testing.T) {
	for _, tag := range []string{"Sudoku4x4", "SimpleSudoku", "MediumSudoku"} {
		e := mustNew(t, tag).(*Sudoku)
		e.cfg.MaxSteps = 1000 // the tags' budgets are RAGEN's, too short for 9×9
		for seed := range int64(15) {
			mustReset(t, e, seed)
			plan, ok := e.Solve()
			empty := strings.Count(sudokuDigits(e.initial), "0")
			if !ok || len(plan) != empty {
				t.Fatalf("%s seed %d: Solve = %d placements, %v; want %d", tag, seed, len(plan), ok, empty)
			}
			for k, a := range plan {
				_, r, done, info := e.Step(a)
				if last := k == len(plan)-1; r != 1+map[bool]float64{true: 10}[last] || done != last || info.Success != last {
					t.Fatalf("%s seed %d: Step(%q) = %v %v %+v", tag, seed, a, r, done, info)
				}
			}
			if plan, ok := e.Solve(); !ok || len(plan) != 0 {
				t.Errorf("%s seed %d: Solve on the solved grid = %v %v", tag, seed, plan, ok)
			}
		}
	}
	// The first placement is a forced cell: 4×4 seeds always have one.
	s := newTestSudoku(t, sudokuTestPuzzle)
	if plan, _ := s.Solve(); plan[0] != "place 4 at row 1 col 4" {
		t.Errorf("first placement %q, want the forced cell (1,4)", plan[0])
	}
	// A wrong placement is overwritten.
	s.Step("place 4 at row 1 col 2")
	plan, ok := s.Solve()
	if !ok || !slices.Contains(plan, "place 2 at row 1 col 2") || len(plan) != 9 {
		t.Errorf("Solve after a wrong placement = %v %v", plan, ok)
	}
}

func TestSudokuSolveBlocked(t *testing.T) {
	// Two wrong placements that each hold the number the other needs: no
	// placement of a solution number is allowed, and cells cannot be emptied.
	s := newTestSudoku(t, sudokuTestPuzzle)
	copy(s.solution, []int8{1, 2, 3, 4, 3, 4, 1, 2, 2, 1, 4, 3, 4, 3, 2, 1})
	copy(s.initial, s.solution)
	for _, i := range []int{0, 1, 8, 9} { // (1,1), (1,2), (3,1), (3,2)
		s.initial[i] = 0
	}
	s.start()
	for _, a := range []string{"place 2 at row 1 col 1", "place 1 at row 1 col 2"} {
		if _, r, _, _ := s.Step(a); r != 0.5 {
			t.Fatalf("Step(%q) reward %v, want 0.5", a, r)
		}
	}
	if plan, ok := s.Solve(); ok || plan != nil {
		t.Errorf("Solve = %v %v; want none", plan, ok)
	}
}

func TestSudokuConfigRejects(t *testing.T) {
	good := DefaultSudokuConfig()
	for _, tt := range []struct {
		edit func(*SudokuConfig)
		want string
	}{
		{func(c *SudokuConfig) { c.Size = 6 }, "Size 6"},
		{func(c *SudokuConfig) { c.Clues = 23 }, "Clues 23 must be in [24, 81]"},
		{func(c *SudokuConfig) { c.Clues = 82 }, "Clues 82"},
		{func(c *SudokuConfig) { c.Size, c.Clues = 4, 3 }, "Clues 3 must be in [4, 16]"},
		{func(c *SudokuConfig) { c.MaxSteps = 0 }, "MaxSteps 0"},
		{func(c *SudokuConfig) { c.RenderFormat = "fancy" }, `RenderFormat "fancy"`},
	} {
		c := good
		tt.edit(&c)
		if _, err := NewSudoku(c); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("NewSudoku(%+v) error %v; want one naming %q", c, err, tt.want)
		}
	}
	s, _ := NewSudoku(good)
	if obs, r, done, info := s.Step("1,1,1"); obs != "" || r != 0 || done || info != (Info{}) {
		t.Errorf("Step before Reset = %q %v %v %+v", obs, r, done, info)
	}
	if plan, ok := s.Solve(); ok || plan != nil {
		t.Errorf("Solve before Reset = %v %v", plan, ok)
	}
}

// FuzzSudokuStep checks that Step never panics and keeps the rules: givens
// stay, no clash is ever placed, rewards are the configured ones, and every
// call counts a step.
func FuzzSudokuStep(f *testing.F) {
	for _, a := range []string{"place 5 at row 2 col 3", "2,3,5", "(1,1,1)", "9 at 9,9", "place 99999999999999999999 at row 1 col 1", "\xff,\x00", "at,,"} {
		f.Add(int64(len(a)), false, a)
	}
	envs := [2]*Sudoku{mustNew(f, "Sudoku4x4").(*Sudoku), mustNew(f, "SimpleSudoku").(*Sudoku)}
	f.Fuzz(func(t *testing.T, seed int64, big bool, actions string) {
		s := envs[map[bool]int{true: 1}[big]]
		mustReset(t, s, seed%50)
		given := slices.Clone(s.initial)
		for k, a := range strings.Split(actions, "|") {
			_, r, _, info := s.Step(a)
			switch {
			case s.steps != k+1:
				t.Fatalf("Step(%q): %d steps counted, want %d", a, s.steps, k+1)
			case !info.ActionIsValid && r != s.cfg.InvalidScore,
				info.ActionIsValid && r != 1 && r != 0.5 && r != 11 && r != 10.5:
				t.Fatalf("Step(%q) = %v %+v", a, r, info)
			}
			for i, v := range given {
				if v != 0 && s.grid[i] != v {
					t.Fatalf("Step(%q) changed the given at %d", a, i)
				}
			}
			if slices.Contains(s.clashCells(), true) {
				t.Fatalf("Step(%q) placed a clash:\n%s", a, s.Render())
			}
		}
	})
}
