package sft

import (
	"strings"
	"testing"

	"github.com/ragen-go/ragen/starpo/config"
	"github.com/ragen-go/ragen/starpo/optim"
	"github.com/ragen-go/ragen/tokenizer"
	"github.com/ragen-go/ragen/tokenizer/tokenizertest"
)

// SFT on windowed demonstrations trains every turn in its window and
// drives the loss down.
func TestSFTWindowed(t *testing.T) {
	actor, tok, rc := tinyPolicy(t, 2, 1, 3)
	rc.MaxContextWindow = 1
	rc.GroupSize, rc.MaxActionsPerTurn = 1, 1
	demos, _ := expertDemos(t, rc, tok, 4, 0, 1)
	turns := 0
	for _, d := range demos {
		turns += len(d.PerTurn)
	}
	opt, err := optim.NewAdamW(actor.Params(), optim.DefaultOptions(1e-2))
	if err != nil {
		t.Fatal(err)
	}
	defer opt.Drop()
	var losses []float64
	_, err = Train(actor, opt, demos, Options{Epochs: 15, Batch: 4, MicroBatch: 4, GradClip: 1, ChunkRows: 64},
		func(s Step) {
			losses = append(losses, s.Loss)
			if s.Tokens == 0 || s.Skipped {
				t.Fatalf("step %d: %d tokens, skipped %v", s.Step, s.Tokens, s.Skipped)
			}
		}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if turns <= len(demos) || losses[len(losses)-1] > 0.75*losses[0] {
		t.Fatalf("%d turns in %d demonstrations; losses %v", turns, len(demos), losses)
	}
}

// The built-in model's vocabulary comes from demonstrations' text; with a
// window that text is in the per-turn rows, one board each.
func TestDomainTextsWindowed(t *testing.T) {
	base, err := tokenizer.Load(tokenizertest.Path(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, window := range []int{-1, 1} {
		cfg := config.Default()
		cfg.Train = config.Envs{Tags: []string{"SimpleSokoban"}, NGroups: []int{2}, EnvGroups: 2, GroupSize: 1}
		cfg.Agent.MaxTurn, cfg.Agent.MaxActionsPerTurn, cfg.Agent.MaxContextWindow = 3, 1, window
		texts, err := DomainTexts(cfg, base, 4)
		if err != nil {
			t.Fatal(err)
		}
		boards := 0
		for _, s := range texts {
			n := strings.Count(s, "State:")
			if window > 0 && n != 1 {
				t.Fatalf("window %d: a row shows %d boards:\n%s", window, n, s)
			}
			boards += n
		}
		if len(texts) < 4 || boards < len(texts) {
			t.Fatalf("window %d: %d texts with %d boards", window, len(texts), boards)
		}
	}
}
