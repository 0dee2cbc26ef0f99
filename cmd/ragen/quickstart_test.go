package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sugarme/gotch"

	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/tokenizer"
	"github.com/ragen-go/ragen/tokenizer/tokenizertest"
)

// quickstartJob runs `ragen quickstart` with args (its --out added) into
// a fresh folder, checks that the printed table holds every want, and
// returns the folder and the table.
func quickstartJob(t *testing.T, args []string, want ...string) (out, table string) {
	t.Helper()
	out = filepath.Join(t.TempDir(), "qs")
	var stdout, stderr strings.Builder
	if code := runMain(append(append([]string{"quickstart"}, args...), "--out", out), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, w := range want {
		if !strings.Contains(stdout.String(), w) {
			t.Fatalf("table lacks %q:\n%s", w, stdout.String())
		}
	}
	return out, stdout.String()
}

// skipWithoutSmolLM2 skips a test that needs the model make deps installs.
func skipWithoutSmolLM2(t *testing.T) {
	t.Helper()
	if _, err := resolveModel("smollm2"); err != nil {
		t.Skipf("SmolLM2 is not installed (make deps fetches it): %v", err)
	}
}

// The built-in pipeline, shortened (a smaller model, a handful of
// demonstrations, one StarPO-S step, 8 validation seeds per tag): every
// stage runs, the table is printed, and the exported checkpoint loads back
// with its reduced vocabulary, whose map says how it relates to Qwen's.
func TestQuickstartShort(t *testing.T) {
	args := []string{"--builtin", "--config", "../../configs/quickstart-builtin.yaml", "--tokenizer", tokenizertest.Path(t),
		"--set", "steps=1", "--set", "save_every=0", "--set", "sft.episodes=32", "--set", "sft.batch=16", "--set", "builtin_model.vocab_episodes=32",
		"--set", "builtin_model.hidden=32", "--set", "builtin_model.layers=1", "--set", "builtin_model.intermediate=64",
		"--set", "train.group_size=2", "--set", "val.n_groups=[8,8,8]", "--set", "val.env_groups=24", "--set", "rollout.response_length=16",
		"--set", "sft.heldout=4"}
	out, _ := quickstartJob(t, args, "initial", "after SFT", "after StarPO-S", "Bandit", "FrozenLake", "SimpleSokoban",
		"end − after SFT (95% interval)", "valid actions per turn", "episodes with every turn valid", "success among the episodes")
	sum, err := readSummary(out)
	if err != nil || len(sum.Stages) != 3 || sum.Gains["FrozenLake"].Episodes != 8 || len(sum.Stages[2].Valid) != 3 || len(sum.Stages[2].ValidEpisodes) != 3 {
		t.Fatalf("summary.json: %v, %d stages, gains %v", err, len(sum.Stages), sum.Gains)
	}
	exp := filepath.Join(out, "rl", "export")
	for _, f := range []string{"config.json", "model.safetensors", "tokenizer.json", tokenizer.VocabMapFile} {
		if _, err := os.Stat(filepath.Join(exp, f)); err != nil {
			t.Errorf("export lacks %s", f)
		}
	}
	for _, f := range []string{"rl/report.html", "rl/metrics.jsonl", "sft/demonstrations.jsonl", "sft/sft-metrics.jsonl"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("run folder lacks %s", f)
		}
	}
	// The held-out decisions are scored after the last SFT step.
	sm, _ := os.ReadFile(filepath.Join(out, "sft", "sft-metrics.jsonl"))
	lines := strings.Split(strings.TrimSpace(string(sm)), "\n")
	var last map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last["sft/heldout_decision_p"] == nil {
		t.Fatalf("sft-metrics.jsonl's last line has no held-out decisions (%v): %s", err, lines[len(lines)-1])
	}
	m, err := model.LoadCausalLM(exp, model.Options{Device: gotch.CPU, DType: gotch.Float})
	if err != nil {
		t.Fatalf("the export does not load back: %v", err)
	}
	defer m.Drop()
	red, ok, err := tokenizer.LoadReduction(exp)
	if err != nil || !ok || len(red.IDs) != m.Cfg.VocabSize || red.BaseSize < 151643 {
		t.Fatalf("vocabulary map: ok %v err %v, %d ids for a %d-token model", ok, err, len(red.IDs), m.Cfg.VocabSize)
	}
	cfg, _ := os.ReadFile(filepath.Join(exp, "config.json"))
	if !strings.Contains(string(cfg), "ragen_vocabulary") {
		t.Fatal("the exported config.json does not say its vocabulary is reduced")
	}
}

