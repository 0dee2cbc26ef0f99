package envs

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// sudokuInstruction is RAGEN's SimpleSudoku and MediumSudoku instruction
// (config/envs.yaml) for size 9, verbatim with the line breaks of its YAML
// block; other sizes get the same text with their box, range and example.
func sudokuInstruction(size int) string {
	box, example := sudokuBoxSize(size), min(5, size)
	return fmt.Sprintf("You are solving a Sudoku puzzle. Fill in the grid so that every row, column, and %dx%d box contains the numbers 1-%d without repetition.\n"+
		"Initial cells are shown in [brackets] and cannot be modified. Empty cells are shown as dots (.).\n"+
		"Place numbers one at a time using the format: <answer>place %d at row 2 col 3</answer> or <answer>2,3,%d</answer>\n"+
		"The environment will provide feedback on valid/invalid moves and show conflicts if any occur.\n",
		box, box, size, example, example)
}

// sudokuSpec is the Spec of a Sudoku tag as RAGEN writes SimpleSudoku:
// size×size at a RAGEN difficulty, the with_feedback render, one step per
// cell, 150 tokens, free-text actions (no action list in the prompt).
func sudokuSpec(size int, difficulty string, maxActions int) Spec {
	c := DefaultSudokuConfig()
	c.Size, c.MaxSteps, c.RenderFormat = size, size*size, SudokuRenderWithFeedback
	c.Clues, _ = SudokuClues(size, difficulty) // a bad name leaves 0 clues, which the factory refuses
	return Spec{
		EnvType: "sudoku", MaxActionsPerTraj: maxActions, MaxTokens: 150,
		Instruction: sudokuInstruction(size), Config: c,
	}
}

func newSudokuEnv(spec Spec) (Env, error) {
	cfg, ok := spec.Config.(SudokuConfig)
	if !ok {
		return nil, configTypeError(spec, "SudokuConfig")
	}
	e, err := NewSudoku(cfg)
	if err != nil {
		return nil, err
	}
	return e, nil
}

// RAGEN's render formats.
const (
	SudokuRenderSimple       = "simple"        // the grid alone
	SudokuRenderDetailed     = "detailed"      // a header, the grid with markers, the legend, the last feedback
	SudokuRenderWithFeedback = "with_feedback" // detailed, then conflicts, valid numbers, progress and steps
)

// SudokuConfig mirrors RAGEN's SudokuEnvConfig, with the number of clues in
// place of its difficulty name (SudokuClues converts).
type SudokuConfig struct {
	Size             int     // grid side, RAGEN's grid_size: 4, 9 or 16
	Clues            int     // givens the puzzle keeps: the difficulty knob
	MaxSteps         int     // a valid placement at or past this many steps (all actions count) ends the episode
	RenderFormat     string  // SudokuRenderSimple, SudokuRenderDetailed or SudokuRenderWithFeedback
	ShowConflicts    bool    // with_feedback lists the cells that clash
	ShowValidNumbers bool    // with_feedback lists each empty cell's valid numbers once at most 10 are empty
	CorrectScore     float64 // reward of a placement that matches the solution; a valid one that does not earns half
	InvalidScore     float64 // reward of an action that does not parse or breaks a rule
	CompletionBonus  float64 // added when the grid is solved
}

// sudokuRemoveShare is RAGEN's share of cells blanked per difficulty.
var sudokuRemoveShare = map[string]float64{"easy": 0.4, "medium": 0.5, "hard": 0.6}

// SudokuClues returns the clues RAGEN's difficulty leaves on a size×size
// grid: it blanks int(size²·share) cells, share 0.4 (easy), 0.5 (medium) or
// 0.6 (hard). 9×9: 49, 41, 33 clues; 4×4: 10, 8, 7.
func SudokuClues(size int, difficulty string) (int, error) {
	share, ok := sudokuRemoveShare[difficulty]
	if !ok {
		return 0, fmt.Errorf("sudoku: difficulty %q must be easy, medium or hard", difficulty)
	}
	cells := size * size
	return cells - int(float64(cells)*share), nil
}

// DefaultSudokuConfig returns RAGEN's dataclass defaults: 9×9, easy (49
// clues), 81 steps, the detailed render, rewards 1, −0.1 and 10.
func DefaultSudokuConfig() SudokuConfig {
	return SudokuConfig{
		Size: 9, Clues: 49, MaxSteps: 81, RenderFormat: SudokuRenderDetailed,
		ShowConflicts: true, ShowValidNumbers: true,
		CorrectScore: 1, InvalidScore: -0.1, CompletionBonus: 10,
	}
}

