package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ragen-go/ragen/model/safetensors"
)

// A LoRA run end to end: the checkpoints hold the adapters and the
// critic's head alone, export/ the merged policy (its adapted matrices
// moved, the rest the base's bit for bit) and export-adapter/ the PEFT
// folder, which ragen generate --adapter applies over the base as the
// merged export decodes; a run killed after step 3 and resumed from step
// 2's checkpoint records what a straight run records.
func TestTrainLoRA(t *testing.T) {
	base := policyCheckpoint(t)
	train := func(out string, extra ...string) {
		t.Helper()
		args := append([]string{"--config", "../../configs/smoke.yaml", "--model", base, "--out", out,
			"--set", "lora.rank=4", "--set", "lora.alpha=8", "--set", "lora.targets=[q_proj, v_proj, down_proj]",
			"--set", "actor.lr=1e-2", "--set", "algorithm.use_kl_loss=true", "--set", "algorithm.kl_loss_coef=0.1"},
			extra...)
		if code, errOut := runTrainCmd(args...); code != 0 {
			t.Fatalf("ragen train %v: exit %d: %s", extra, code, errOut)
		}
	}
	straight := filepath.Join(t.TempDir(), "straight")
	train(straight, "--set", "steps=3")
	// Killed after step 3's record, before its checkpoint: resumed from
	// step 2's.
	resumed := filepath.Join(t.TempDir(), "resumed")
	train(resumed, "--set", "steps=3", "--set", "save_every=1")
	ck := filepath.Join(resumed, "checkpoints")
	if err := os.RemoveAll(filepath.Join(ck, "step-000003")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ck, "latest"), []byte("step-000002\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	train(resumed, "--set", "steps=3", "--set", "save_every=1", "--resume")
	want, got := metricRows(t, filepath.Join(straight, "metrics.jsonl")), metricRows(t, filepath.Join(resumed, "metrics.jsonl"))
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the resumed LoRA run's metrics differ from the straight run's:\n%v\n%v", got, want)
	}

	names := func(path string) []string {
		t.Helper()
		f, err := safetensors.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		return f.Names()
	}
	// One layer, three targets: an A and a B each; the critic adds its head.
	if n := names(filepath.Join(straight, "checkpoints", "step-000003", "actor.safetensors")); len(n) != 6 {
		t.Fatalf("the actor's checkpoint holds %v", n)
	}
	if n := names(filepath.Join(straight, "checkpoints", "step-000003", "critic.safetensors")); len(n) != 8 {
		t.Fatalf("the critic's checkpoint holds %v", n)
	}
	if n := names(filepath.Join(straight, "export-adapter", "adapter_model.safetensors")); len(n) != 6 ||
		n[0] != "base_model.model.model.layers.0.mlp.down_proj.lora_A.weight" {
		t.Fatalf("export-adapter/adapter_model.safetensors holds %v", n)
	}
	for _, f := range []string{"adapter_config.json", "manifest.json"} {
		if _, err := os.Stat(filepath.Join(straight, "export-adapter", f)); err != nil {
			t.Errorf("export-adapter/ lacks %s", f)
		}
	}
	before, after := readTensors(t, filepath.Join(base, "model.safetensors")),
		readTensors(t, filepath.Join(straight, "export", "model.safetensors"))
	adapted := []string{"model.layers.0.self_attn.q_proj.weight", "model.layers.0.self_attn.v_proj.weight",
		"model.layers.0.mlp.down_proj.weight"}
	for name, w := range before {
		if moved := w != after[name]; moved != slices.Contains(adapted, name) {
			t.Errorf("export: %s moved %v, want %v", name, moved, !moved)
		}
	}

	// The base with --adapter (unmerged) decodes as the merged export does.
	gen := func(args ...string) []generateOutput {
		t.Helper()
		var o, e strings.Builder
		args = append([]string{"generate", "--json", "--max-new-tokens", "8", "--prompt-ids", "5,9,12,3",
			"--prompt-ids", "17,2"}, args...)
		if code := runMain(args, &o, &e); code != 0 {
			t.Fatalf("ragen %v: exit %d: %s", args, code, e.String())
		}
		var out []generateOutput
		dec := json.NewDecoder(strings.NewReader(o.String()))
		for dec.More() {
			var g generateOutput
			if err := dec.Decode(&g); err != nil {
				t.Fatal(err)
			}
			out = append(out, g)
		}
		return out
	}
	unmerged := gen("--model", base, "--adapter", filepath.Join(straight, "export-adapter"))
	merged := gen("--model", filepath.Join(straight, "export"))
	for i := range merged {
		if !slices.Equal(unmerged[i].IDs, merged[i].IDs) {
			t.Fatalf("prompt %d: ids %v with --adapter, %v merged", i, unmerged[i].IDs, merged[i].IDs)
		}
		for j, lp := range merged[i].LogProbs {
			if d := math.Abs(float64(lp - unmerged[i].LogProbs[j])); d > 1e-4 {
				t.Fatalf("prompt %d, token %d: log-prob %v with --adapter, %v merged", i, j, unmerged[i].LogProbs[j], lp)
			}
		}
	}
}

// readTensors reads every tensor of a safetensors file as raw bytes.
func readTensors(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := safetensors.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	for _, n := range f.Names() {
		b, err := f.Bytes(n)
		if err != nil {
			t.Fatal(err)
		}
		out[n] = string(b)
	}
	return out
}
