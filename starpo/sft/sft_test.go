package sft

import (
	"math"
	"strings"
	"testing"

	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/starpo/config"
	"github.com/ragen-go/ragen/starpo/optim"
	"github.com/ragen-go/ragen/starpo/rollout"
	"github.com/ragen-go/ragen/tokenizer"
)

// expertDemos plays n demonstrations by the expert (noise, seed) on
// environments configured as rc.
func expertDemos(t *testing.T, rc rollout.Config, tok *tokenizer.Tokenizer, n int, noise float64,
	seed int64) ([]rollout.Trajectory, rollout.Metrics) {
	t.Helper()
	mgr, err := rollout.NewManager(rc, tok)
	if err != nil {
		t.Fatal(err)
	}
	demos, met, err := Demonstrations(mgr, tok, n, Imperfection{Noise: noise}, seed)
	if err != nil {
		t.Fatal(err)
	}
	return demos, met
}

// The noiseless expert picks the Bandit's better arm every time and plays
// SimpleSokoban with valid moves; its demonstrations are rendered like
// rollouts (think, answer, trained tokens); with noise 1 it picks arms at
// random.
func TestDemonstrations(t *testing.T) {
	_, tok, rc := tinyPolicy(t, 2, 1, 3)
	rc.Tags, rc.NGroups, rc.EnvGroups, rc.GroupSize = []string{"SimpleSokoban", "Bandit"}, []int{3, 3}, 6, 1
	demos, met := expertDemos(t, rc, tok, 10, 0, 500)
	if len(demos) != 10 || met["Bandit/success"] != 1 {
		t.Fatalf("%d demonstrations, metrics %v", len(demos), met)
	}
	for _, d := range demos {
		if d.Tag == "SimpleSokoban" && d.NumActions > 3*rc.MaxActionsPerTurn {
			t.Fatalf("sokoban demo took %d actions", d.NumActions)
		}
		trained := 0
		for _, m := range d.LossMask {
			trained += int(m)
		}
		answer := d.Messages[len(d.Messages)-1].Content
		if d.Penalty != 0 || trained == 0 || !strings.Contains(answer, "</think><answer>") {
			t.Fatalf("demo %s: penalty %v, %d trained tokens, last message %q", d.Tag, d.Penalty, trained, answer)
		}
	}
	noisy, nm := expertDemos(t, rc, tok, 60, 1, 900)
	if s := nm["Bandit/success"]; s < 0.2 || s > 0.8 || len(noisy) != 60 {
		t.Fatalf("noise 1 should pick the Bandit arm at random: success %v", s)
	}
}

// Imperfection.Invalid makes that share of turns answer the format's
// placeholder: no action is played, each such turn takes the format
// penalty, and the rendered answer is the placeholder itself, so SFT
// teaches it at that rate.
func TestDemonstrationsInvalidAnswers(t *testing.T) {
	_, tok, rc := tinyPolicy(t, 2, 1, 3)
	rc.Tags, rc.NGroups, rc.EnvGroups, rc.GroupSize = []string{"FrozenLake"}, []int{4}, 4, 1
	mgr, err := rollout.NewManager(rc, tok)
	if err != nil {
		t.Fatal(err)
	}
	all, met, err := Demonstrations(mgr, tok, 8, Imperfection{Invalid: 1}, 700)
	if err != nil {
		t.Fatal(err)
	}
	if met["FrozenLake/success"] != 0 {
		t.Fatalf("answering only the placeholder cannot succeed: %v", met)
	}
	for _, d := range all {
		turns := rc.MaxTurn
		if d.NumActions != 0 || math.Abs(d.Penalty-float64(turns)*rc.FormatPenalty) > 1e-9 {
			t.Fatalf("placeholder-only demo: %d actions, penalty %v (want 0 and %d × %v)", d.NumActions, d.Penalty,
				turns, rc.FormatPenalty)
		}
		if last := d.Messages[len(d.Messages)-1].Content; !strings.Contains(last,
			"<answer>"+PlaceholderAnswer+"</answer>") {
			t.Fatalf("the answer should be the placeholder, got %q", last)
		}
	}
	half, _, err := Demonstrations(mgr, tok, 40, Imperfection{Invalid: 0.5}, 900)
	if err != nil {
		t.Fatal(err)
	}
	bad, turns := 0.0, 0
	for _, d := range half {
		bad += d.Penalty / rc.FormatPenalty
		turns += len(d.TurnRewards)
	}
	if share := bad / float64(turns); share < 0.35 || share > 0.65 {
		t.Fatalf("Invalid 0.5: %.0f of %d turns answered the placeholder", bad, turns)
	}
}

// Supervised steps on a few demonstrations drive their loss down.
func TestSFTLearnsDemonstrations(t *testing.T) {
	actor, tok, rc := tinyPolicy(t, 2, 1, 1)
	rc.Tags, rc.NGroups, rc.EnvGroups, rc.GroupSize = []string{"Bandit"}, []int{2}, 2, 1
	demos, _ := expertDemos(t, rc, tok, 4, 0, 1)
	opt, err := optim.NewAdamW(actor.Params(), optim.DefaultOptions(1e-2))
	if err != nil {
		t.Fatal(err)
	}
	defer opt.Drop()
	var losses []float64
	steps, err := Train(actor, opt, demos, Options{Epochs: 15, Batch: 4, MicroBatch: 2, GradClip: 1, ChunkRows: 64},
		func(s Step) {
			losses = append(losses, s.Loss)
			if s.Skipped || s.Tokens == 0 {
				t.Fatalf("step %d: skipped %v, %d tokens", s.Step, s.Skipped, s.Tokens)
			}
		}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if steps != 15 || losses[len(losses)-1] > 0.75*losses[0] {
		t.Fatalf("%d steps, losses %v", steps, losses)
	}
	t.Logf("loss %.3f -> %.3f", losses[0], losses[len(losses)-1])
}

// A warm start of no demonstrations is refused before anything loads
// (ragen quickstart skips the warm start when sft.episodes is 0).
func TestRunNeedsEpisodes(t *testing.T) {
	cfg := config.Default()
	cfg.SFT.Episodes = 0
	_, err := Run(cfg, "/nonexistent", t.TempDir(), model.Options{}, nil)
	if err == nil || !strings.Contains(err.Error(), "sft.episodes 0") {
		t.Fatalf("got %v, want an error naming sft.episodes", err)
	}
}
