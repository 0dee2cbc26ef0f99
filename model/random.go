package model

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"

	"github.com/ragen-go/ragen/internal/torchrt"
	"github.com/ragen-go/ragen/model/safetensors"
)

// InitOptions controls a freshly initialised checkpoint.
type InitOptions struct {
	Seed       uint64  // everything is drawn from this seed
	Std        float64 // weights ~ N(0, Std²); 0 = 0.02, HuggingFace's initializer_range
	BiasStd    float64 // q/k/v biases ~ N(0, BiasStd²); 0 = zeros
	NormNoise  float64 // norm weights = 1 + N(0, NormNoise²); 0 = ones
	ShardBytes int64   // shard above this size; 0 = one file
}

// WriteRandomCheckpoint writes a new Qwen2 checkpoint in HuggingFace's exact
// layout (config.json, generation_config.json, fp32 safetensors, sharded
// with an index when asked), deterministically from o.Seed. It is how the
// built-in small model starts, and what tests load.
func WriteRandomCheckpoint(dir string, cfg Config, o InitOptions) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if o.Std == 0 {
		o.Std = 0.02
	}
	cfg.TorchDtype = "float32"
	cfg.Architectures = []string{cfg.Architecture()}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	shapes := expectedShapes(cfg, !cfg.TieWordEmbeddings, false)
	names := make([]string, 0, len(shapes))
	for n := range shapes {
		names = append(names, n)
	}
	sort.Strings(names)
	rng := rand.New(rand.NewPCG(o.Seed, 0x5eed))
	tensors := make([]safetensors.Tensor, 0, len(names))
	for _, n := range names {
		vals := make([]float32, numel(shapes[n]))
		switch {
		case strings.HasSuffix(n, "norm.weight"):
			for i := range vals {
				vals[i] = float32(1 + o.NormNoise*rng.NormFloat64())
			}
		case strings.HasSuffix(n, ".bias"):
			for i := range vals {
				vals[i] = float32(o.BiasStd * rng.NormFloat64())
			}
		default:
			for i := range vals {
				vals[i] = float32(o.Std * rng.NormFloat64())
			}
		}
		data, err := safetensors.EncodeFloat32(safetensors.F32, vals)
		if err != nil {
			return err
		}
		tensors = append(tensors, safetensors.Tensor{Name: n, DType: safetensors.F32, Shape: shapes[n], Data: data})
	}
	shard := o.ShardBytes
	if shard == 0 {
		shard = 1 << 62
	}
	if err := safetensors.WriteSharded(dir, tensors, shard, map[string]string{"format": "pt"}); err != nil {
		return fmt.Errorf("writing %s: %w", dir, err)
	}
	if err := writeJSON(filepath.Join(dir, "config.json"), cfg); err != nil {
		return err
	}
	gen := map[string]any{"_from_model_config": true}
	if cfg.EOSTokenID != nil {
		gen["eos_token_id"] = cfg.EOSTokenID
	}
	return writeJSON(filepath.Join(dir, "generation_config.json"), gen)
}

// RandomCausalLM makes a model of cfg with random weights drawn in
// libtorch from seed: N(0, 0.02²) matrices, unit norms, zero biases, with
// no file written or read. It is for benchmarks at a real model's shapes
// (Qwen2.5-0.5B's 2 GB in fp32), whose memory a checkpoint built in Go
// first would blur; tests use WriteRandomCheckpoint.
func RandomCausalLM(cfg Config, opt Options, seed int64) (m *CausalLM, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	defer torchrt.Catch(&err, "making a random model")
	torchrt.ManualSeed(seed)
	shapes := expectedShapes(cfg, !cfg.TieWordEmbeddings, false)
	return newCausalLM(cfg, opt, func(name string) (*ts.Tensor, error) {
		sh := shapes[name]
		switch {
		case strings.HasSuffix(name, "norm.weight"):
			return ts.Ones(sh, opt.DType, opt.Device)
		case strings.HasSuffix(name, ".bias"):
			return ts.Zeros(sh, opt.DType, opt.Device)
		}
		w := must(ts.Randn(sh, gotch.Float, gotch.CPU))
		check(w.MulScalar_(ts.FloatScalar(0.02))) // in place: no freed copy left in the heap
		if opt.DType == gotch.Float && !opt.Device.IsCuda() {
			return w, nil
		}
		return w.ToDevice(opt.Device, opt.DType, false, false, true)
	})
}
