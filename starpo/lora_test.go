package starpo

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sugarme/gotch"

	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/model/safetensors"
)

// newTinyLoRATrainer is newTinyTrainer's LoRA run, wired as NewRun wires
// one: rank-4 adapters on every projection of the actor, a critic with its
// own adapters over the actor's base, the reference as the base (KL loss
// on), optimisers over the models' State.
func newTinyLoRATrainer(t *testing.T, dir string, groups, size, turns int) *Trainer {
	t.Helper()
	tok, mgr, cfg := tinySetup(t, dir, groups, size, turns)
	cfg.Algorithm.UseKLLoss, cfg.Algorithm.KLLossCoef = true, 0.1
	cfg.Actor.LR, cfg.Critic.LR = 1e-2, 1e-2
	cfg.LoRA.Rank, cfg.LoRA.Alpha = 4, 8
	opt := model.Options{Device: gotch.CPU, DType: gotch.Float}
	actor, err := model.LoadCausalLM(dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(actor.Drop)
	if err := addActorAdapters(cfg, actor); err != nil {
		t.Fatal(err)
	}
	tr := &Trainer{Cfg: cfg, Actor: actor, Tok: tok}
	if tr.Ref, err = loadReference(cfg, actor, dir, opt); err != nil {
		t.Fatal(err)
	}
	if tr.Critic, err = loadCritic(cfg, actor, dir, opt); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tr.Critic.Drop) // before the actor's: Cleanup runs last-in first-out
	t.Cleanup(tr.Ref.Drop)
	if tr.ActorOpt, err = newOptimiser(actor.State(), actor.Cfg.NumHiddenLayers, cfg.Actor); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tr.ActorOpt.Drop)
	if tr.CriticOpt, err = newOptimiser(tr.Critic.State(), actor.Cfg.NumHiddenLayers, cfg.Critic); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tr.CriticOpt.Drop)
	tr.Envs = mgr
	return tr
}

func sameValues(t *testing.T, what string, a, b []model.Param) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: %d tensors, %d", what, len(a), len(b))
	}
	for i := range a {
		x, y := model.Float32s(a[i].T), model.Float32s(b[i].T)
		for j := range x {
			if x[j] != y[j] {
				t.Fatalf("%s: %s[%d]: %v, %v", what, a[i].Name, j, x[j], y[j])
			}
		}
	}
}

// A LoRA step trains the adapters and the critic's head and nothing else:
// the base weights the actor, critic and reference share are bit for bit
// the model file's, the optimisers hold the State alone, and a checkpoint
// keeps only it.
func TestLoRATrainerStep(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tiny")
	tr := newTinyLoRATrainer(t, dir, 2, 3, 2)
	base, err := model.LoadCausalLM(dir, model.Options{Device: gotch.CPU, DType: gotch.Float})
	if err != nil {
		t.Fatal(err)
	}
	defer base.Drop()
	aBefore := snapshot(tr.Actor.State())
	cBefore := snapshot(tr.Critic.State())
	met, err := tr.Step(0)
	if err != nil {
		t.Fatal(err)
	}
	if met["actor/step_skipped"] != 0 || met["critic/step_skipped"] != 0 || met["actor/grad_norm"] == 0 {
		t.Fatalf("metrics %v", met)
	}
	sameValues(t, "frozen base", base.Params(), tr.Actor.Params())
	for _, s := range []struct {
		name   string
		before [][]float32
		after  []model.Param
	}{{"actor", aBefore, tr.Actor.State()}, {"critic", cBefore, tr.Critic.State()}} {
		moved := 0
		for i, p := range s.after {
			v := model.Float32s(p.T)
			for j := range v {
				if v[j] != s.before[i][j] {
					moved++
					break
				}
			}
		}
		// Every B (and the critic's head) moves; the critic's A, whose
		// gradient is zero while B is, need not in one step.
		if moved < len(s.after)/2 {
			t.Errorf("%s: %d of %d adapter tensors moved", s.name, moved, len(s.after))
		}
	}
	if n, m := len(tr.ActorOpt.Params()), len(tr.Actor.State()); n != m || n != 14 {
		t.Fatalf("the actor's optimiser holds %d tensors, its State %d, want 14", n, m)
	}
	ck, err := tr.SaveCheckpoint(filepath.Join(t.TempDir(), "checkpoints"), 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		file string
		want int
	}{{"actor.safetensors", 14}, {"critic.safetensors", 16}} {
		st, err := safetensors.Open(filepath.Join(ck, f.file))
		if err != nil {
			t.Fatal(err)
		}
		names := st.Names()
		st.Close()
		if len(names) != f.want || strings.Contains(strings.Join(names, " "), "embed_tokens") {
			t.Fatalf("%s holds %v, want the %d adapter (and head) tensors", f.file, names, f.want)
		}
	}
}

