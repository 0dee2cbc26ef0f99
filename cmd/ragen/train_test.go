package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sugarme/gotch"

	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/model/modeltest"
	"github.com/ragen-go/ragen/tokenizer"
	"github.com/ragen-go/ragen/tokenizer/tokenizertest"
)

// policyCheckpoint writes a tiny random Qwen2 with the real vocabulary and
// tokenizer files, in HuggingFace's layout.
func policyCheckpoint(t *testing.T) string {
	t.Helper()
	src := tokenizertest.Path(t)
	if st, err := os.Stat(src); err == nil && !st.IsDir() {
		src = filepath.Dir(src)
	}
	tok, err := tokenizer.Load(src)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "policy")
	modeltest.TinyPolicy(t, dir, tok.VocabSize(), 4, src)
	return dir
}

func runTrainCmd(args ...string) (int, string) {
	var out, errb strings.Builder
	code := runMain(append([]string{"train"}, args...), &out, &errb)
	return code, errb.String()
}

// The smoke preset end to end: metrics, trajectories, checkpoint, an export
// that loads back, and --resume continuing the step count.
func TestTrainSmoke(t *testing.T) {
	dir := policyCheckpoint(t)
	out := filepath.Join(t.TempDir(), "run")
	if code, errOut := runTrainCmd("--config", "../../configs/smoke.yaml", "--model", dir, "--out", out); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, f := range []string{"config.yaml", "metrics.jsonl", "checkpoints/latest", "checkpoints/step-000002/trainer.json", "trajectories/val-step-000000.jsonl", "trajectories/val-step-000002.jsonl", "trajectories/train-step-000001.jsonl", "trajectories/train-step-000002.jsonl", "run.json", "report.html", "export/config.json", "export/model.safetensors", "export/tokenizer.json"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("run folder lacks %s", f)
		}
	}
	lines := metricLines(t, out)
	if len(lines) != 4 { // val, step 1, step 2, val
		t.Fatalf("%d metrics lines, want 4:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	for _, want := range []string{`"val-env/Bandit/success"`, `"actor/pg_loss"`, `"critic/vf_loss"`, `"rollout/in_group_std"`, `"perf/train_tokens_per_s"`, `"perf/max_memory_mb"`, `"train/reward/format_penalty"`} {
		if !strings.Contains(strings.Join(lines, "\n"), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	m, err := model.LoadCausalLM(filepath.Join(out, "export"), model.Options{Device: gotch.CPU, DType: gotch.Float})
	if err != nil {
		t.Fatalf("the export does not load back: %v", err)
	}
	m.Drop()

	if code, errOut := runTrainCmd("--config", "../../configs/smoke.yaml", "--model", dir, "--out", out, "--resume", "--set", "steps=3"); code != 0 {
		t.Fatalf("resume: exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(out, "checkpoints/step-000003/trainer.json")); err != nil {
		t.Fatal("resume did not reach step 3")
	}
	if n := len(metricLines(t, out)); n != 6 { // + step 3, val
		t.Fatalf("%d metrics lines after resuming for one step, want 6", n)
	}

	// A trainer.json that does not give its folder's step is refused, not
	// resumed at step 0 on step 3's weights (even past the manifest, which
	// it no longer matches).
	state := filepath.Join(out, "checkpoints/step-000003/trainer.json")
	if err := os.WriteFile(state, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, errOut := runTrainCmd("--config", "../../configs/smoke.yaml", "--model", dir, "--out", out, "--resume", "--set", "steps=4", "--skip-verify")
	if want := state + `: the step key is missing; it must hold {"step": N}`; code == 0 || !strings.Contains(errOut, want) {
		t.Fatalf("resume from a trainer.json without its step: exit %d, %q; want an error containing %q", code, errOut, want)
	}
}

func metricLines(t *testing.T, run string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(run, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines
}

// Bad input is refused before any work starts.
func TestTrainBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--config", "../../configs/smoke.yaml"}, "--model is required"},
		{[]string{"--config", "../../configs/smoke.yaml", "--model", filepath.Join(dir, "nope")}, "nope: no such folder or file"},
		{[]string{"--config", "../../configs/smoke.yaml", "--model", dir}, "not a checkpoint folder (no config.json)"},
		{[]string{"--config", "../../configs/smoke.yaml", "--model", "../../go.mod"}, "a file must be a GGUF model"},
		{[]string{"--config", "../../configs/nope.yaml", "--model", dir}, "nope.yaml"},
		{[]string{"--config", "../../configs/smoke.yaml", "--set", "algorithm.fliter_ratio=1", "--model", dir}, "fliter_ratio"},
		{[]string{"--config", "../../configs/smoke.yaml", "--set", "train.tags=[Chess]", "--model", dir}, `unknown environment tag "Chess"`},
		{[]string{"--config", "../../configs/smoke.yaml", "--set", "agent.max_context_window=-2", "--model", dir}, "agent.max_context_window -2 must be -1"},
		{[]string{"--config", "../../configs/smoke.yaml", "--model", dir, "--check-every", "-1"}, "--check-every -1 is negative"},
		// --set values are held to their keys' types, and their errors name the argument.
		{[]string{"--config", "../../configs/smoke.yaml", "--set", "steps=7.9", "--model", dir}, "ragen train: --set steps=7.9: steps is an integer\n"},
		{[]string{"--config", "../../configs/smoke.yaml", "--set", "steps=", "--model", dir}, "ragen train: --set steps=: the value is empty; steps is an integer\n"},
		{[]string{"--config", "../../configs/smoke.yaml", "--set", "train.n_groups=[-1]", "--model", dir}, "ragen train: --set train.n_groups=[-1]: train.n_groups[0] -1 (tag Bandit) must be ≥ 1\n"},
		{[]string{"--config", "../../configs/smoke.yaml", "--set", "actor.grad_clip=0", "--model", dir}, "ragen train: --set actor.grad_clip=0: actor.grad_clip 0 must be a finite number > 0\n"},
	} {
		code, errOut := runTrainCmd(tc.args...)
		if code == 0 || !strings.Contains(errOut, tc.want) {
			t.Errorf("ragen train %v: exit %d, %q; want an error containing %q", tc.args, code, errOut, tc.want)
		}
	}
}

func TestEval(t *testing.T) {
	dir := policyCheckpoint(t)
	var out, errb strings.Builder
	code := runMain([]string{"eval", "--model", dir, "--env", "Bandit", "--env", "SimpleSokoban", "--n", "3", "--k", "2", "--max-tokens", "8", "--max-turn", "2", "--json"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"tag":"Bandit"`) || !strings.Contains(lines[1], `"tag":"SimpleSokoban"`) || !strings.Contains(lines[0], `"episodes":6`) {
		t.Fatalf("eval output:\n%s", out.String())
	}
	for _, args := range [][]string{
		{"eval", "--model", dir},
		{"eval", "--model", dir, "--env", "Chess"},
		{"eval", "--env", "Bandit"},
	} {
		var o, e strings.Builder
		if code := runMain(args, &o, &e); code == 0 || e.Len() == 0 {
			t.Errorf("%v: exit %d, stderr %q", args, code, e.String())
		}
	}
}