// sudokuMinClues are the fewest clues a puzzle may keep. Blanking cells in
// a random order until none more can go ends at 4–5 clues on 4×4 and
// 22–27 on 9×9 (measured over 200 seeds), so 4 and 24 come within a few
// grids; on 16×16 it ends near 100 but takes seconds below about 128, too
// slow for a Reset per episode (RAGEN's hard 16×16, 103 clues, is refused).
var sudokuMinClues = map[int]int{4: 4, 9: 24, 16: 128}

// Validate reports the first field that cannot make or show a puzzle.
func (c SudokuConfig) Validate() error {
	lo, ok := sudokuMinClues[c.Size]
	switch {
	case !ok:
		return fmt.Errorf("sudoku: Size %d must be 4, 9 or 16", c.Size)
	case c.Clues < lo || c.Clues > c.Size*c.Size:
		return fmt.Errorf("sudoku: Clues %d must be in [%d, %d] for Size %d", c.Clues, lo, c.Size*c.Size, c.Size)
	case c.MaxSteps < 1:
		return fmt.Errorf("sudoku: MaxSteps %d must be at least 1", c.MaxSteps)
	}
	switch c.RenderFormat {
	case SudokuRenderSimple, SudokuRenderDetailed, SudokuRenderWithFeedback:
		return nil
	}
	return fmt.Errorf("sudoku: RenderFormat %q must be simple, detailed or with_feedback", c.RenderFormat)
}

// Sudoku is RAGEN's Sudoku: fill a generated puzzle one number at a time,
// each placement checked against the row, column and box rules. Actions
// are free text ("place 5 at row 2 col 3", "2,3,5"); an action that does
// not parse or breaks a rule changes no cell but, as in RAGEN, costs
// InvalidScore, counts as a step and shows its feedback.
type Sudoku struct {
	cfg    SudokuConfig
	rng    seededRand
	board  *sudokuBoard // scratch for generation and the solved check
	n, box int

	initial, grid, solution []int8 // row-major, 0 empty
	steps                   int
	feedback                string // RAGEN's last_action_feedback
	ready                   bool
}

// NewSudoku builds a Sudoku environment; call Reset before Step.
func NewSudoku(cfg SudokuConfig) (*Sudoku, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	n := cfg.Size
	return &Sudoku{
		cfg: cfg, rng: newSeededRand(), board: newSudokuBoard(n), n: n, box: sudokuBoxSize(n),
		initial: make([]int8, n*n), grid: make([]int8, n*n), solution: make([]int8, n*n),
	}, nil
}

// Reset generates the puzzle for seed: a unique-solution grid keeping
// Clues givens.
func (s *Sudoku) Reset(seed int64) (string, error) {
	s.rng.seed(seed)
	s.ready = false
	if !generateSudoku(s.board, s.cfg.Clues, s.rng.Rand, s.initial, s.solution) {
		return "", fmt.Errorf("sudoku: no %d×%d puzzle with %d clues from seed %d in %d grids",
			s.n, s.n, s.cfg.Clues, seed, sudokuMaxAttempts)
	}
	s.start()
	return s.Render(), nil
}

// start begins an episode on the loaded initial grid.
func (s *Sudoku) start() {
	copy(s.grid, s.initial)
	s.steps, s.feedback, s.ready = 0, "", true
}

// Step places a number. A placement that matches the solution earns
// CorrectScore, a valid one that does not (possible only after an earlier
// such mistake made the puzzle ambiguous or unsolvable) half of it; solving
// adds CompletionBonus and ends the episode, as does a valid placement once
// MaxSteps actions were taken. Overwriting an earlier placement is allowed
// when the rules allow the new number, as in RAGEN.
func (s *Sudoku) Step(action string) (string, float64, bool, Info) {
	if !s.ready {
		return "", 0, false, Info{}
	}
	s.steps++
	row, col, num, msg := s.parse(action)
	if msg != "" {
		return s.refuse("❌ Invalid action format: " + msg)
	}
	i := row*s.n + col
	if s.initial[i] != 0 {
		return s.refuse(fmt.Sprintf("❌ Cannot modify initial cell at (%d,%d)", row+1, col+1))
	}
	if units := s.clashes(i, num); units != "" {
		fb := fmt.Sprintf("❌ Invalid placement: %d conflicts with %s", num, units)
		if valid := s.validNumbers(i); len(valid) > 0 {
			fb += fmt.Sprintf("\n   Valid numbers for (%d,%d): %s", row+1, col+1, pyIntList(valid))
		}
		return s.refuse(fb)
	}
	s.grid[i] = num
	reward := s.cfg.CorrectScore
	if num == s.solution[i] {
		s.feedback = fmt.Sprintf("✓ Correct! Placed %d at (%d,%d)", num, row+1, col+1)
	} else {
		s.feedback = fmt.Sprintf("⚠ Placed %d at (%d,%d) - Valid but not optimal", num, row+1, col+1)
		reward = s.cfg.CorrectScore * 0.5
	}
	solved := s.solved()
	if solved {
		s.feedback += "\n🎉 Congratulations! Puzzle solved!"
		reward += s.cfg.CompletionBonus
	}
	done := solved || s.steps >= s.cfg.MaxSteps
	return s.Render(), reward, done, Info{Success: solved, ActionIsValid: true, ActionIsEffective: true}
}

