package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ragen-go/ragen/dist/c10d"
	"github.com/ragen-go/ragen/internal/torchrt"
	"github.com/ragen-go/ragen/model/safetensors"
)

// The data-parallel tests run real jobs: the test binary, started with
// RAGEN_TEST_AS_RAGEN=1, is the ragen binary (see TestMain). Like main, it
// first gets OpenBLAS's kernels for this CPU.
func TestMain(m *testing.M) {
	torchrt.RestartWithFastBLAS()
	if os.Getenv("RAGEN_TEST_AS_RAGEN") == "1" {
		os.Exit(runMain(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// dpConfig is 3 steps on 4 Bandit groups of 2 (so 2 groups per rank of 2),
// greedy: sampling draws depend on a row's place in its batch, which
// differs between one process and two, while greedy decoding does not.
func dpConfig(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "dp.yaml")
	yaml := `name: dp
steps: 3
val_every: 0
save_every: 1
agent: {max_turn: 1, max_actions_per_turn: 1}
rollout: {response_length: 16, temperature: 0, val_temperature: 0}
train: {tags: [Bandit], n_groups: [4], env_groups: 4, group_size: 2}
val: {tags: [Bandit], n_groups: [4], env_groups: 4, group_size: 1}
algorithm: {filter_ratio: 0.5, micro_batch: 2, ppo_mini_batch: 0, lm_head_chunk: 256}
actor: {lr: 1.0e-3}
critic: {lr: 1.0e-3}
`
	if err := os.WriteFile(p, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// launchCmd runs `ragen launch` in-process over the test binary.
func launchCmd(t *testing.T, args ...string) (int, string) {
	t.Helper()
	t.Setenv("RAGEN_TEST_AS_RAGEN", "1")
	var out, errb strings.Builder
	code := runMain(append([]string{"launch"}, args...), &out, &errb)
	return code, out.String() + errb.String()
}

func readWeights(t *testing.T, dir string) map[string][]float32 {
	t.Helper()
	c, err := safetensors.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	out := map[string][]float32{}
	for _, n := range c.Names() {
		if out[n], err = c.Float32(n); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// maxDiff is the largest |a−b| over all weights.
func maxDiff(t *testing.T, a, b map[string][]float32) float64 {
	t.Helper()
	d := 0.0
	for n, x := range a {
		y, ok := b[n]
		if !ok || len(y) != len(x) {
			t.Fatalf("weight %s differs in presence or shape", n)
		}
		for i := range x {
			d = math.Max(d, math.Abs(float64(x[i]-y[i])))
		}
	}
	return d
}

func stepMetrics(t *testing.T, run string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range metricLines(t, run) {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		if _, ok := m["actor/pg_loss"]; ok {
			out = append(out, m)
		}
	}
	return out
}

// needGloo skips a data-parallel test when this build has no Gloo process
// group (scripts/gotchprep says why when it prepares the binding).
func needGloo(t *testing.T) {
	t.Helper()
	if !c10d.HasGloo() {
		t.Skipf("this build has no Gloo process group: %s", c10d.NoGloo())
	}
}

// Two ranks train the same model as one process with the whole batch:
// same weights on both ranks (checked by the trainer's checksum), and the
// same weights and metrics as the single process, within fp32 tolerance.
func TestDataParallelMatchesOneProcess(t *testing.T) {
	needGloo(t)
	dir := policyCheckpoint(t)
	cfg := dpConfig(t)
	one, two := filepath.Join(t.TempDir(), "one"), filepath.Join(t.TempDir(), "two")
	if code, out := launchCmd(t, "--nproc", "1", "train", "--config", cfg, "--model", dir, "--out", one); code != 0 {
		t.Fatalf("1 rank: exit %d:\n%s", code, out)
	}
	code, out := launchCmd(t, "--nproc", "2", "train", "--config", cfg, "--model", dir, "--out", two, "--check-every", "1")
	if code != 0 {
		t.Fatalf("2 ranks: exit %d:\n%s", code, out)
	}
	if n := strings.Count(out, "weights identical on every rank"); n != 3 {
		t.Errorf("the weights were checked identical %d times over 3 steps, want 3:\n%s", n, out)
	}
	if strings.Contains(out, "[rank 1]") {
		t.Errorf("rank 1 logged (it should only warn):\n%s", out)
	}
	start, a, b := readWeights(t, dir), readWeights(t, filepath.Join(one, "export")), readWeights(t, filepath.Join(two, "export"))
	moved, d := maxDiff(t, start, a), maxDiff(t, a, b)
	t.Logf("training moved the weights by up to %.3g; 1 and 2 ranks differ by up to %.3g", moved, d)
	if moved < 1e-4 {
		t.Fatalf("training moved the weights by only %g: the test shows nothing", moved)
	}
	if d > 1e-5 {
		t.Errorf("1 and 2 ranks end %g apart, want ≤ 1e-5", d)
	}
	m1, m2 := stepMetrics(t, one), stepMetrics(t, two)
	if len(m1) != 3 || len(m2) != 3 {
		t.Fatalf("%d and %d step lines, want 3 each", len(m1), len(m2))
	}
	for i := range m1 {
		for _, k := range []string{"critic/score/mean", "train/kept_trajectories", "rollout/in_group_std", "critic/advantages/mean", "critic/vf_loss", "actor/pg_loss", "actor/entropy_loss", "actor/grad_norm", "critic/grad_norm", "train/Bandit/success"} {
			x, _ := m1[i][k].(float64)
			y, _ := m2[i][k].(float64)
			if math.Abs(x-y) > 1e-4*math.Max(1, math.Abs(x)) {
				t.Errorf("step %d %s: %v with 1 rank, %v with 2", i+1, k, m1[i][k], m2[i][k])
			}
		}
	}
}

// A rank killed mid-run makes the other fail with a clear message well
// inside 60 s; a relaunch with --resume continues from the last checkpoint.
func TestDataParallelRankDeathAndResume(t *testing.T) {
	needGloo(t)
	dir := policyCheckpoint(t)
	cfg := dpConfig(t)
	run := filepath.Join(t.TempDir(), "run")
	port, err := freePort("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	ranks := make([]*exec.Cmd, 2)
	logs := make([]strings.Builder, 2)
	for r := range ranks {
		c := exec.Command(os.Args[0], "train", "--config", cfg, "--model", dir, "--out", run, "--set", "steps=50")
		c.Env = append(os.Environ(), "RAGEN_TEST_AS_RAGEN=1", "RANK="+strconv.Itoa(r), "LOCAL_RANK="+strconv.Itoa(r),
			"WORLD_SIZE=2", "LOCAL_WORLD_SIZE=2", "MASTER_ADDR=127.0.0.1", "MASTER_PORT="+strconv.Itoa(port))
		c.Stdout, c.Stderr = &logs[r], &logs[r]
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		ranks[r] = c
	}
	defer func() {
		for _, c := range ranks {
			c.Process.Kill()
		}
	}()
	done := make(chan error, 1)
	go func() { done <- ranks[0].Wait() }()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		if _, err := os.Stat(filepath.Join(run, "checkpoints", "step-000002")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no checkpoint of step 2 after 3 minutes:\n%s", logs[0].String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := ranks[1].Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	ranks[1].Wait()
	killed := time.Now()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() == 0 {
			t.Fatalf("rank 0 ended with %v after its peer was killed:\n%s", err, logs[0].String())
		}
		t.Logf("rank 0 stopped %v after rank 1 was killed", time.Since(killed).Round(time.Millisecond))
	case <-time.After(60 * time.Second):
		t.Fatalf("rank 0 still running 60 s after rank 1 was killed:\n%s", logs[0].String())
	}
	if out := logs[0].String(); !strings.Contains(out, "another rank died") {
		t.Errorf("rank 0's error does not say a rank died:\n%s", out)
	}
	latest, err := os.ReadFile(filepath.Join(run, "checkpoints", "latest"))
	if err != nil {
		t.Fatal(err)
	}
	code, out := launchCmd(t, "--nproc", "2", "train", "--config", cfg, "--model", dir, "--out", run, "--resume",
		"--set", fmt.Sprintf("steps=%d", resumedStep(t, string(latest))+1))
	if code != 0 {
		t.Fatalf("resume: exit %d:\n%s", code, out)
	}
	if !strings.Contains(out, "resumed") || !strings.Contains(out, "weights identical on every rank") {
		t.Errorf("the resumed job did not say it resumed and checked the ranks:\n%s", out)
	}
}

// resumedStep parses "step-00000N" from the latest pointer.
func resumedStep(t *testing.T, latest string) int {
	t.Helper()
	n, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(strings.TrimSpace(latest)), "step-"))
	if err != nil {
		t.Fatalf("latest checkpoint pointer %q: %v", latest, err)
	}
	return n
}

func TestLaunchBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--nproc", "0", "train"}, "--nproc 0 must be at least 1"},
		{[]string{"--nproc", "2"}, "no command to launch"},
		{[]string{"--nproc", "2", "fly"}, `unknown command "fly"`},
		{[]string{"--master-port", "70000", "train"}, "--master-port 70000 is not a TCP port"},
		{[]string{"launch"}, "cannot launch itself"},
		{[]string{"sft", "--model", "x"}, `"sft" does not run data-parallel`},
	} {
		code, out := launchCmd(t, tc.args...)
		if code == 0 || !strings.Contains(out, tc.want) {
			t.Errorf("launch %v: exit %d, output %q, want %q", tc.args, code, out, tc.want)
		}
	}
	t.Setenv("WORLD_SIZE", "2")
	var out, errb strings.Builder
	if code := runMain([]string{"sft", "--model", "x"}, &out, &errb); code == 0 || !strings.Contains(errb.String(), "sft runs as one process, but WORLD_SIZE=2 is set") {
		t.Errorf("sft under WORLD_SIZE=2: exit %d, %q", code, errb.String())
	}
}
