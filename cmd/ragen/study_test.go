package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragen-go/ragen/starpo/study"
	"github.com/ragen-go/ragen/tokenizer/tokenizertest"
)

// studySpec writes a study of the real presets' arms, shortened: the real
// base config with a tiny model, two steps, a handful of seeds, 2 arms of
// configs/study/study.yaml (one of them limited to FrozenLake) on 2
// environments, 2 seeds.
func studySpec(t *testing.T) string {
	t.Helper()
	real, err := study.LoadSpec("../../configs/study/study.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var arms []string
	for _, a := range real.Arms {
		if a.Name == "starpo-s" || a.Name == "grpo" {
			arms = append(arms, "  - {name: "+a.Name+", label: '"+a.Label+"', envs: "+yamlFlow(a.Envs)+", set: "+yamlFlow(a.Set)+"}")
		}
	}
	arms = append(arms, "  - {name: keep50, envs: [FrozenLake], set: [algorithm.filter_ratio=0.5]}")
	base, err := filepath.Abs("../../configs/study/base.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "study.yaml")
	text := "name: tiny\nbase: " + base + "\nseeds: 2\nenvs: [Bandit, FrozenLake]\ntrain_groups: 2\nval_seeds: 4\narms:\n" + strings.Join(arms, "\n") + "\n"
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func yamlFlow(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = "'" + x + "'"
	}
	return "[" + strings.Join(q, ", ") + "]"
}

var tinyStudySets = []string{"--set", "steps=2", "--set", "val_every=1", "--set", "save_every=0", "--set", "trajectories_every=0",
	"--set", "sft.episodes=24", "--set", "builtin_model.vocab_episodes=16", "--set", "builtin_model.hidden=32", "--set", "builtin_model.layers=1",
	"--set", "builtin_model.intermediate=64", "--set", "train.group_size=2", "--set", "rollout.response_length=12", "--set", "agent.max_turn=2"}

// The whole study pipeline, in seconds: the shared warm start, every cell
// as a `ragen train` process (two at a time), summary.json with one entry
// per arm and environment over both seeds, summary.md, the comparison
// pages and the table; a rerun keeps the finished runs, a different study
// in the same folder is refused, and `ragen report --run` on the folder
// draws the arms side by side.
func TestStudyShort(t *testing.T) {
	t.Setenv("RAGEN_TEST_AS_RAGEN", "1") // the test binary is the ragen the study runs
	spec := studySpec(t)
	out := filepath.Join(t.TempDir(), "study")
	if d := os.Getenv("RAGEN_STUDY_TEST_OUT"); d != "" {
		out = d
	}
	args := append([]string{"study", "--config", spec, "--out", out, "--tokenizer", tokenizertest.Path(t), "--parallel", "2"}, tinyStudySets...)
	var stdout, stderr strings.Builder
	if code := runMain(args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var sum struct {
		Arms []study.Summary `json:"arms"`
	}
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	// starpo-s and grpo on both environments, keep50 on FrozenLake only.
	if len(sum.Arms) != 5 {
		t.Fatalf("%d summaries, want 5: %s", len(sum.Arms), b)
	}
	for _, s := range sum.Arms {
		if s.Seeds != 2 || len(s.Curve) != 3 || s.Curve[0].Step != 0 || s.Curve[2].Step != 2 || s.Curve[2].N != 2 {
			t.Errorf("%s on %s: %d seeds, curve %+v", s.Arm, s.Env, s.Seeds, s.Curve)
		}
		if s.Peak.Mean < s.End.Mean || s.Peak.Mean < s.Start.Mean {
			t.Errorf("%s on %s: peak %v below start %v or end %v", s.Arm, s.Env, s.Peak, s.Start, s.End)
		}
	}
	for _, want := range []string{"| FrozenLake | keep50 | 2 |", "| Bandit | StarPO-S (PPO, keep 25%, clip-higher) | 2 |", "StarPO (GRPO)"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, stdout.String())
		}
	}
	for _, f := range []string{"summary.md", "compare.html", "compare-FrozenLake.html", "compare-Bandit.html", "sft/export/config.json",
		"runs/FrozenLake/keep50/seed2/metrics.jsonl", "runs/Bandit/grpo/seed1/export/config.json", "runs/Bandit/grpo/seed1.log"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("study folder lacks %s", f)
		}
	}
	page, _ := os.ReadFile(filepath.Join(out, "compare.html"))
	if !strings.Contains(string(page), "FrozenLake · PPO") && !strings.Contains(string(page), "FrozenLake · keep50 (mean of 2 seeds)") {
		t.Error("compare.html does not name the arms' mean curves")
	}

	// Rerun: nothing left to train, the same table.
	stdout.Reset()
	stderr.Reset()
	if code := runMain(args, &stdout, &stderr); code != 0 {
		t.Fatalf("rerun: exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "finished runs are kept") || strings.Contains(stderr.String(), "run started") {
		t.Errorf("the rerun trained again:\n%s", stderr.String())
	}
	// Another design into the same folder is refused.
	stderr.Reset()
	if code := runMain(append(args, "--set", "steps=3"), &stdout, &stderr); code == 0 || !strings.Contains(stderr.String(), "holds a study started with a different") {
		t.Errorf("a different study in the same folder: exit %d, %s", code, stderr.String())
	}
	stdout.Reset()
	if code := runMain([]string{"report", "--run", out}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "report.html") {
		t.Fatalf("report of a study: exit %d: %s", code, stderr.String())
	}
}

// Bad study input stops before any work with a sentence naming it.
func TestStudyErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	base, _ := filepath.Abs("../../configs/study/base.yaml")
	ok := "name: s\nbase: " + base + "\nseeds: 1\nenvs: [Bandit]\ntrain_groups: 1\nval_seeds: 2\n"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--config", filepath.Join(dir, "none.yaml")}, "reading the study file"},
		{[]string{"--config", write("noarms.yaml", ok)}, "arms is empty"},
		{[]string{"--config", write("env.yaml", strings.Replace(ok, "[Bandit]", "[Nope]", 1)+"arms: [{name: a}]\n")}, `unknown environment tag "Nope"`},
		{[]string{"--config", write("dup.yaml", ok+"arms: [{name: a}, {name: a}]\n")}, `name "a" is used twice`},
		{[]string{"--config", write("armenv.yaml", ok+"arms: [{name: a, envs: [FrozenLake]}]\n")}, `environment "FrozenLake" is not in the study's envs`},
		{[]string{"--config", write("bogus.yaml", ok+"arms: [{name: a}]\nbogus: 1\n")}, "bogus"},
		{[]string{"--config", write("badset.yaml", ok+"arms: [{name: a, set: [algorithm.nope=1]}]\n")}, "arm a on Bandit"},
		{[]string{"--config", write("window.yaml", ok+"arms: [{name: a, set: [agent.max_context_window=0]}]\n")}, "agent.max_context_window 0 must be -1"},
		{[]string{"--config", write("good.yaml", ok+"arms: [{name: a}]\n"), "--parallel", "0"}, "--parallel 0"},
		{[]string{"--config", write("good2.yaml", ok+"arms: [{name: a}]\n"), "--tokenizer", "/nonexistent"}, "--tokenizer /nonexistent: not found"},
	} {
		var stdout, stderr strings.Builder
		code := runMain(append([]string{"study", "--out", filepath.Join(dir, "out")}, c.args...), &stdout, &stderr)
		if code == 0 || !strings.Contains(stderr.String(), c.want) || strings.Contains(stderr.String(), "panic") {
			t.Errorf("%v: exit %d, stderr %q, want %q", c.args, code, stderr.String(), c.want)
		}
	}
}
