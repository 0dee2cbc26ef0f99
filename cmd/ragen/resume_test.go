package main

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// A run killed between checkpoints and resumed records what an
// uninterrupted run records: each step once, with the same metrics apart
// from times, throughput and memory, and the same trajectories; what the
// kill left beyond the checkpoint is kept in .rolled-back files. Then the
// manifests: a changed byte in the checkpoint stops --resume, and in the
// export stops eval and export, each with a sentence naming the file,
// until --skip-verify.
func TestResumeIsExact(t *testing.T) {
	base := policyCheckpoint(t)
	train := func(out string, extra ...string) {
		t.Helper()
		args := append([]string{"--config", "../../configs/smoke.yaml", "--model", base, "--out", out, "--set", "save_every=2"}, extra...)
		if code, errOut := runTrainCmd(args...); code != 0 {
			t.Fatalf("ragen train %v: exit %d: %s", extra, code, errOut)
		}
	}
	straight := filepath.Join(t.TempDir(), "straight")
	train(straight, "--set", "steps=4")

	// The state a kill in the middle of step 3's checkpoint leaves: step
	// 3's metrics, validation and trajectories written, its checkpoint a
	// .partial folder, latest naming step 2.
	killed := filepath.Join(t.TempDir(), "killed")
	train(killed, "--set", "steps=3")
	ck := filepath.Join(killed, "checkpoints")
	if err := os.Rename(filepath.Join(ck, "step-000003"), filepath.Join(ck, "step-000003.partial")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ck, "latest"), []byte("step-000002\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	train(killed, "--set", "steps=4", "--resume")

	want, got := metricRows(t, filepath.Join(straight, "metrics.jsonl")), metricRows(t, filepath.Join(killed, "metrics.jsonl"))
	if steps := lineSteps(got); !slices.Equal(steps, []string{"val 0", "1", "2", "3", "4", "val 4"}) {
		t.Fatalf("the resumed run's metrics.jsonl has the lines %v", steps)
	}
	if !reflect.DeepEqual(got, want) {
		for i := range min(len(got), len(want)) {
			for k, v := range want[i] {
				if w, ok := got[i][k]; !ok || !reflect.DeepEqual(v, w) {
					t.Errorf("line %d, %s: %v straight on, %v resumed", i+1, k, v, w)
				}
			}
		}
		t.Fatalf("the resumed run's metrics differ from the uninterrupted run's")
	}
	rolled := metricRows(t, filepath.Join(killed, "metrics.jsonl.rolled-back"))
	if steps := lineSteps(rolled); !slices.Equal(steps, []string{"3", "val 3"}) {
		t.Fatalf("metrics.jsonl.rolled-back has the lines %v, want step 3's and its validation", steps)
	}
	if !reflect.DeepEqual(rolled[0], want[3]) {
		t.Errorf("step 3 trained again differs from step 3 before the kill:\n%v\n%v", want[3], rolled[0])
	}

	trajs := filepath.Join(killed, "trajectories")
	names := func(dir string) []string {
		ents, _ := os.ReadDir(dir)
		var out []string
		for _, e := range ents {
			out = append(out, e.Name())
		}
		return out
	}
	straightNames := names(filepath.Join(straight, "trajectories"))
	if got := names(trajs); !slices.Equal(got, slices.Sorted(slices.Values(append(slices.Clone(straightNames),
		"train-step-000003.jsonl.rolled-back", "val-step-000003.jsonl.rolled-back")))) {
		t.Fatalf("trajectories/ of the resumed run: %v; straight on: %v", got, straightNames)
	}
	for _, n := range straightNames {
		if a, b := readFile(t, filepath.Join(straight, "trajectories", n)), readFile(t, filepath.Join(trajs, n)); a != b {
			t.Errorf("trajectories/%s differs between the runs", n)
		}
	}
	if a, b := readFile(t, filepath.Join(trajs, "train-step-000003.jsonl")), readFile(t, filepath.Join(trajs, "train-step-000003.jsonl.rolled-back")); a != b {
		t.Error("step 3's rollout played again differs from the one before the kill")
	}
	// keep_checkpoints 3 keeps both; the .partial is gone.
	if got := names(ck); !slices.Equal(got, []string{"latest", "step-000002", "step-000004"}) {
		t.Errorf("checkpoints/ holds %v", got)
	}

	// A changed byte in the checkpoint --resume would load.
	actor := filepath.Join(ck, "step-000004", "actor.safetensors")
	flipByte(t, actor)
	code, errOut := runTrainCmd("--config", "../../configs/smoke.yaml", "--model", base, "--out", killed, "--resume", "--set", "steps=5")
	if want := "ragen train: " + actor + ": sha256 does not match manifest.json (the file is corrupt or was changed); --skip-verify loads it anyway\n"; code != 1 || !strings.HasSuffix(errOut, want) {
		t.Fatalf("resume from a changed checkpoint: exit %d, %q; want %q", code, errOut, want)
	}
	// ... and in the export that eval and export read.
	exp := filepath.Join(killed, "export")
	weights := filepath.Join(exp, "model.safetensors")
	flipByte(t, weights)
	for _, args := range [][]string{
		{"eval", "--model", exp, "--env", "Bandit", "--n", "1", "--max-tokens", "4", "--max-turn", "1"},
		{"export", "--model", exp, "--out", filepath.Join(t.TempDir(), "copy")},
	} {
		var o, e strings.Builder
		code := runMain(args, &o, &e)
		want := "ragen " + args[0] + ": " + weights + ": sha256 does not match manifest.json (the file is corrupt or was changed); --skip-verify loads it anyway\n"
		if code != 1 || e.String() != want {
			t.Errorf("%v on a changed export: exit %d, %q; want %q", args, code, e.String(), want)
		}
		if code := runMain(append(args, "--skip-verify"), &o, &e); code != 0 {
			t.Errorf("%v --skip-verify: exit %d, %s", args, code, e.String())
		}
	}
	var o, e strings.Builder
	if code := runMain([]string{"eval", "--model", filepath.Join(ck, "step-000002"), "--env", "Bandit"}, &o, &e); code != 1 ||
		!strings.Contains(e.String(), "a training checkpoint holds no config.json or tokenizer; give its run's export/ folder") {
		t.Errorf("eval of a checkpoint folder: exit %d, %q", code, e.String())
	}
}

// metricRows reads a metrics file without its timing_s/ and perf/ keys:
// times, throughput and memory, which no two runs share.
func metricRows(t *testing.T, path string) []map[string]any {
	t.Helper()
	var rows []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(readFile(t, path)), "\n") {
		var row map[string]any
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		maps.DeleteFunc(row, func(k string, _ any) bool {
			return strings.HasPrefix(k, "timing_s/") || strings.HasPrefix(k, "perf/")
		})
		rows = append(rows, row)
	}
	return rows
}

// lineSteps names each metrics row: its step, "val N" for a validation.
func lineSteps(rows []map[string]any) []string {
	var out []string
	for _, r := range rows {
		s, _ := json.Marshal(r["step"])
		if _, ok := r["val-env/Bandit/success"]; ok {
			out = append(out, "val "+string(s))
		} else {
			out = append(out, string(s))
		}
	}
	return out
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// flipByte changes one bit in the middle of a file.
func flipByte(t *testing.T, path string) {
	t.Helper()
	b := []byte(readFile(t, path))
	b[len(b)/2] ^= 1
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
