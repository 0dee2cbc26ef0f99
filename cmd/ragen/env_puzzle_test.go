package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/ragen-go/ragen/envs"
)

// Sudoku4x4 played from the terminal: placements in both of RAGEN's
// formats, several on one line, a refused one, then the expert's rest.
func TestEnvPlaySudoku(t *testing.T) {
	e, _ := envs.New("Sudoku4x4")
	if _, err := e.Reset(1); err != nil {
		t.Fatal(err)
	}
	sol, ok := e.(envs.Solver).Solve()
	if !ok || len(sol) < 3 {
		t.Fatalf("seed 1: solution %v %v", sol, ok)
	}
	var row, col, num int
	if _, err := fmt.Sscanf(sol[1], "place %d at row %d col %d", &num, &row, &col); err != nil {
		t.Fatal(err)
	}
	// The second placement typed as "row,col,num", beside the first.
	input := "place 9 at row 1 col 1\n" + sol[0] + " || " + fmt.Sprintf("%d,%d,%d", row, col, num) + "\n" +
		strings.Join(sol[2:], "\n") + "\n"
	out := runPlay(t, input, "--env", "Sudoku4x4", "--seed", "1", "--max-actions", "0")
	for _, want := range []string{
		"answer with free text on one line",
		"❌ Invalid action format: Number 9 is out of range (1-4)\n",
		"reward: -0.1  done: false", "✓ Correct! Placed", "reward: 1.0  done: false",
		"🎉 Congratulations! Puzzle solved!", "reward: 11.0  done: true  success: true", "episode over: success true",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("play output lacks %q:\n%s", want, out)
		}
	}
	if got := strings.Count(out, "\n> "); got != len(sol)+1 {
		t.Errorf("%d actions played, want %d:\n%s", got, len(sol)+1, out)
	}
}

// 2048 from the terminal: names ignore case, one turn may hold several
// moves, and a move into the wall is played (RAGEN calls it invalid).
func TestEnvPlay2048(t *testing.T) {
	out := runPlay(t, "up || LEFT\nfly\nright\n", "--env", "game_2048", "--seed", "0")
	for _, want := range []string{"Current 2048 Grid:\nRow 1: [", "Valid Actions: ", "> Up\n", "> Left\n", "> Right\n",
		"no valid action in \"fly\" (format penalty)", "input ended after 3 actions"} {
		if !strings.Contains(out, want) {
			t.Errorf("play output lacks %q:\n%s", want, out)
		}
	}
}

func TestEnvJSONPuzzles(t *testing.T) {
	for _, tt := range []struct {
		tag     string
		actions int // listed action names
		minSol  int // expert actions at least
	}{
		{"SimpleSudoku", 0, 32}, // 81 − 49 clues
		{"MediumSudoku", 0, 40},
		{"Sudoku4x4", 0, 6},
		{"game_2048", 4, 1},
	} {
		var out, errb bytes.Buffer
		if code := runMain([]string{"env", "--env", tt.tag, "--seed", "3", "--json"}, &out, &errb); code != 0 {
			t.Fatalf("%s: exit %d, stderr %s", tt.tag, code, errb.String())
		}
		var r map[string]any
		if err := json.Unmarshal(out.Bytes(), &r); err != nil {
			t.Fatalf("%s: %v in %s", tt.tag, err, out.String())
		}
		acts, _ := r["actions"].([]any)
		sol, _ := r["solution"].([]any)
		if len(acts) != tt.actions || len(sol) < tt.minSol {
			t.Errorf("%s: %d actions, %d solution steps; want %d and at least %d", tt.tag, len(acts), len(sol), tt.actions, tt.minSol)
		}
		// 2048's expert is a heuristic: no success probability is claimed.
		if _, ok := r["success_prob"]; ok {
			t.Errorf("%s: success_prob in %s", tt.tag, out.String())
		}
	}
}
