package starpo

import (
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/sugarme/gotch"

	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/model/modeltest"
	"github.com/ragen-go/ragen/starpo/config"
	"github.com/ragen-go/ragen/starpo/optim"
	"github.com/ragen-go/ragen/starpo/rollout"
	"github.com/ragen-go/ragen/tokenizer"
	"github.com/ragen-go/ragen/tokenizer/tokenizertest"
)

// tinySetup is what every tiny trainer shares: the real vocabulary, the
// tiny random policy in dir (written by the first call with that dir), a
// rollout manager of groups × size environments for turns turns, and a
// config with short responses and small micro-batches.
func tinySetup(t *testing.T, dir string, groups, size, turns int) (*tokenizer.Tokenizer, *rollout.Manager, config.Config) {
	t.Helper()
	runtime.LockOSThread()
	tok, err := tokenizer.Load(tokenizertest.Path(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "config.json")); err != nil {
		modeltest.TinyPolicy(t, dir, tok.VocabSize(), 2, "")
	}
	rc := rollout.DefaultConfig()
	rc.EnvGroups, rc.GroupSize, rc.NGroups, rc.MaxTurn = groups, size, []int{groups}, turns
	mgr, err := rollout.NewManager(rc, tok)
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Seed = 0 // the rollouts' sampling seed
	cfg.Rollout.ResponseLength = 6
	cfg.Algorithm.FilterRatio, cfg.Algorithm.MicroBatch, cfg.Algorithm.LMHeadChunk = 0.5, 2, 64
	return tok, mgr, cfg
}

// newTinyTrainer builds a StarPO-S trainer on a tiny random model with the
// real vocabulary (the checkpoint folder is shared by calls with one dir).
func newTinyTrainer(t *testing.T, dir string, groups, size, turns int) *Trainer {
	t.Helper()
	tok, mgr, cfg := tinySetup(t, dir, groups, size, turns)
	opt := model.Options{Device: gotch.CPU, DType: gotch.Float}
	actor, err := model.LoadCausalLM(dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(actor.Drop)
	critic, err := model.LoadValueModel(dir, opt, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(critic.Drop)
	for _, ps := range [][]model.Param{actor.Params(), critic.Params()} {
		if err := model.SetTrainable(ps, true); err != nil {
			t.Fatal(err)
		}
	}
	aopt, err := optim.NewAdamW(actor.Params(), optim.DefaultOptions(1e-3))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(aopt.Drop)
	copt, err := optim.NewAdamW(critic.Params(), optim.DefaultOptions(1e-3))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(copt.Drop)
	return &Trainer{Cfg: cfg, Actor: actor, Critic: critic, Tok: tok, Envs: mgr, ActorOpt: aopt, CriticOpt: copt}
}

// One StarPO-S step end to end on a tiny random model: rollout on
// SimpleSokoban, filter, critic values, GAE, critic and actor updates. The
// weights of both models change and stay finite, and the metrics carry
// RAGEN's names with finite values.
func TestTrainerStep(t *testing.T) {
	tr := newTinyTrainer(t, filepath.Join(t.TempDir(), "tiny"), 2, 3, 2)
	actor, critic := tr.Actor, tr.Critic
	before := model.Float32s(actor.Norm.Weight)
	cBefore := model.Float32s(critic.Score.Weight)
	met, err := tr.Step(0)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"actor/pg_loss", "actor/pg_clipfrac", "actor/entropy_loss", "actor/grad_norm",
		"critic/vf_loss", "critic/grad_norm", "rollout/in_group_std", "train/SimpleSokoban/success", "timing_s/step"} {
		v, ok := met[k]
		if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
			t.Errorf("metric %s = %v (present %v)", k, v, ok)
		}
	}
	if met["actor/step_skipped"] != 0 || met["critic/step_skipped"] != 0 {
		t.Fatalf("an optimiser step was skipped: %v", met)
	}
	changed := func(a, b []float32) bool {
		diff := false
		for i := range a {
			if math.IsNaN(float64(b[i])) || math.IsInf(float64(b[i]), 0) {
				t.Fatalf("weight %d is not finite after the step", i)
			}
			diff = diff || a[i] != b[i]
		}
		return diff
	}
	if !changed(before, model.Float32s(actor.Norm.Weight)) {
		t.Error("actor weights did not change")
	}
	if !changed(cBefore, model.Float32s(critic.Score.Weight)) {
		t.Error("critic head did not change")
	}
	t.Logf("pg_loss %.4g vf_loss %.4g entropy %.4g actor grad %.3g critic grad %.3g",
		met["actor/pg_loss"], met["critic/vf_loss"], met["actor/entropy_loss"],
		met["actor/grad_norm"], met["critic/grad_norm"])
}

