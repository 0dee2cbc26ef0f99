package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/starpo/config"
	"github.com/ragen-go/ragen/starpo/sft"
	"github.com/ragen-go/ragen/tokenizer"
)

// Preset is a model shape the benchmark builds with random weights, so
// that it needs no download.
type Preset struct {
	Name    string
	Summary string
	// Reduced: the vocabulary is Qwen's reduced to the Sokoban rollout's
	// tokens (as the built-in model's is); otherwise the whole Qwen
	// tokenizer, and the vocabulary is its size.
	Reduced bool
	shape   model.Config // every field but the vocabulary and eos
}

func qwen2(d, inter, layers, heads, kv, maxPos int) model.Config {
	return model.Config{
		ModelType: "qwen2", HiddenSize: d, IntermediateSize: inter, NumHiddenLayers: layers,
		NumAttentionHeads: heads, NumKeyValueHeads: kv, RopeTheta: 1e6, RMSNormEps: 1e-6,
		MaxPositionEmbeddings: maxPos, TieWordEmbeddings: true, HiddenAct: "silu",
	}
}

// Presets are the shapes --preset names.
var Presets = map[string]Preset{
	"50m": {Name: "50m", Reduced: true, shape: qwen2(512, 2304, 12, 8, 2, 4096),
		Summary: "~50M parameters (d 512, 12 layers, 8/2 heads, MLP 2304) on Qwen's vocabulary reduced to Sokoban's tokens: CI-sized"},
	"qwen2.5-0.5b": {Name: "qwen2.5-0.5b", shape: qwen2(896, 4864, 24, 14, 2, 32768),
		Summary: "Qwen2.5-0.5B's shapes (d 896, 24 layers, 14/2 heads, MLP 4864, tied) with random weights on the whole Qwen tokenizer"},
	"tiny": {Name: "tiny", Reduced: true, shape: qwen2(64, 128, 2, 4, 2, 4096),
		Summary: "a 2-layer d-64 model for tests"},
}

// PresetNames lists the presets, sorted.
func PresetNames() []string {
	var names []string
	for n := range Presets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// LookupPreset finds a preset by name.
func LookupPreset(name string) (Preset, error) {
	p, ok := Presets[name]
	if !ok {
		return Preset{}, fmt.Errorf("preset %q is not one of %s", name, strings.Join(PresetNames(), ", "))
	}
	return p, nil
}

// Build writes the preset's checkpoint into dir (config.json, fp32
// safetensors from seed, tokenizer files) from the base Qwen tokenizer at
// tokPath.
func (p Preset) Build(dir, tokPath string, seed uint64) error {
	base, err := tokenizer.Load(tokPath)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tok := base
	if p.Reduced {
		texts, err := sokobanTexts(base)
		if err != nil {
			return err
		}
		if _, err := base.Reduce(texts, dir); err != nil {
			return err
		}
		if tok, err = tokenizer.Load(dir); err != nil {
			return err
		}
	} else if err := copyTokenizer(tokPath, dir); err != nil {
		return err
	}
	cfg := p.shape
	// The vocabulary is the tokenizer's size: Qwen2.5 pads its embedding
	// to 151,936 rows for GPU kernels, but a random model would sample the
	// padding ids, which no tokenizer can decode.
	cfg.VocabSize = tok.VocabSize()
	eos := tok.EOS()
	cfg.EOSTokenID = model.TokenIDs{eos}
	return model.WriteRandomCheckpoint(dir, cfg, model.InitOptions{Seed: seed})
}

// sokobanTexts are expert Sokoban episodes rendered as rollouts, whose
// tokens make the reduced vocabulary.
func sokobanTexts(base *tokenizer.Tokenizer) ([]string, error) {
	cfg := config.Default()
	cfg.Train = config.Envs{Tags: []string{"SimpleSokoban"}, NGroups: []int{1}, EnvGroups: 1, GroupSize: 1}
	return sft.DomainTexts(cfg, base, 256)
}

// copyTokenizer copies the tokenizer at tokPath (a tokenizer.json, or
// its folder) and the tokenizer files beside it into dir.
func copyTokenizer(tokPath, dir string) error {
	if st, err := os.Stat(tokPath); err == nil && st.IsDir() {
		return model.CopyTokenizerFiles(tokPath, dir)
	}
	if filepath.Base(tokPath) != "tokenizer.json" {
		return fmt.Errorf("--tokenizer %s: a whole-vocabulary preset takes a file named tokenizer.json, or its folder", tokPath)
	}
	return model.CopyTokenizerFiles(filepath.Dir(tokPath), dir)
}
