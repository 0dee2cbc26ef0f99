package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/tokenizer"
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
		VocabSize: 64, MaxPositionEmbeddings: 128, TieWordEmbeddings: true, HiddenAct: "silu", EOSTokenID: model.TokenIDs{eos},
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
	// A config.json that declares a billion layers is refused at once,
	// before the loader lists a tensor per layer.
	huge := filepath.Join(t.TempDir(), "huge")
	os.Mkdir(huge, 0o755)
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		if e.Name() == "config.json" {
			var cfg map[string]any
			json.Unmarshal(b, &cfg)
			cfg["num_hidden_layers"] = 1000000000
			b, _ = json.Marshal(cfg)
		}
		os.WriteFile(filepath.Join(huge, e.Name()), b, 0o644)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--prompt-ids", "1"}, "--model is required"},
		{[]string{"--model", dir}, "exactly one of --prompt and --prompt-ids"},
		{[]string{"--model", huge, "--prompt-ids", "1"}, "ragen generate: " + filepath.Join(huge, "config.json") + ": num_hidden_layers 1000000000 is more than this implementation accepts (at most 1024)\n"},
		{[]string{"--model", dir, "--prompt", "x", "--prompt-ids", "1"}, "exactly one of"},
		{[]string{"--model", dir, "--prompt-ids", "1,x"}, `--prompt-ids: "x" is not a token id`},
		{[]string{"--model", dir, "--prompt-ids", "1", "--prompt-ids", "2,,3"}, `--prompt-ids[1]: "" is not a token id`},
		{[]string{"--model", dir, "--prompt-ids", "1", "--prompt", "x"}, "not both: a batch is all text or all ids (got 1 --prompt and 1 --prompt-ids)"},
		{[]string{"--model", dir, "--prompt-ids", "1", "--prompt-ids", "5,99"}, "prompt 1: token id 99 is outside the vocabulary"},
		{[]string{"--model", dir, "--prompt-ids", "1", "--stop", "x"}, "--stop needs a tokenizer"},
		{[]string{"--model", withTok, "--prompt", "Hello", "--prompt", ""}, "--prompt[1] is empty"},
		{[]string{"--model", filepath.Join(dir, "nope"), "--prompt-ids", "1"}, "nope: no such folder or file"},
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

