package sft

import (
	"math"
	"regexp"
	"testing"

	"github.com/ragen-go/ragen/starpo/optim"
)

// Each demonstrated turn has one decision, the first token of its first
// action name, and it is that turn's expert action; scoring gives a finite
// NLL that supervised steps on those very demonstrations bring down.
func TestDecisions(t *testing.T) {
	actor, tok, rc := tinyPolicy(t, 2, 1, 3)
	rc.Tags, rc.NGroups, rc.EnvGroups, rc.GroupSize, rc.MaxActionsPerTurn = []string{"SimpleSokoban",
		"Bandit"}, []int{2, 2}, 4, 1, 1
	demos, _ := expertDemos(t, rc, tok, 4, 0, 7)
	turns := 0
	for _, d := range demos {
		turns += len(d.TurnRewards)
	}
	dec, err := NewDecisions(demos, tok)
	if err != nil {
		t.Fatal(err)
	}
	if dec.N != turns {
		t.Fatalf("%d decisions in %d demonstrated turns", dec.N, turns)
	}
	for r := range dec.only {
		for j, on := range dec.only[r] {
			if on == 1 && dec.b.Resp[r][j] != 1 {
				t.Fatalf("row %d: decision at %d is not a trained position", r, j)
			}
		}
	}
	before, err := dec.Score(actor, 2)
	if err != nil {
		t.Fatal(err)
	}
	if before.N != turns || math.IsNaN(before.NLL) || before.P <= 0 || before.P >= 1 {
		t.Fatalf("before: %+v", before)
	}
	opt, err := optim.NewAdamW(actor.Params(), optim.DefaultOptions(1e-2))
	if err != nil {
		t.Fatal(err)
	}
	defer opt.Drop()
	if _, err := Train(actor, opt, demos, Options{Epochs: 15, Batch: 4, MicroBatch: 4, GradClip: 1, ChunkRows: 64}, nil,
		nil); err != nil {
		t.Fatal(err)
	}
	after, err := dec.Score(actor, 4)
	if err != nil {
		t.Fatal(err)
	}
	if after.NLL >= before.NLL || after.P <= before.P {
		t.Fatalf("decisions after SFT on them %+v, before %+v", after, before)
	}
	t.Logf("decision NLL %.3f -> %.3f, p %.4f -> %.3f", before.NLL, after.NLL, before.P, after.P)

	// Countdown names no actions: no decisions to score.
	rc.Tags, rc.NGroups, rc.EnvGroups = []string{"Countdown"}, []int{1}, 1
	cd, _ := expertDemos(t, rc, tok, 1, 0, 7)
	if _, err := NewDecisions(cd, tok); err == nil {
		t.Fatal("Countdown demonstrations gave decisions")
	}
}

// The repeat baseline is the share of demonstrated moves that repeat the
// episode's previous one (a uniform guess, 1/4, at an episode's first
// move), read here from the demonstrations' answers; it is the same whether
// the prompt holds the whole episode or each turn trains in its own window.
func TestDecisionsRepeatBaseline(t *testing.T) {
	_, tok, base := tinyPolicy(t, 2, 1, 3)
	answer := regexp.MustCompile(`<answer>\s*(\w+)`)
	for _, window := range []int{-1, 1} {
		rc := base
		rc.Tags, rc.NGroups, rc.EnvGroups, rc.GroupSize = []string{"FrozenLake"}, []int{4}, 4, 1
		rc.MaxTurn, rc.MaxActionsPerTurn, rc.MaxContextWindow = 6, 1, window
		demos, _ := expertDemos(t, rc, tok, 12, 0, 41)
		want, n := 0.0, 0
		for _, d := range demos {
			prev := ""
			for _, m := range d.Messages {
				if m.Role != "assistant" {
					continue
				}
				a := answer.FindStringSubmatch(m.Content)
				if a == nil {
					t.Fatalf("window %d: no action in %q", window, m.Content)
				}
				switch n++; prev {
				case "":
					want += 0.25
				case a[1]:
					want++
				}
				prev = a[1]
			}
		}
		dec, err := NewDecisions(demos, tok)
		if err != nil {
			t.Fatal(err)
		}
		if dec.N != n || math.Abs(dec.Repeat-want/float64(n)) > 1e-12 {
			t.Fatalf("window %d: %d decisions, repeat %v; the answers give %d and %v", window, dec.N, dec.Repeat, n,
				want/float64(n))
		}
		t.Logf("window %d: %d decisions, repeating scores p %.3f", window, n, dec.Repeat)
	}
}