// refuse records the feedback of a rejected action. RAGEN never ends the
// episode here, even past max_steps.
func (s *Sudoku) refuse(feedback string) (string, float64, bool, Info) {
	s.feedback = feedback
	return s.Render(), s.cfg.InvalidScore, false, Info{}
}

// clashes names the units of cell i that already hold num, "row 2, column
// 3, box (1,1)", or "" when none does. The cell itself counts, as in RAGEN,
// so writing a cell's own number again clashes.
func (s *Sudoku) clashes(i int, num int8) string {
	r, c := i/s.n, i%s.n
	var units []string
	if slices.Contains(s.grid[r*s.n:(r+1)*s.n], num) {
		units = append(units, fmt.Sprintf("row %d", r+1))
	}
	for rr := range s.n {
		if s.grid[rr*s.n+c] == num {
			units = append(units, fmt.Sprintf("column %d", c+1))
			break
		}
	}
	if s.inBox(s.grid, r, c, num) {
		units = append(units, fmt.Sprintf("box (%d,%d)", r/s.box+1, c/s.box+1))
	}
	return strings.Join(units, ", ")
}

func (s *Sudoku) inBox(grid []int8, r, c int, num int8) bool {
	r0, c0 := r/s.box*s.box, c/s.box*s.box
	for rr := r0; rr < r0+s.box; rr++ {
		if slices.Contains(grid[rr*s.n+c0:rr*s.n+c0+s.box], num) {
			return true
		}
	}
	return false
}

// allowed reports whether num appears in none of cell i's units of grid.
func (s *Sudoku) allowed(grid []int8, i int, num int8) bool {
	r, c := i/s.n, i%s.n
	if slices.Contains(grid[r*s.n:(r+1)*s.n], num) || s.inBox(grid, r, c, num) {
		return false
	}
	for rr := range s.n {
		if grid[rr*s.n+c] == num {
			return false
		}
	}
	return true
}

// validNumbers lists, ascending, the numbers cell i could take: none when
// it is filled (RAGEN's get_valid_numbers).
func (s *Sudoku) validNumbers(i int) []int {
	if s.grid[i] != 0 {
		return nil
	}
	var out []int
	for v := 1; v <= s.n; v++ {
		if s.allowed(s.grid, i, int8(v)) {
			out = append(out, v)
		}
	}
	return out
}

// solved reports a full grid without clashes.
func (s *Sudoku) solved() bool {
	return !slices.Contains(s.grid, 0) && s.board.load(s.grid)
}

// sudokuSpace is Python's \s, which unlike Go's matches Unicode spaces.
const sudokuSpace = `[\t-\r\x1c-\x20\x{85}\p{Z}]`

// sudokuPatterns are RAGEN's action patterns, tried in order on the
// stripped, lower-cased action; the first that matches anywhere decides.
var sudokuPatterns = func() []*regexp.Regexp {
	var out []*regexp.Regexp
	for _, p := range []string{
		`place\s+(\d+)\s+at\s+row\s+(\d+)\s+col\s+(\d+)`,
		`place\s+(\d+)\s+at\s+\((\d+),\s*(\d+)\)`,
		`place\s+(\d+)\s+at\s+(\d+),\s*(\d+)`,
		`(\d+)\s+at\s+(\d+),\s*(\d+)`,
		`\((\d+),\s*(\d+),\s*(\d+)\)`,
		`(\d+),\s*(\d+),\s*(\d+)`,
	} {
		p = strings.ReplaceAll(p, `\d`, `[0-9]`)
		out = append(out, regexp.MustCompile(strings.ReplaceAll(p, `\s`, sudokuSpace)))
	}
	return out
}()