// TestQuickstartSmolLM2Short runs the default job (SmolLM2-135M-Instruct,
// no warm start) for one step on a few seeds: the row before StarPO-S is
// the pretrained model's, and the export is a Llama checkpoint.
func TestQuickstartSmolLM2Short(t *testing.T) {
	skipWithoutSmolLM2(t)
	args := []string{"--config", "../../configs/quickstart.yaml",
		"--set", "steps=1", "--set", "save_every=0", "--set", "val_every=0", "--set", "train.n_groups=[1]", "--set", "train.env_groups=1",
		"--set", "train.group_size=4", "--set", "val.n_groups=[4]", "--set", "val.env_groups=4",
		"--set", "algorithm.ppo_mini_batch=4", "--set", "algorithm.micro_batch=4", "--set", "actor.train_layers=1", "--set", "critic.train_layers=1"}
	out, table := quickstartJob(t, args, "pretrained", "after StarPO-S", "Bandit", "end − pretrained (95% interval)", "valid actions per turn")
	if strings.Contains(table, "after SFT") {
		t.Fatalf("a job without a warm start prints an after-SFT row:\n%s", table)
	}
	sum, err := readSummary(out)
	if err != nil || len(sum.Stages) != 2 || sum.Stages[0].Stage != "pretrained" || sum.Gains["Bandit"].Episodes != 4 {
		t.Fatalf("summary.json: %v, stages %+v, gains %v", err, sum.Stages, sum.Gains)
	}
	if _, err := os.Stat(filepath.Join(out, "sft")); err == nil {
		t.Error("a job without a warm start wrote an sft folder")
	}
	cfg, err := os.ReadFile(filepath.Join(out, "rl", "export", "config.json"))
	if err != nil || !strings.Contains(string(cfg), `"llama"`) {
		t.Fatalf("the export is not a Llama checkpoint (%v): %s", err, cfg)
	}
}

// TestQuickstartSmolLM2WarmStart runs the long real-model preset
// (configs/smollm2-sokoban.yaml: solver demonstrations with grounded
// thinks, then StarPO-S), shrunk to seconds: the table has the pretrained
// model's row, the warm start's and the end's, and the format-and-play
// rows.
func TestQuickstartSmolLM2WarmStart(t *testing.T) {
	skipWithoutSmolLM2(t)
	args := []string{"--config", "../../configs/smollm2-sokoban.yaml",
		"--set", "steps=1", "--set", "save_every=0", "--set", "val_every=0", "--set", "collapse.every=0", "--set", "agent.max_turn=1",
		"--set", "rollout.response_length=24", "--set", "sft.episodes=4", "--set", "sft.batch=4", "--set", "sft.micro_batch=4",
		"--set", "train.n_groups=[1]", "--set", "train.env_groups=1", "--set", "train.group_size=2", "--set", "val.n_groups=[2]", "--set", "val.env_groups=2",
		"--set", "algorithm.ppo_mini_batch=2", "--set", "algorithm.micro_batch=2", "--set", "actor.train_layers=1", "--set", "critic.train_layers=1"}
	out, _ := quickstartJob(t, args, "pretrained", "after SFT", "after StarPO-S", "SimpleSokoban", "end − after SFT (95% interval)", "episodes with every turn valid")
	sum, err := readSummary(out)
	if err != nil || len(sum.Stages) != 3 || sum.Stages[0].Stage != "pretrained" || sum.Stages[1].Stage != "after SFT" {
		t.Fatalf("summary.json: %v, stages %+v", err, sum.Stages)
	}
}

// Bad input stops the pipeline with a clear error before any work.
func TestQuickstartErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--builtin", "--tokenizer", "/nonexistent/tokenizer.json"}, "--tokenizer /nonexistent/tokenizer.json: not found"},
		{[]string{"--tokenizer", "/nonexistent/tokenizer.json"}, "--tokenizer applies to --builtin"},
		{[]string{"--builtin", "--model", "smollm2"}, "either --builtin or --model"},
		{[]string{"--model", "/nonexistent"}, "--model /nonexistent: no such folder or file"},
		{[]string{"--set", "sft.episodes=-1"}, "sft.episodes -1 must be ≥ 0"},
		{[]string{"--set", "bogus=1"}, "bogus"},
		{[]string{"--set", "agent.max_context_window=0"}, "agent.max_context_window 0 must be -1"},
	} {
		var stdout, stderr strings.Builder
		preset := "../../configs/quickstart.yaml"
		if c.args[0] == "--builtin" {
			preset = "../../configs/quickstart-builtin.yaml"
		}
		args := append([]string{"quickstart", "--config", preset, "--out", t.TempDir()}, c.args...)
		if code := runMain(args, &stdout, &stderr); code == 0 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q, want it to mention %q", c.args, code, stderr.String(), c.want)
		}
	}
}

// The gain's interval is the normal one for a difference of two
// independent proportions: 0.2 → 0.3 on 256 episodes each is +0.100 ± 0.0745.
func TestGainInterval(t *testing.T) {
	d, half := gainInterval(0.2, 0.3, 256)
	if math.Abs(d-0.1) > 1e-12 || math.Abs(half-0.07453) > 1e-4 {
		t.Fatalf("gain %v ± %v", d, half)
	}
	if _, half := gainInterval(0.5, 0.5, 0); !math.IsNaN(half) {
		t.Fatalf("no episodes gave an interval ± %v", half)
	}
}

// quickstartSummary is what a test reads back from summary.json.
type quickstartSummary struct {
	Stages []stageResult          `json:"stages"`
	Gains  map[string]gainSummary `json:"starpo_gain"`
}

func readSummary(out string) (quickstartSummary, error) {
	var sum quickstartSummary
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err == nil {
		err = json.Unmarshal(b, &sum)
	}
	return sum, err
}
