package rollout

import (
	"slices"
	"strings"
	"testing"
)

// A sampled id in the model's padding rows (past the tokenizer's vocabulary,
// as Qwen2.5's 151936-row embedding has for 151665 tokens) carries no text,
// does not stop the rollout, and is trained on where it was sampled.
func TestApplyIDPastTokenizerVocabulary(t *testing.T) {
	m := newTestManager(t, testConfig("SimpleSokoban", 1, 1), 10000)
	prompt := checkPrompt(t, m, 0)
	g := generation(t, m.tok, 0, 0, garbage)
	pad := m.tok.VocabSize() + 200
	g.IDs = slices.Insert(g.IDs, 2, pad)
	g.LogProbs = slices.Insert(g.LogProbs, 2, -9)
	if err := m.Apply(0, g); err != nil {
		t.Fatalf("an id past the tokenizer's vocabulary stopped the rollout: %v", err)
	}
	trajs, err := m.Trajectories()
	if err != nil {
		t.Fatal(err)
	}
	s := trajs[0].Sequence
	at := len(prompt) + 2
	if s.IDs[at] != pad || s.LossMask[at] != 1 || s.OldLogProbs[at] != -9 {
		t.Fatalf("position %d: id %d, mask %v, old log-prob %v; want the sampled %d, trained, -9", at, s.IDs[at],
			s.LossMask[at], s.OldLogProbs[at], pad)
	}

	m = newTestManager(t, testConfig("SimpleSokoban", 1, 1), 10000)
	g.IDs[2] = -1
	if err := m.Apply(0, g); err == nil || !strings.Contains(err.Error(), "negative token id -1") {
		t.Fatalf("negative id: err = %v", err)
	}
}