// parse reads an action as RAGEN's parse_action does, returning 0-based row
// and column and the number, or RAGEN's error message. As in RAGEN, the
// three numbers are number, row, column when the action contains "place" or
// "at" anywhere (so "2,3,5 that" places 2 at row 3, column 5), and row,
// column, number otherwise. Digits are ASCII only, where Python's \d also
// takes other scripts' digits.
func (s *Sudoku) parse(action string) (row, col int, num int8, msg string) {
	low := strings.ToLower(pyStrip(action))
	for _, re := range sudokuPatterns {
		m := re.FindStringSubmatch(low)
		if m == nil {
			continue
		}
		g := [3]string{m[1], m[2], m[3]}
		if !strings.Contains(low, "place") && !strings.Contains(low, "at") {
			g = [3]string{m[3], m[1], m[2]} // written row, column, number
		}
		v, vs := sudokuNumber(g[0])
		r, rs := sudokuNumber(g[1])
		c, cs := sudokuNumber(g[2])
		switch {
		case r < 1 || r > s.n:
			return 0, 0, 0, fmt.Sprintf("Row %s is out of range (1-%d)", rs, s.n)
		case c < 1 || c > s.n:
			return 0, 0, 0, fmt.Sprintf("Column %s is out of range (1-%d)", cs, s.n)
		case v < 1 || v > s.n:
			return 0, 0, 0, fmt.Sprintf("Number %s is out of range (1-%d)", vs, s.n)
		}
		return r - 1, c - 1, int8(v), ""
	}
	return 0, 0, 0, fmt.Sprintf("Could not parse action: '%s'. Expected format: 'place 5 at row 2 col 3' or '2,3,5'", low)
}

// sudokuNumber converts a run of digits as Python's int does, and returns
// it printed back (without leading zeros). Runs too long for an int come
// back as -1, out of every range, with their digits.
func sudokuNumber(digits string) (int, string) {
	t := strings.TrimLeft(digits, "0")
	if t == "" {
		t = "0"
	}
	if len(t) > 9 {
		return -1, t
	}
	v, _ := strconv.Atoi(t)
	return v, t
}

// Render draws the state in the configured format, as RAGEN's render.
func (s *Sudoku) Render() string {
	if !s.ready {
		return ""
	}
	if s.cfg.RenderFormat == SudokuRenderSimple {
		return s.plainGrid()
	}
	clash := s.clashCells()
	var b strings.Builder
	bar := strings.Repeat("=", 50)
	b.WriteString(bar + "\nSUDOKU PUZZLE\n" + bar + "\n")
	b.WriteString(s.markedGrid(clash))
	b.WriteString("\n\nLegend: [N]=initial cell, N=user-placed, *N*=conflict, .=empty")
	if s.feedback != "" {
		b.WriteString("\n\n" + s.feedback)
	}
	if s.cfg.RenderFormat == SudokuRenderDetailed {
		return b.String()
	}
	if s.cfg.ShowConflicts && slices.Contains(clash, true) {
		b.WriteString("\n\n⚠ CONFLICTS DETECTED:")
		for i, bad := range clash {
			if bad {
				fmt.Fprintf(&b, "\n  - Cell (%d,%d): %d", i/s.n+1, i%s.n+1, s.grid[i])
			}
		}
	}
	empty := 0
	for _, v := range s.grid {
		if v == 0 {
			empty++
		}
	}
	if s.cfg.ShowValidNumbers && empty > 0 && empty <= 10 {
		b.WriteString("\n\n💡 VALID NUMBERS FOR EMPTY CELLS:")
		for i, v := range s.grid {
			if valid := s.validNumbers(i); v == 0 && len(valid) > 0 {
				fmt.Fprintf(&b, "\n  - (%d,%d): %s", i/s.n+1, i%s.n+1, pyIntList(valid))
			}
		}
	}
	given := 0
	for _, v := range s.initial {
		if v != 0 {
			given++
		}
	}
	filled := len(s.grid) - empty
	fmt.Fprintf(&b, "\n\nProgress: %d/%d cells filled (%d initial, %d placed)\nSteps: %d/%d",
		filled, len(s.grid), given, filled-given, s.steps, s.cfg.MaxSteps)
	return b.String()
}

// clashCells marks every cell whose number appears again in its row,
// column or box (RAGEN's find_conflicts).
func (s *Sudoku) clashCells() []bool {
	out := make([]bool, len(s.grid))
	for i, v := range s.grid {
		if v == 0 {
			continue
		}
		s.grid[i] = 0
		out[i] = !s.allowed(s.grid, i, v)
		s.grid[i] = v
	}
	return out
}

