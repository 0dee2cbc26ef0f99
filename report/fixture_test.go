package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The recorded run the tests render: 6 training steps, validation at steps
// 0, 3 and 6, an Echo-Trap warning at step 4, a truncated last metrics line,
// and two trajectory files (val step 0, train step 3) of two groups of two.
const (
	fixtureName   = "sokoban-fixture"
	fixtureConfig = "# effective config\nname: sokoban-fixture\nseed: 7\nsteps: 6\ntrain:\n  tags: [SimpleSokoban]\n  n_groups: [2]\n  env_groups: 2\n  group_size: 2\nactor:\n  lr: 1e-06\n"
	// grid is a Sokoban state drawn as RAGEN draws it.
	grid = "######\n#_P__#\n#_X__#\n#_O__#\n######"
	// winThink is the reasoning of the successful member of val group 1; it
	// tries to break out of the data script.
	winThink = "The box is below me </script><script>window.__errors.push('escaped')</script> so push Down twice."
)

// writeFixture records the run into a fresh folder and returns it.
func writeFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "config.yaml"), fixtureConfig)
	write(t, filepath.Join(dir, "run.json"), `{"model": "Qwen2.5-0.5B-Instruct", "device": "cuda:0", "dtype": "bf16"}`)
	var m strings.Builder
	val := func(step int, success float64) {
		fmt.Fprintf(&m, `{"step": %d, "val-env/SimpleSokoban/success": %g, "val-env/SimpleSokoban/pass@4": %g, "val-env/FrozenLake/success": %g, "val-env/SimpleSokoban/valid_episodes": 0.75, "val-env/SimpleSokoban/success_in_valid": %g, "timing_s/testing": 2.5}`+"\n",
			step, success, success+0.25, success/2, success/0.75)
	}
	val(0, 0.125)
	for s := 1; s <= 6; s++ {
		fmt.Fprintf(&m, `{"step": %d, "critic/score/mean": %g, "rollout/in_group_std": %g, "rollout/chosen_in_group_std": %g, "actor/entropy_loss": %g, "actor/grad_norm": %g, "actor/pg_clipfrac": 0.01, "actor/ppo_kl": 0.001, "actor/kl_loss": 0.002, "critic/vf_loss": 0.5, "train/response_length": %d, "timing_s/step": %d, "perf/gen_tokens_per_s": %d, "perf/train_tokens_per_s": 2000, "perf/max_memory_mb": %d, "note": "ignored text"`,
			s, float64(s)/10, 0.5/float64(s), 0.6/float64(s), 1.2-float64(s)/10, float64(s), 100*s, 40+s, 10+s, 1000+s)
		if s == 4 {
			m.WriteString(`, "warn/echo_trap": 1, "warn/entropy_collapse": 0`)
		}
		m.WriteString("}\n")
		if s%3 == 0 {
			val(s, 0.125*float64(s))
		}
	}
	m.WriteString(`{"step": 7, "critic/score/me`) // the run is still writing
	write(t, filepath.Join(dir, "metrics.jsonl"), m.String())
	writeTrajs(t, filepath.Join(dir, "trajectories", "val-step-000000.jsonl"), []Trajectory{
		traj(0, 0, 11, false, "I will go Left.", "Left || Left"),
		traj(1, 0, 11, false, "Maybe Up.", "Up"),
		traj(2, 1, 12, true, winThink, "Down || Down"),
		traj(3, 1, 12, false, "Lost.", ""),
	})
	writeTrajs(t, filepath.Join(dir, "trajectories", "train-step-000003.jsonl"), []Trajectory{
		traj(0, 0, 21, true, "Train step three, group zero.", "Right"),
		traj(1, 0, 21, false, "Train step three again.", "Left"),
		traj(2, 1, 22, true, "Train group one.", "Down"),
		traj(3, 1, 22, true, "Train group one, second member.", "Down || Up"),
	})
	return dir
}

// traj is a two-turn Sokoban trajectory; an empty answer makes the second
// response malformed.
func traj(env, group int, seed int64, success bool, think, answer string) Trajectory {
	first := "You are solving the Sokoban puzzle. Push all boxes onto targets.\nTurn 1:\nState:\n" + grid + "\nYou have 10 actions left.\n"
	second := "Reward:\n-0.1\n\nTurn 2:\nState:\n" + grid + "\nYou have 9 actions left.\n"
	resp2 := "<think>" + think + "</think><answer>" + answer + "</answer>"
	if answer == "" {
		resp2 = "I give up, no tags here"
	}
	score, rewards := -0.2, []float64{-0.1, -0.1}
	if success {
		score, rewards[1] = 10.8, 10.9
	}
	return Trajectory{EnvID: env, GroupID: group, Tag: "SimpleSokoban", Seed: seed,
		Messages: []Message{
			{"system", "You're a helpful assistant. "},
			{"user", first},
			{"assistant", "<think>First look.</think><answer>Up</answer>"},
			{"user", second},
			{"assistant", resp2},
		},
		TurnRewards: rewards, Penalty: -0.1 * boolTo(answer == ""), Score: score, Success: success, NumActions: 2}
}

func boolTo(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func writeTrajs(t *testing.T, path string, ts []Trajectory) {
	t.Helper()
	var b strings.Builder
	for _, tr := range ts {
		line, err := json.Marshal(tr)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	write(t, path, b.String())
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
