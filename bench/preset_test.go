package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/tokenizer"
	"github.com/ragen-go/ragen/tokenizer/tokenizertest"
)

// A whole-vocabulary preset is a checkpoint with the base tokenizer's
// files and its full vocabulary, which loads back; a tokenizer path that
// is not a tokenizer.json is refused by name.
func TestWholeVocabularyPreset(t *testing.T) {
	p := Preset{Name: "small-whole", shape: qwen2(32, 48, 1, 4, 2, 256)}
	dir := filepath.Join(t.TempDir(), p.Name)
	tokPath := tokenizertest.Path(t)
	if err := p.Build(dir, tokPath, 1); err != nil {
		t.Fatal(err)
	}
	base, err := tokenizer.Load(tokPath)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := model.LoadConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	if tok.VocabSize() != base.VocabSize() || cfg.VocabSize != base.VocabSize() {
		t.Fatalf("vocabulary: tokenizer %d, config %d; want the base's %d", tok.VocabSize(), cfg.VocabSize, base.VocabSize())
	}
	odd := filepath.Join(t.TempDir(), "qwen.json")
	if err := os.WriteFile(odd, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := p.Build(filepath.Join(t.TempDir(), "x"), odd, 1); err == nil || !strings.Contains(err.Error(), "qwen.json") {
		t.Fatalf("a tokenizer file not named tokenizer.json: error %v", err)
	}
}
