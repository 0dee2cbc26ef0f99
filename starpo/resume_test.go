package starpo

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ragen-go/ragen/internal/manifest"
	"github.com/ragen-go/ragen/starpo/config"
)

// What a kill between checkpoints leaves beyond the checkpoint's step is
// moved aside: metrics lines (a line cut short by the kill too) and
// trajectory files, appended to what an earlier resume moved; the kept
// training lines come back for the Echo-Trap watch, null as NaN.
func TestRollBack(t *testing.T) {
	dir := t.TempDir()
	kept := `{"step":0,"timing_s/testing":1,"val-env/Bandit/success":0.5}
{"step":1,"actor/grad_norm":null,"rollout/in_group_std":0.25}
{"step":2,"actor/grad_norm":1.5,"rollout/in_group_std":0.125}
{"step":2,"timing_s/testing":1,"val-env/Bandit/success":0.625}
`
	later := `{"step":3,"actor/grad_norm":2}
{"step":3,"timing_s/testing":1,"val-env/Bandit/success":0.75}
{"step":4,"actor/gr`
	write := func(name, body string) {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read := func(name string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	write("metrics.jsonl", kept+later)
	write("metrics.jsonl.rolled-back", "{\"step\":9}\n")
	for _, n := range []string{"val-step-000000", "train-step-000001", "train-step-000002", "val-step-000002",
		"train-step-000003", "val-step-000003"} {
		write("trajectories/"+n+".jsonl", n+"\n")
	}
	write("trajectories/train-step-000003.jsonl.rolled-back", "earlier\n")

	for range 2 { // a second resume from the same step changes nothing
		train, err := rollBack(dir, 2)
		if err != nil {
			t.Fatal(err)
		}
		if got := read("metrics.jsonl"); got != kept {
			t.Fatalf("metrics.jsonl after the roll-back:\n%s\nwant\n%s", got, kept)
		}
		if got, want := read("metrics.jsonl.rolled-back"), "{\"step\":9}\n"+later+"\n"; got != want {
			t.Fatalf("metrics.jsonl.rolled-back:\n%s\nwant\n%s", got, want)
		}
		if len(train) != 2 || train[0]["step"] != 1 || !math.IsNaN(train[0]["actor/grad_norm"]) ||
			train[1]["actor/grad_norm"] != 1.5 || train[1]["rollout/in_group_std"] != 0.125 {
			t.Fatalf("kept training lines %v", train)
		}
		want := []string{"train-step-000001.jsonl", "train-step-000002.jsonl", "train-step-000003.jsonl.rolled-back",
			"val-step-000000.jsonl", "val-step-000002.jsonl", "val-step-000003.jsonl.rolled-back"}
		if got := dirNames(t, filepath.Join(dir, "trajectories")); !slices.Equal(got, want) {
			t.Fatalf("trajectories/ %v, want %v", got, want)
		}
		if got := read("trajectories/train-step-000003.jsonl.rolled-back"); got != "earlier\ntrain-step-000003\n" {
			t.Fatalf("train-step-000003.jsonl.rolled-back: %q", got)
		}
	}
	if train, err := rollBack(t.TempDir(), 2); train != nil || err != nil {
		t.Fatalf("a run folder without a record: %v, %v", train, err)
	}
}

// --resume on a run killed before its first checkpoint trains from step 0
// with the whole earlier record moved aside (step 0's validation line
// included, which the new start writes again) and the torn first
// checkpoint gone; a folder with no record at all starts as it is.
func TestResumeBeforeFirstCheckpoint(t *testing.T) {
	dir := t.TempDir()
	record := "{\"step\":0,\"timing_s/testing\":1}\n{\"step\":1,\"x\":2}\n{\"step\":2,\"x\""
	for name, body := range map[string]string{"metrics.jsonl": record, "trajectories/val-step-000000.jsonl": "v\n",
		"trajectories/train-step-000001.jsonl": "t\n", "checkpoints/step-000002.partial/actor.safetensors": "torn"} {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := &Run{Dir: dir, Trainer: &Trainer{}}
	if start, err := r.resume(); start != 0 || err != nil {
		t.Fatalf("resume: %d, %v; want step 0", start, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "metrics.jsonl")); len(b) != 0 {
		t.Fatalf("metrics.jsonl still holds %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "metrics.jsonl.rolled-back")); string(b) != record+"\n" {
		t.Fatalf("metrics.jsonl.rolled-back holds %q", b)
	}
	want := []string{"train-step-000001.jsonl.rolled-back", "val-step-000000.jsonl.rolled-back"}
	if got := dirNames(t, filepath.Join(dir, "trajectories")); !slices.Equal(got, want) {
		t.Fatalf("trajectories/ %v, want %v", got, want)
	}
	if got := dirNames(t, filepath.Join(dir, "checkpoints")); len(got) != 0 {
		t.Fatalf("checkpoints/ holds %v", got)
	}
	empty := &Run{Dir: t.TempDir(), Trainer: &Trainer{}}
	if err := os.MkdirAll(filepath.Join(empty.Dir, "checkpoints"), 0o755); err != nil { // as begin makes it
		t.Fatal(err)
	}
	if start, err := empty.resume(); start != 0 || err != nil {
		t.Fatalf("resume in an empty folder: %d, %v", start, err)
	}
}

// A checkpoint carries a manifest that its folder passes; a changed byte,
// a manifest moved to another step's folder, and a missing manifest are
// told apart.
func TestCheckpointManifest(t *testing.T) {
	buf := captureLog(t)
	tr := newTinyTrainer(t, filepath.Join(t.TempDir(), "tiny"), 2, 2, 1)
	root := filepath.Join(t.TempDir(), "checkpoints")
	ck, err := tr.SaveCheckpoint(root, 3)
	if err != nil {
		t.Fatal(err)
	}
	if got := dirNames(t, root); !slices.Equal(got, []string{latestFile, "step-000003"}) {
		t.Fatalf("checkpoints/ holds %v", got)
	}
	if b, _ := os.ReadFile(filepath.Join(root, latestFile)); string(b) != "step-000003\n" {
		t.Fatalf("latest %q", b)
	}
	var m manifest.Manifest
	b, err := os.ReadFile(filepath.Join(ck, manifest.Name))
	if err != nil || json.Unmarshal(b, &m) != nil {
		t.Fatalf("manifest.json %s, %v", b, err)
	}
	hash, _ := tr.Cfg.Hash()
	files := []string{"actor.safetensors", "actor_optim.safetensors", "critic.safetensors", "critic_optim.safetensors",
		"trainer.json"}
	var listed []string
	for n := range m.Files {
		listed = append(listed, n)
	}
	slices.Sort(listed)
	if m.Step != 3 || m.Config != hash || m.Version == "" || !slices.Equal(listed, files) {
		t.Fatalf("manifest %+v", m)
	}
	buf.Reset()
	if err := VerifyCheckpoint(ck, tr.Cfg); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "warn") {
		t.Fatalf("a sound checkpoint warned: %s", buf)
	}

	other := tr.Cfg
	other.Steps++
	if err := VerifyCheckpoint(ck, other); err != nil || !strings.Contains(buf.String(), "config differs") {
		t.Fatalf("another config: %v, log %s", err, buf)
	}

	actor := filepath.Join(ck, "actor.safetensors")
	orig, _ := os.ReadFile(actor)
	bad := slices.Clone(orig)
	bad[len(bad)/2] ^= 1
	os.WriteFile(actor, bad, 0o644)
	const skip = "; --skip-verify loads it anyway"
	want := actor + ": sha256 does not match manifest.json (the file is corrupt or was changed)" + skip
	if err := VerifyCheckpoint(ck, tr.Cfg); err == nil || err.Error() != want {
		t.Fatalf("a flipped bit: %v\nwant %s", err, want)
	}
	os.WriteFile(actor, orig, 0o644)

	moved := filepath.Join(root, "step-000004")
	if err := os.Rename(ck, moved); err != nil {
		t.Fatal(err)
	}
	want = filepath.Join(moved, "manifest.json") + ": step 3 does not match its folder step-000004" + skip
	if err := VerifyCheckpoint(moved, tr.Cfg); err == nil || err.Error() != want {
		t.Fatalf("a checkpoint under another step's name: %v\nwant %s", err, want)
	}

	if err := os.Rename(moved, ck); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(ck, manifest.Name))
	if err := VerifyCheckpoint(ck, tr.Cfg); err != nil || !strings.Contains(buf.String(), "has no manifest.json") {
		t.Fatalf("a checkpoint from before manifests: %v, log %s", err, buf)
	}
	if step, err := tr.LoadCheckpoint(ck); err != nil || step != 3 {
		t.Fatalf("loading it: step %d, %v", step, err)
	}
}

// The Echo-Trap watch replayed from the kept metrics lines fires at the
// later steps exactly as the watch that saw every step: a non-finite
// gradient norm, written as null, reads back as NaN (as 0 it would drag
// the median down and hide the spike at step 6), and the reference level
// is the first steps', not the first steps after the resume.
func TestEchoWatchReplay(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	r := &Run{Dir: dir, metrics: f}
	nan := math.NaN()
	steps := []struct{ std, ent, norm float64 }{{1, 1, 1}, {1, 1, nan}, {1, 1, nan}, {0, 0, nan}, {0, 0, 1}, {0, 0, 10}}
	for range 6 { // the EMAs fall below a tenth of the first steps' level at step 10
		steps = append(steps, struct{ std, ent, norm float64 }{0, 0, 1})
	}
	met := func(i int) map[string]float64 {
		s := steps[i]
		return map[string]float64{"step": float64(i + 1), "rollout/in_group_std": s.std, "actor/entropy_loss": s.ent,
			"actor/grad_norm": s.norm}
	}
	live := NewEchoWatch(config.Default().Echo)
	var want [][]string
	for i := range steps {
		m := met(i)
		want = append(want, live.Observe(m))
		if err := r.write(m); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	if !slices.Contains(want[5], "grad_norm_spike") || !slices.Contains(want[len(want)-1], "in_group_std_collapse") {
		t.Fatalf("the sequence does not exercise the watch: %v", want)
	}
	train, err := rollBack(dir, 4)
	if err != nil {
		t.Fatal(err)
	}
	replayed := NewEchoWatch(config.Default().Echo)
	for _, row := range train {
		replayed.Observe(row)
	}
	for i := 4; i < len(steps); i++ {
		if got := replayed.Observe(met(i)); !slices.Equal(got, want[i]) {
			t.Errorf("step %d after the replay: %v, want %v", i+1, got, want[i])
		}
	}
}
