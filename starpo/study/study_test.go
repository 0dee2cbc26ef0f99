package study

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The grid: seed-major order, arms limited to their environments, and each
// cell's config built from the base with its environment, arm and seed.
func TestCellsAndRunConfig(t *testing.T) {
	s, err := LoadSpec("../../configs/study/study.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cells := s.Cells()
	// 4 arms on 3 environments and 3 sweep arms on FrozenLake, 3 seeds.
	if len(cells) != (4*3+3)*3 {
		t.Fatalf("%d cells", len(cells))
	}
	if cells[0].Seed != 1 || cells[len(cells)-1].Seed != 3 {
		t.Fatalf("cells not seed-major: first %v, last %v", cells[0], cells[len(cells)-1])
	}
	for _, c := range cells {
		if strings.HasPrefix(c.Arm.Name, "ppo-keep") && c.Env != "FrozenLake" {
			t.Fatalf("sweep arm %s runs on %s", c.Arm.Name, c.Env)
		}
	}
	var grpo Cell
	for _, c := range cells {
		if c.Arm.Name == "grpo" && c.Env == "Bandit" && c.Seed == 2 {
			grpo = c
		}
	}
	cfg, err := s.RunConfig(grpo, []string{"steps=7"})
	if err != nil {
		t.Fatal(err)
	}
	a := cfg.Algorithm
	if a.AdvEstimator != "grpo" || a.RewardNorm != "mean_std" || !a.UseKLLoss || a.KLLossCoef != 0.001 ||
		a.FilterRatio != 1 || a.ClipHigh != 0.2 {
		t.Fatalf("grpo arm's algorithm: %+v", a)
	}
	if len(cfg.Train.Tags) != 1 || cfg.Train.Tags[0] != "Bandit" || cfg.Train.EnvGroups != s.TrainGroups ||
		cfg.Val.EnvGroups != s.ValSeeds || cfg.Val.GroupSize != 1 {
		t.Fatalf("grpo on Bandit: train %+v, val %+v", cfg.Train, cfg.Val)
	}
	if cfg.Steps != 7 || cfg.Seed != 10000+2*seedStride {
		t.Fatalf("steps %d seed %d", cfg.Steps, cfg.Seed)
	}
	warm, err := s.WarmStartConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(warm.Train.Tags) != 3 || warm.Val.EnvGroups != 3*s.ValSeeds {
		t.Fatalf("warm start covers %v, val %d", warm.Train.Tags, warm.Val.EnvGroups)
	}
}

// configs/study/freshness.yaml, the Online-k study: three StarPO-S arms
// that differ only in rollout.reuse, 20 steps, on Bandit and FrozenLake.
func TestFreshnessStudy(t *testing.T) {
	s, err := LoadSpec("../../configs/study/freshness.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cells := s.Cells()
	if len(cells) != 3*2*2 {
		t.Fatalf("%d cells, want 3 arms × 2 environments × 2 seeds", len(cells))
	}
	want := map[string]int{"online-1": 1, "online-5": 5, "online-10": 10}
	for _, c := range cells {
		cfg, err := s.RunConfig(c, nil)
		if err != nil {
			t.Fatal(err)
		}
		a := cfg.Algorithm
		if cfg.Rollout.Reuse != want[c.Arm.Name] || cfg.Steps != 20 || a.FilterRatio != 0.25 || a.ClipHigh != 0.28 ||
			a.AdvEstimator != "gae" {
			t.Fatalf("%v: reuse %d, steps %d, algorithm %+v", c, cfg.Rollout.Reuse, cfg.Steps, a)
		}
	}
	if _, err := s.WarmStartConfig(nil); err != nil {
		t.Fatal(err)
	}
}

// A run's result from its metrics: the validation curve of its environment
// and the first step each Echo Trap signal fired.
func TestReadResultAndSummarise(t *testing.T) {
	dir := t.TempDir()
	metrics := func(name string, val []float64, collapseAt, spikeAt int) string {
		var b strings.Builder
		for i, v := range val {
			step := i * 5
			if step > 0 {
				for s := step - 4; s <= step; s++ {
					b.WriteString(`{"step":` + itoa(s))
					if s >= collapseAt && collapseAt > 0 {
						b.WriteString(`,"warn/in_group_std_collapse":1,"warn/echo_trap":1`)
					}
					if s == spikeAt {
						b.WriteString(`,"warn/grad_norm_spike":1`)
					}
					b.WriteString("}\n")
				}
			}
			b.WriteString(`{"step":` + itoa(step) + `,"timing_s/testing":1,` +
				`"val-env/FrozenLake/success":` + ftoa(v) + "}\n")
		}
		p := filepath.Join(dir, name, "metrics.jsonl")
		writeFile(t, p, b.String())
		return filepath.Dir(p)
	}
	arm := Arm{Name: "a", Label: "arm A"}
	var rs []Result
	for i, c := range []struct {
		val             []float64
		collapse, spike int
	}{{[]float64{0.1, 0.3, 0.2}, 7, 0}, {[]float64{0.2, 0.2, 0.4}, 0, 9}} {
		cell := Cell{Arm: arm, Env: "FrozenLake", Seed: i + 1}
		r, err := ReadResult(cell, metrics(itoa(i), c.val, c.collapse, c.spike))
		if err != nil {
			t.Fatal(err)
		}
		if r.Collapse != c.collapse || r.Spike != c.spike || len(r.Steps) != 3 || r.Steps[2] != 10 {
			t.Fatalf("seed %d: %+v", i+1, r)
		}
		rs = append(rs, r)
	}
	sums := Summarise(Spec{Envs: []string{"FrozenLake"}, Arms: []Arm{arm}}, rs)
	if len(sums) != 1 {
		t.Fatalf("%d summaries", len(sums))
	}
	s := sums[0]
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-12 }
	// end 0.2 and 0.4: mean 0.3, sd 0.1414, se 0.1; peaks 0.3 @5 and 0.4 @10.
	if !near(s.End.Mean, 0.3) || !near(s.End.SE, 0.1) || !near(s.Peak.Mean, 0.35) || !near(s.PeakStep.Mean, 7.5) ||
		!near(s.Gain.Mean, 0.15) {
		t.Fatalf("summary %+v", s)
	}
	if s.Collapsed != 1 || s.Collapse[0] != 7 || s.Spiked != 1 || s.Spikes[0] != 9 || len(s.Curve) != 3 ||
		!near(s.Curve[1].Stat.Mean, 0.25) {
		t.Fatalf("summary %+v", s)
	}
	md := Markdown(sums)
	if !strings.Contains(md, "| FrozenLake | arm A | 2 | 0.150 | 0.300 ± 0.100 | 0.350 ± 0.050 | 8 | +0.150 ± 0.050 "+
		"| 1/2 (7) | 1/2 (9) |") {
		t.Fatalf("markdown:\n%s", md)
	}
	if _, err := ReadResult(Cell{Arm: arm, Env: "Bandit"}, filepath.Join(dir, "0")); err == nil ||
		!strings.Contains(err.Error(), "no validation of Bandit") {
		t.Fatalf("a run without the environment's validation: %v", err)
	}
}

func itoa(i int) string     { return strconv.Itoa(i) }
func ftoa(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// The reasoning block: each measure at the first and last validation over
// seeds, a seed lacking it left out, and the seeds whose think withered.
func TestReasoningSummary(t *testing.T) {
	dir := t.TempDir()
	arm := Arm{Name: "r", Label: "rewards"}
	var rs []Result
	for i, c := range []struct {
		body    string
		withers int
	}{
		{`{"step":0,"val-env/FrozenLake/success":0.1,"val-env/think/tokens_mean":20,"val-env/collapse/mi_estimate":0.4}
{"step":1,"train/think/tokens_mean":9}
{"step":2,"warn/think_length_collapse":1,"warn/echo_trap":1}
{"step":2,"val-env/FrozenLake/success":0.2,"val-env/think/tokens_mean":10,"val-env/collapse/mi_estimate":0.1}
`, 2},
		{`{"step":0,"val-env/FrozenLake/success":0.1,"val-env/think/tokens_mean":30}
{"step":2,"val-env/FrozenLake/success":0.3,"val-env/think/tokens_mean":30,"val-env/reasoning/agreement":0.5}
`, 0},
	} {
		p := filepath.Join(dir, itoa(i), "metrics.jsonl")
		writeFile(t, p, c.body)
		r, err := ReadResult(Cell{Arm: arm, Env: "FrozenLake", Seed: i + 1}, filepath.Dir(p))
		if err != nil {
			t.Fatal(err)
		}
		if r.Withered != c.withers {
			t.Fatalf("seed %d withered at %d, want %d", i+1, r.Withered, c.withers)
		}
		rs = append(rs, r)
	}
	s := Summarise(Spec{Envs: []string{"FrozenLake"}, Arms: []Arm{arm}}, rs)[0]
	if s.Withered != 1 || len(s.Reasoning) != 2 || s.Reasoning[0].Key != "think/tokens_mean" ||
		s.Reasoning[0].Start.Mean != 25 || s.Reasoning[0].End.Mean != 20 || s.Reasoning[0].End.SE != 10 ||
		s.Reasoning[1].Key != "collapse/mi_estimate" || s.Reasoning[1].End.Mean != 0.1 {
		t.Fatalf("summary %+v", s)
	}
	// Agreement is only at one seed's end: no start, so no summary (and no
	// NaN for summary.json).
	if _, err := json.Marshal(s); err != nil {
		t.Fatalf("summary does not encode: %v", err)
	}
	md := Markdown([]Summary{s})
	if !strings.Contains(md, "| FrozenLake | rewards | 25.000 ± 5.000 → 20.000 ± 10.000 | – | – | 0.400 ± 0.000 → 0.100 ± 0.000 | 1/2 (2) |") {
		t.Fatalf("markdown:\n%s", md)
	}
}
