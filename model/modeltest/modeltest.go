// Package modeltest writes small random Qwen2 checkpoints for tests of the
// packages above model (rollouts, training, the CLI).
package modeltest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sugarme/gotch"

	"github.com/ragen-go/ragen/model"
)

// TinyPolicy writes, into dir, a one-layer Qwen2 (width 16, GQA 2/1 heads)
// over a vocabulary of vocab tokens with <|im_end|> (151645) as eos, in
// HuggingFace's layout; with tokenizerFrom it copies that folder's
// tokenizer files too.
func TinyPolicy(t testing.TB, dir string, vocab int, seed uint64, tokenizerFrom string) {
	t.Helper()
	eos := 151645
	cfg := model.Config{
		ModelType: "qwen2", HiddenSize: 16, IntermediateSize: 32, NumHiddenLayers: 1,
		NumAttentionHeads: 2, NumKeyValueHeads: 1, RopeTheta: 1e6, RMSNormEps: 1e-6,
		VocabSize: vocab, MaxPositionEmbeddings: 4096, TieWordEmbeddings: true, HiddenAct: "silu", EOSTokenID: model.TokenIDs{eos},
	}
	if err := model.WriteRandomCheckpoint(dir, cfg, model.InitOptions{Seed: seed}); err != nil {
		t.Fatal(err)
	}
	if tokenizerFrom == "" {
		return
	}
	for _, f := range []string{"tokenizer.json", "tokenizer_config.json"} {
		b, err := os.ReadFile(filepath.Join(tokenizerFrom, f))
		if err != nil {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// LoadTinyPolicy writes TinyPolicy (vocab tokens, seed) into a temporary
// folder and loads it in fp32 on the CPU; it is dropped when the test ends.
func LoadTinyPolicy(t testing.TB, vocab int, seed uint64) *model.CausalLM {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tiny")
	TinyPolicy(t, dir, vocab, seed, "")
	m, err := model.LoadCausalLM(dir, model.Options{Device: gotch.CPU, DType: gotch.Float})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Drop)
	return m
}