// Resuming from a checkpoint continues exactly: step 1 after save+load
// gives bit-identical weights to step 1 run straight on.
func TestCheckpointResume(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tiny")
	root := filepath.Join(t.TempDir(), "checkpoints")
	a := newTinyTrainer(t, dir, 2, 2, 1)
	if _, err := a.Step(0); err != nil {
		t.Fatal(err)
	}
	if _, err := a.SaveCheckpoint(root, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Step(1); err != nil {
		t.Fatal(err)
	}

	b := newTinyTrainer(t, dir, 2, 2, 1)
	latest, err := LatestCheckpoint(root)
	if err != nil || filepath.Base(latest) != "step-000001" {
		t.Fatalf("latest checkpoint %q, %v", latest, err)
	}
	step, err := b.LoadCheckpoint(latest)
	if err != nil || step != 1 {
		t.Fatalf("resumed at step %d, %v; want 1", step, err)
	}
	if b.ActorOpt.Steps() != a.ActorOpt.Steps()-1 {
		t.Fatalf("optimiser steps %d after resume, want %d", b.ActorOpt.Steps(), a.ActorOpt.Steps()-1)
	}
	if _, err := b.Step(1); err != nil {
		t.Fatal(err)
	}
	pa, pb := a.Actor.Params(), b.Actor.Params()
	for i := range pa {
		x, y := model.Float32s(pa[i].T), model.Float32s(pb[i].T)
		for j := range x {
			if x[j] != y[j] {
				t.Fatalf("%s[%d]: %v straight on, %v after resume", pa[i].Name, j, x[j], y[j])
			}
		}
	}
	// A half-written checkpoint is never picked up.
	if err := os.MkdirAll(filepath.Join(root, "step-000002.partial"), 0o755); err != nil {
		t.Fatal(err)
	}
	if latest2, _ := LatestCheckpoint(root); latest2 != latest {
		t.Fatalf("latest became %s", latest2)
	}
}

// GRPO: no critic, mean_std normalisation per group, one actor update.
func TestTrainerStepGRPO(t *testing.T) {
	tr := newTinyTrainer(t, filepath.Join(t.TempDir(), "tiny"), 2, 3, 1)
	tr.Critic, tr.CriticOpt = nil, nil
	tr.Cfg.Algorithm.AdvEstimator, tr.Cfg.Algorithm.RewardNorm, tr.Cfg.Algorithm.FilterRatio = "grpo", "mean_std", 1
	met, err := tr.Step(0)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := met["critic/vf_loss"]; ok {
		t.Fatal("GRPO ran a critic update")
	}
	if v, ok := met["actor/pg_loss"]; !ok || math.IsNaN(v) {
		t.Fatalf("actor/pg_loss = %v, %v", v, ok)
	}
}

// A GRPO run (no critic) saves and resumes its checkpoints; a checkpoint
// is refused by a trainer that disagrees about having a critic, with a
// sentence saying so instead of a crash.
func TestCheckpointGRPO(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tiny")
	root := filepath.Join(t.TempDir(), "checkpoints")
	grpo := func() *Trainer {
		tr := newTinyTrainer(t, dir, 2, 2, 1)
		tr.Critic, tr.CriticOpt = nil, nil
		tr.Cfg.Algorithm.AdvEstimator, tr.Cfg.Algorithm.RewardNorm, tr.Cfg.Algorithm.FilterRatio = "grpo", "mean_std", 1
		return tr
	}
	a := grpo()
	if _, err := a.Step(0); err != nil {
		t.Fatal(err)
	}
	ck, err := a.SaveCheckpoint(root, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(ck, "critic.safetensors")); err == nil {
		t.Fatal("a GRPO checkpoint holds a critic")
	}
	b := grpo()
	if step, err := b.LoadCheckpoint(ck); err != nil || step != 1 {
		t.Fatalf("GRPO resume: step %d, %v", step, err)
	}
	x, y := model.Float32s(a.Actor.Norm.Weight), model.Float32s(b.Actor.Norm.Weight)
	for j := range x {
		if x[j] != y[j] {
			t.Fatalf("norm[%d]: saved %v, loaded %v", j, x[j], y[j])
		}
	}
	ppo := newTinyTrainer(t, dir, 2, 2, 1)
	if _, err := ppo.LoadCheckpoint(ck); err == nil || !strings.Contains(err.Error(), "has no critic") {
		t.Fatalf("a PPO trainer loading a GRPO checkpoint: %v", err)
	}
}