// A batch is generated together, left-padded; each prompt's greedy output
// must be what it gets alone (padding must not leak into attention), and
// the JSON lines come in the order of the flags.
func TestGenerateBatch(t *testing.T) {
	dir := tinyCheckpoint(t)
	prompts := []string{"5,9,12", "7", "3,1,4,1,5,9,2,6", "40,41"}
	args := []string{"--model", dir, "--max-new-tokens", "7", "--json"}
	for _, p := range prompts {
		args = append(args, "--prompt-ids", p)
	}
	code, out, errOut := runGen(args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(prompts) {
		t.Fatalf("%d prompts gave %d lines:\n%s", len(prompts), len(lines), out)
	}
	for i, p := range prompts {
		var got, alone generateOutput
		if err := json.Unmarshal([]byte(lines[i]), &got); err != nil {
			t.Fatalf("line %d %q: %v", i, lines[i], err)
		}
		_, single, _ := runGen("--model", dir, "--max-new-tokens", "7", "--json", "--prompt-ids", p)
		if err := json.Unmarshal([]byte(single), &alone); err != nil {
			t.Fatalf("prompt %s alone: %q: %v", p, single, err)
		}
		if want, _ := parseIDs(p); !equalInts(got.PromptIDs, want) {
			t.Errorf("line %d has prompt_ids %v, want %v (out of order?)", i, got.PromptIDs, want)
		}
		if !equalInts(got.IDs, alone.IDs) || got.Reason != alone.Reason {
			t.Errorf("prompt %s: batched ids %v (%s), alone %v (%s)", p, got.IDs, got.Reason, alone.IDs, alone.Reason)
			continue
		}
		for j := range got.LogProbs {
			if d := got.LogProbs[j] - alone.LogProbs[j]; d > 1e-4 || d < -1e-4 {
				t.Errorf("prompt %s token %d: batched log-prob %v, alone %v", p, j, got.LogProbs[j], alone.LogProbs[j])
			}
		}
	}
	// Without --json and a tokenizer: one line of ids per prompt, in order.
	code, plain, _ := runGen(append([]string{"--model", dir, "--max-new-tokens", "7"}, args[5:]...)...)
	var want strings.Builder
	for _, l := range lines {
		var g generateOutput
		json.Unmarshal([]byte(l), &g)
		want.WriteString(joinInts(g.IDs) + "\n")
	}
	if code != 0 || plain != want.String() {
		t.Fatalf("text output %q, want %q", plain, want.String())
	}
}

// Text prompts in a batch: --chat renders each, stop strings apply per
// sequence, and without --json each text follows a header naming its prompt.
func TestGenerateBatchText(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "qwen-vocab")
	tk := loadTestTokenizer(t)
	eos := 151645
	cfg := model.Config{
		ModelType: "qwen2", HiddenSize: 16, IntermediateSize: 32, NumHiddenLayers: 1,
		NumAttentionHeads: 2, NumKeyValueHeads: 1, RopeTheta: 1e6, RMSNormEps: 1e-6,
		VocabSize: tk.VocabSize(), MaxPositionEmbeddings: 256, TieWordEmbeddings: true, HiddenAct: "silu", EOSTokenID: model.TokenIDs{eos},
	}
	if err := model.WriteRandomCheckpoint(dir, cfg, model.InitOptions{Seed: 5, Std: 0.5, BiasStd: 0.1}); err != nil {
		t.Fatal(err)
	}
	if err := model.CopyTokenizerFiles(filepath.Dir(tokenizertest.Path(t)), dir); err != nil {
		t.Fatal(err)
	}

	users := []string{"Hi", "Say something longer, please."}
	args := []string{"--model", dir, "--chat", "--max-new-tokens", "5"}
	for _, u := range users {
		args = append(args, "--prompt", u)
	}
	code, out, errOut := runGen(append(args, "--json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(users) {
		t.Fatalf("%d prompts gave %d lines:\n%s", len(users), len(lines), out)
	}
	var gens []generateOutput
	for i, u := range users {
		var g generateOutput
		if err := json.Unmarshal([]byte(lines[i]), &g); err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		text, _ := tk.RenderChat([]tokenizer.Message{{Role: "user", Content: u}}, true)
		if !equalInts(g.PromptIDs, tk.Encode(text)) {
			t.Errorf("prompt %d: prompt_ids %v are not the chat rendering of %q", i, g.PromptIDs, u)
		}
		if dec, _ := tk.Decode(g.IDs); g.Text != dec || len(g.IDs) == 0 {
			t.Errorf("prompt %d: text %q, decoded ids %q", i, g.Text, dec)
		}
		gens = append(gens, g)
	}
	code, plain, _ := runGen(args...)
	want := "==> prompt 0 <==\n" + gens[0].Text + "\n==> prompt 1 <==\n" + gens[1].Text + "\n"
	if code != 0 || plain != want {
		t.Errorf("text output %q, want %q", plain, want)
	}
	// A stop string taken from the second prompt's output stops only it.
	first, _ := tk.Decode(gens[1].IDs[:1])
	if len(gens[1].IDs) < 2 || first == "" {
		t.Fatalf("second generation %v is too short to test --stop (change the seed)", gens[1].IDs)
	}
	code, out, _ = runGen(append(args, "--json", "--stop", first)...)
	lines = strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	var g1 generateOutput
	if code != 0 || len(lines) != 2 || json.Unmarshal([]byte(lines[1]), &g1) != nil {
		t.Fatalf("with --stop: exit %d, %q", code, out)
	}
	if g1.Reason != "stop" || !strings.HasSuffix(g1.Text, first) {
		t.Errorf("with --stop %q: %+v, want it stopped after its first token", first, g1)
	}
}

func loadTestTokenizer(t *testing.T) *tokenizer.Tokenizer {
	t.Helper()
	tk, err := tokenizer.Load(tokenizertest.Path(t))
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
