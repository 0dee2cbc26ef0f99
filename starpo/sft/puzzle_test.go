package sft

import (
	"strings"
	"testing"

	"github.com/ragen-go/ragen/starpo/rollout"
	"github.com/ragen-go/ragen/tokenizer"
	"github.com/ragen-go/ragen/tokenizer/tokenizertest"
)

// The experts play Sudoku (the solver's placements, free text, up to the
// turn's action limit) and 2048 (the expectimax policy, one move a turn)
// through the rollout manager as a model would. Sudoku4x4's 6 empty cells
// fit its 10-action budget, so every demonstration ends solved.
func TestDemonstrationsOnPuzzles(t *testing.T) {
	tok, err := tokenizer.Load(tokenizertest.Path(t))
	if err != nil {
		t.Fatal(err)
	}
	rc := rollout.DefaultConfig()
	rc.Tags, rc.NGroups, rc.EnvGroups, rc.GroupSize, rc.MaxTurn = []string{"Sudoku4x4", "game_2048"}, []int{4, 4}, 8, 1, 5
	demos, met := expertDemos(t, rc, tok, 8, 0, 11)
	if len(demos) != 8 || met["Sudoku4x4/success"] != 1 || met["game_2048/num_actions"] != float64(rc.MaxTurn) {
		t.Fatalf("%d demonstrations, metrics %v", len(demos), met)
	}
	for _, d := range demos {
		last := d.Messages[len(d.Messages)-1].Content
		if d.Tag == "Sudoku4x4" && !strings.Contains(last, "<answer>place ") {
			t.Errorf("Sudoku4x4 demonstration's last answer %q", last)
		}
	}
}
