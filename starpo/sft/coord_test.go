package sft

import (
	"strings"
	"testing"
)

// The experts play RAGEN's coordinate tags as they play the grid ones: the
// Sokoban solver and the FrozenLake policy read the state, not the text.
// CoordSokoban draws SimpleSokoban's levels, so its demonstrations end as
// SimpleSokoban's do.
func TestDemonstrationsOnCoordTags(t *testing.T) {
	_, tok, rc := tinyPolicy(t, 2, 1, 5)
	rc.Tags, rc.NGroups, rc.EnvGroups, rc.GroupSize = []string{"CoordSokoban", "CoordFrozenLake"}, []int{4, 4}, 8, 1
	demos, met := expertDemos(t, rc, tok, 16, 0, 700)
	rc.Tags = []string{"SimpleSokoban", "FrozenLake"}
	_, grid := expertDemos(t, rc, tok, 16, 0, 700)
	if len(demos) != 16 || met["CoordSokoban/success"] != grid["SimpleSokoban/success"] ||
		met["CoordSokoban/num_actions"] != grid["SimpleSokoban/num_actions"] || met["CoordFrozenLake/success"] == 0 {
		t.Fatalf("%d demonstrations, metrics %v; on the grid tags %v", len(demos), met, grid)
	}
	for _, d := range demos {
		if !strings.Contains(d.Messages[1].Content, "Coordinates: \nBoard size: ") {
			t.Fatalf("demo %s's first user message lacks the coordinates:\n%s", d.Tag, d.Messages[1].Content)
		}
	}
}