// markedGrid is RAGEN's format_grid_with_conflicts: [N] for a given, *N*
// for a clash, N for a placement, . for empty, boxes split by | and dashes.
func (s *Sudoku) markedGrid(clash []bool) string {
	return s.drawGrid(3, func(i int) string {
		v := s.grid[i]
		switch {
		case v == 0:
			return " . "
		case s.initial[i] != 0:
			return "[" + strconv.Itoa(int(v)) + "]"
		case clash[i]:
			return "*" + strconv.Itoa(int(v)) + "*"
		}
		return " " + strconv.Itoa(int(v)) + " "
	})
}

// plainGrid is RAGEN's format_grid_simple: numbers and dots.
func (s *Sudoku) plainGrid() string {
	return s.drawGrid(2, func(i int) string {
		if s.grid[i] == 0 {
			return ". "
		}
		return strconv.Itoa(int(s.grid[i])) + " "
	})
}

// drawGrid lays cells out in rows, "| " before each box's first column, a
// rule of n·width+box−1 dashes between bands of boxes, trailing spaces cut.
func (s *Sudoku) drawGrid(width int, cell func(i int) string) string {
	var b strings.Builder
	for r := range s.n {
		if r > 0 {
			b.WriteByte('\n')
			if r%s.box == 0 {
				b.WriteString(strings.Repeat("-", s.n*width+s.box-1) + "\n")
			}
		}
		var line strings.Builder
		for c := range s.n {
			if c > 0 && c%s.box == 0 {
				line.WriteString("| ")
			}
			line.WriteString(cell(r*s.n + c))
		}
		b.WriteString(strings.TrimRight(line.String(), " "))
	}
	return b.String()
}

// Actions returns nil: placements are free text.
func (s *Sudoku) Actions() []string { return nil }

// Solve returns placements that complete the grid, "place 5 at row 2 col
// 3", in the order a person would make them: the cell with the fewest
// valid numbers first (a forced cell when there is one). Wrong earlier
// placements are overwritten with the solution's number. ok is false only
// when wrong placements block each other (each holds the number the other
// needs); no expert order exists then, since cells cannot be emptied.
func (s *Sudoku) Solve() ([]string, bool) {
	if !s.ready {
		return nil, false
	}
	grid := slices.Clone(s.grid)
	var plan []string
	for {
		best, bestN := -1, s.n+1
		for i, want := range s.solution {
			if grid[i] == want || !s.allowed(grid, i, want) {
				continue
			}
			have := grid[i]
			grid[i] = 0
			k := 0
			for v := 1; v <= s.n; v++ {
				if s.allowed(grid, i, int8(v)) {
					k++
				}
			}
			grid[i] = have
			if k < bestN {
				best, bestN = i, k
			}
		}
		if best < 0 {
			break
		}
		grid[best] = s.solution[best]
		plan = append(plan, sudokuPlace(s.solution[best], best/s.n, best%s.n))
	}
	if !slices.Equal(grid, s.solution) {
		return nil, false
	}
	return plan, true
}

// sudokuPlace writes a placement in the instruction's first format.
func sudokuPlace(num int8, row, col int) string {
	return fmt.Sprintf("place %d at row %d col %d", num, row+1, col+1)
}

// loadPuzzle replaces the puzzle with one written row-major, '.' or '0'
// for an empty cell, digits 1-9 for givens; it must have exactly one
// solution. It lets tests set up exact positions.
func (s *Sudoku) loadPuzzle(cells string) error {
	if len(cells) != s.n*s.n {
		return fmt.Errorf("sudoku: puzzle has %d cells, want %d", len(cells), s.n*s.n)
	}
	for i := range s.initial {
		switch ch := cells[i]; {
		case ch == '.' || ch == '0':
			s.initial[i] = 0
		case ch >= '1' && ch <= '9' && int(ch-'0') <= s.n:
			s.initial[i] = int8(ch - '0')
		default:
			return fmt.Errorf("sudoku: cell %d: %q is not a number of 1-%d or '.'", i, ch, s.n)
		}
	}
	if !s.board.load(s.initial) {
		return fmt.Errorf("sudoku: the givens clash")
	}
	budget := sudokuSearchBudget
	if k := s.board.count(2, &budget); k != 1 {
		return fmt.Errorf("sudoku: the puzzle has %d solutions (2 means at least 2), want 1", k)
	}
	b := s.board
	budget = sudokuSearchBudget
	b.fill(s.rng.Rand, &budget) // the one solution, whatever order it tries
	copy(s.solution, b.cells)
	s.start()
	return nil
}
