package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/tokenizer/tokenizertest"
)

// tinyCheckpoint writes a small random Qwen2 checkpoint in HuggingFace's layout.
func tinyCheckpoint(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tiny")
	eos := 1
	cfg := model.Config{
		ModelType: "qwen2", HiddenSize: 32, IntermediateSize: 48, NumHiddenLayers: 2,
		NumAttentionHeads: 4, NumKeyValueHeads: 2, RopeTheta: 10000, RMSNormEps: 1e-6,
		VocabSize: 64, MaxPositionEmbeddings: 128, TieWordEmbeddings: true, HiddenAct: "silu", EOSTokenID: &eos,
	}
	if err := model.WriteRandomCheckpoint(dir, cfg, model.InitOptions{Seed: 3, Std: 0.2, BiasStd: 0.1}); err != nil {
		t.Fatal(err)
	}
	return dir
}

func runGen(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := runMain(append([]string{"generate"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

func TestGenerateJSON(t *testing.T) {
	dir := tinyCheckpoint(t)
	args := []string{"--model", dir, "--prompt-ids", "5,9,12", "--max-new-tokens", "6", "--json"}
	code, out, errOut := runGen(args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var g generateOutput
	if err := json.Unmarshal([]byte(out), &g); err != nil {
		t.Fatalf("output %q is not one JSON object: %v", out, err)
	}
	if len(g.IDs) == 0 || len(g.IDs) > 6 || len(g.LogProbs) != len(g.IDs) {
		t.Fatalf("got %+v, want up to 6 ids with one log-prob each", g)
	}
	for i, lp := range g.LogProbs {
		if lp > 0 || g.IDs[i] < 0 || g.IDs[i] >= 64 {
			t.Fatalf("id %d with log-prob %v is not a valid greedy token", g.IDs[i], lp)
		}
	}
	if _, again, _ := runGen(args...); again != out {
		t.Fatalf("greedy generation differs between runs:\n%s\n%s", out, again)
	}
	// Without a tokenizer the text output is the ids.
	code, out, _ = runGen("--model", dir, "--prompt-ids", "5,9,12", "--max-new-tokens", "6")
	if want := joinInts(g.IDs) + "\n"; code != 0 || out != want {
		t.Fatalf("text output %q, want %q", out, want)
	}
}

func TestGenerateErrors(t *testing.T) {
	dir := tinyCheckpoint(t)
	withTok := t.TempDir()
	data, err := os.ReadFile(tokenizertest.Path(t))
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		os.WriteFile(filepath.Join(withTok, e.Name()), b, 0o644)
	}
	os.WriteFile(filepath.Join(withTok, "tokenizer.json"), data, 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--prompt-ids", "1"}, "--model is required"},
		{[]string{"--model", dir}, "exactly one of --prompt and --prompt-ids"},
		{[]string{"--model", dir, "--prompt", "x", "--prompt-ids", "1"}, "exactly one of"},
		{[]string{"--model", dir, "--prompt-ids", "1,x"}, `--prompt-ids: "x" is not a token id`},
		{[]string{"--model", filepath.Join(dir, "nope"), "--prompt-ids", "1"}, "does not exist"},
		{[]string{"--model", dir, "--prompt-ids", "1,99"}, "token id 99 is outside the vocabulary"},
		{[]string{"--model", dir, "--prompt-ids", "1", "--temperature", "-1"}, "temperature -1"},
		{[]string{"--model", dir, "--prompt-ids", "1", "--dtype", "int4"}, `--dtype: dtype "int4"`},
		{[]string{"--model", dir, "--prompt-ids", "1", "--device", "cuda:7"}, "cuda:7"},
		{[]string{"--model", dir, "--prompt", "Hello"}, "tokenizer"},
		// The real Qwen vocabulary encodes "Hello" to 9707, outside this model's 64 ids.
		{[]string{"--model", withTok, "--prompt", "Hello"}, "token id 9707 is outside the vocabulary"},
	} {
		code, _, errOut := runGen(tc.args...)
		if code == 0 || !strings.Contains(errOut, tc.want) {
			t.Errorf("ragen generate %v: exit %d, stderr %q; want an error containing %q", tc.args, code, errOut, tc.want)
		}
	}
}
