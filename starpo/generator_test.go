package starpo

import (
	"runtime"
	"testing"

	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/model/modeltest"
	"github.com/ragen-go/ragen/starpo/rollout"
	"github.com/ragen-go/ragen/tokenizer"
	"github.com/ragen-go/ragen/tokenizer/tokenizertest"
)

// A real multi-turn rollout: a tiny random Qwen2 with the real vocabulary
// plays SimpleSokoban through the env manager, the tokenizer and batched
// KV-cache generation. Its answers are noise, so this checks the plumbing:
// every trajectory's loss mask covers exactly its sampled ids, with their
// log-probabilities, and reruns with the same seed are identical.
func TestModelRollout(t *testing.T) {
	runtime.LockOSThread()
	tok, err := tokenizer.Load(tokenizertest.Path(t))
	if err != nil {
		t.Fatal(err)
	}
	m := modeltest.LoadTinyPolicy(t, tok.VocabSize(), 1)

	run := func() []rollout.Trajectory {
		rc := rollout.DefaultConfig()
		rc.EnvGroups, rc.GroupSize, rc.NGroups, rc.MaxTurn = 2, 2, []int{2}, 2
		mgr, err := rollout.NewManager(rc, tok)
		if err != nil {
			t.Fatal(err)
		}
		if err := mgr.Reset(rc.TrainSeed(0)); err != nil {
			t.Fatal(err)
		}
		gen, release := NewGenerator(m, tok, GenOptions{Sampling: model.Sampling{Temperature: 1, TopP: 1}, MaxTokens: 6,
			Seed: 5, Stop: []string{"</answer>"}})
		trajs, metrics, err := mgr.Run(gen)
		release()
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := metrics["SimpleSokoban/success"]; !ok {
			t.Fatalf("metrics lack SimpleSokoban/success: %v", metrics)
		}
		return trajs
	}
	trajs := run()
	if len(trajs) != 4 {
		t.Fatalf("%d trajectories, want 4", len(trajs))
	}
	for i, tr := range trajs {
		sampled := 0
		for j, on := range tr.LossMask {
			if on != 0 {
				sampled++
				if tr.OldLogProbs[j] > 0 {
					t.Fatalf("trajectory %d: positive log-prob %v at %d", i, tr.OldLogProbs[j], j)
				}
			}
		}
		if sampled == 0 || sampled != tr.ResponseTokens || sampled > 2*6 {
			t.Fatalf("trajectory %d: %d masked tokens, %d response tokens (2 turns × ≤6)", i, sampled,
				tr.ResponseTokens)
		}
		if tr.Penalty >= 0 {
			t.Errorf("trajectory %d: noise answers got no format penalty (%v)", i, tr.Penalty)
		}
	}
	again := run()
	for i := range trajs {
		if len(again[i].IDs) != len(trajs[i].IDs) {
			t.Fatalf("trajectory %d differs between runs with the same seed", i)
		}
		for j := range trajs[i].IDs {
			if again[i].IDs[j] != trajs[i].IDs[j] {
				t.Fatalf("trajectory %d differs at token %d between runs with the same seed", i, j)
			}
		}
	}
}
