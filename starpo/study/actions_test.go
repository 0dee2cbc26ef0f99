package study

import (
	"strconv"
	"testing"

	"github.com/ragen-go/ragen/envs"
)

// The actions-per-turn study (the paper's Table 3): arm kN answers with up
// to N actions and has 5N per episode, by redefining SimpleSokoban's budget
// through custom_envs; the warm start keeps the registered budget.
func TestActionsPerTurnStudy(t *testing.T) {
	t.Cleanup(func() { envs.Configure(nil) })
	s, err := LoadSpec("../../configs/study/actions-per-turn.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cells := s.Cells()
	if len(cells) != 7*s.Seeds {
		t.Fatalf("%d cells, want 7 arms × %d seeds", len(cells), s.Seeds)
	}
	for _, c := range cells {
		k, err := strconv.Atoi(c.Arm.Name[1:])
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := s.RunConfig(c, nil)
		if err != nil {
			t.Fatal(err)
		}
		spec, err := envs.Lookup("SimpleSokoban")
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Agent.MaxActionsPerTurn != k || cfg.Agent.MaxTurn != 5 || spec.MaxActionsPerTraj != 5*k ||
			*cfg.CustomEnvs["SimpleSokoban"].MaxActionsPerTraj != 5*k {
			t.Errorf("%v: %d actions per turn, %d turns, budget %d; want %d, 5, %d",
				c, cfg.Agent.MaxActionsPerTurn, cfg.Agent.MaxTurn, spec.MaxActionsPerTraj, k, 5*k)
		}
	}
	warm, err := s.WarmStartConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := warm.RegisterEnvs(); err != nil {
		t.Fatal(err)
	}
	if spec, _ := envs.Lookup("SimpleSokoban"); spec.MaxActionsPerTraj != 10 || warm.Agent.MaxActionsPerTurn != 5 {
		t.Errorf("warm start: budget %d, %d actions per turn; want 10, 5",
			spec.MaxActionsPerTraj, warm.Agent.MaxActionsPerTurn)
	}
}
