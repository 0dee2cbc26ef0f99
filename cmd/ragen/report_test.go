package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// reportRun records a minimal run folder: config, metrics, one trajectory file.
func reportRun(t *testing.T, name string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"config.yaml":                        "name: " + name + "\nsteps: 2\n",
		"metrics.jsonl":                      `{"step": 0, "val-env/Bandit/success": 0.5}` + "\n" + `{"step": 1, "critic/score/mean": 0.25, "actor/grad_norm": 1.5}` + "\n",
		"trajectories/val-step-000000.jsonl": `{"env_id": 0, "group_id": 0, "tag": "Bandit", "seed": 3, "messages": [{"role": "user", "content": "Turn 1:\nState:\npick an arm"}, {"role": "assistant", "content": "<think>dragons pay</think><answer>Dragon</answer>"}], "turn_rewards": [1], "score": 1, "success": true, "num_actions": 1}` + "\n",
	}
	for rel, content := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestReportRun(t *testing.T) {
	dir := reportRun(t, "bandit-report")
	var out, errb bytes.Buffer
	if code := runMain([]string{"report", "--run", dir}, &out, &errb); code != 0 {
		t.Fatalf("exit %d, stderr %s", code, errb.String())
	}
	want := filepath.Join(dir, "report.html")
	if got := strings.TrimSpace(out.String()); got != want {
		t.Errorf("printed %q, want %q", got, want)
	}
	b, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"<h1>bandit-report</h1>", `id="step-select"`, "dragons pay"} {
		if !bytes.Contains(b, []byte(s)) {
			t.Errorf("report.html lacks %q", s)
		}
	}
}

func TestReportCompare(t *testing.T) {
	a, b := reportRun(t, "run-a"), reportRun(t, "run-b")
	page := filepath.Join(t.TempDir(), "both.html")
	var out, errb bytes.Buffer
	if code := runMain([]string{"report", "--compare", a, b, "--out", page}, &out, &errb); code != 0 {
		t.Fatalf("exit %d, stderr %s", code, errb.String())
	}
	if got := strings.TrimSpace(out.String()); got != page {
		t.Errorf("printed %q, want %q", got, page)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(html, []byte("<h2>run-a</h2>")) || !bytes.Contains(html, []byte("<h2>run-b</h2>")) {
		t.Error("comparison does not name both runs")
	}
}

func TestReportErrors(t *testing.T) {
	dir := reportRun(t, "x")
	missing := filepath.Join(t.TempDir(), "no-run")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"report"}, "give --run DIR"},
		{[]string{"report", "--run", dir, "--compare", dir}, "cannot be combined"},
		{[]string{"report", "--run", missing}, "run folder " + missing + " does not exist"},
		{[]string{"report", "--run", t.TempDir()}, "has no metrics.jsonl"},
		{[]string{"report", "--compare"}, "--compare needs the run folders"},
		{[]string{"report", "--compare", dir, missing}, missing},
		{[]string{"report", "--run", dir, "extra"}, `unexpected argument "extra"`},
		{[]string{"report", "--run", dir, "--out", "x.html"}, "--out goes with --compare"},
	} {
		var out, errb bytes.Buffer
		if code := runMain(tt.args, &out, &errb); code == 0 || !strings.Contains(errb.String(), tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want an error mentioning %q", tt.args, code, errb.String(), tt.want)
		}
	}
}