func snapshot(ps []model.Param) [][]float32 {
	out := make([][]float32, len(ps))
	for i, p := range ps {
		out[i] = model.Float32s(p.T)
	}
	return out
}

// Resuming a LoRA run continues exactly (TestCheckpointResume's LoRA
// twin): step 1 after save and load gives bit-identical adapters and
// critic head to step 1 run straight on. A LoRA checkpoint is refused by a
// full fine-tune and the other way round, with a sentence.
func TestCheckpointResumeLoRA(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tiny")
	root := filepath.Join(t.TempDir(), "checkpoints")
	a := newTinyLoRATrainer(t, dir, 2, 2, 1)
	if _, err := a.Step(0); err != nil {
		t.Fatal(err)
	}
	ck, err := a.SaveCheckpoint(root, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Step(1); err != nil {
		t.Fatal(err)
	}
	b := newTinyLoRATrainer(t, dir, 2, 2, 1)
	if step, err := b.LoadCheckpoint(ck); err != nil || step != 1 {
		t.Fatalf("resumed at step %d, %v; want 1", step, err)
	}
	if _, err := b.Step(1); err != nil {
		t.Fatal(err)
	}
	sameValues(t, "actor adapters", a.Actor.State(), b.Actor.State())
	sameValues(t, "critic adapters and head", a.Critic.State(), b.Critic.State())

	full := newTinyTrainer(t, dir, 2, 2, 1)
	if _, err := full.LoadCheckpoint(ck); err == nil || !strings.Contains(err.Error(), "holds LoRA adapters, but "+
		"this run trains every weight (lora.rank 0)") {
		t.Fatalf("a full fine-tune loading a LoRA checkpoint: %v", err)
	}
	fullCk, err := full.SaveCheckpoint(root, 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.LoadCheckpoint(fullCk); err == nil || !strings.Contains(err.Error(), "holds every weight (a "+
		"full fine-tune), but this run trains LoRA adapters") {
		t.Fatalf("a LoRA run loading a full checkpoint: %v", err)
	}
}

// A LoRA step under the bf16 autocast (on the CPU, where the trainer
// otherwise refuses it) agrees with the fp32 step as the full fine-tune's
// does (autocastTol), and its masters, the adapters and the critic's head,
// stay fp32: the bf16 copies carry casts of the adapters whose gradients
// reach them.
func TestLoRAStepAutocast(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tiny")
	want, err := newTinyLoRATrainer(t, dir, 2, 3, 2).Step(0)
	if err != nil {
		t.Fatal(err)
	}
	tr := newTinyLoRATrainer(t, dir, 2, 3, 2)
	tr.Cfg.Algorithm.Autocast = AutocastBF16
	autocastOnCPU = true
	defer func() { autocastOnCPU = false }()
	before := snapshot(tr.Actor.State())
	got, err := tr.Step(0)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"actor/pg_loss", "actor/grad_norm", "critic/vf_loss", "critic/grad_norm"} {
		g, w := got[k], want[k]
		if rel := math.Abs(g-w) / math.Max(math.Abs(w), 1e-6); math.IsNaN(g) || rel > autocastTol || g == w {
			t.Errorf("%s: bf16 %.6g, fp32 %.6g (relative difference %.3g, tolerance %g, and not 0)", k, g, w, rel,
				autocastTol)
		}
	}
	for i, p := range append(tr.Actor.State(), tr.Critic.State()...) {
		if p.T.DType() != gotch.Float {
			t.Fatalf("master %s is %v", p.Name, p.T.DType())
		}
		if i < len(before) && strings.HasSuffix(p.Name, "lora_B.weight") && model.Float32s(p.T)[0] == before[i][0] {
			t.Fatalf("%s did not train under autocast", p.Name)
		}
	}
}
