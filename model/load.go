package model

import (
	"fmt"
	"os"
	"sort"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"

	"github.com/ragen-go/ragen/internal/torchrt"
	"github.com/ragen-go/ragen/model/safetensors"
)

// Options says where and how to hold a model.
type Options struct {
	Device gotch.Device
	DType  gotch.DType
}

// LoadCausalLM loads a HuggingFace Qwen2 or Llama checkpoint folder (config.json and
// model.safetensors or its shards). Names are bound strictly: a missing or
// unexpected tensor or a wrong shape is an error naming it.
func LoadCausalLM(dir string, opt Options) (*CausalLM, error) {
	cfg, ck, err := open(dir)
	if err != nil {
		return nil, err
	}
	defer ck.Close()
	want := expectedShapes(cfg, !cfg.TieWordEmbeddings, false)
	if err := checkNames(dir, ck, want, nil); err != nil {
		return nil, err
	}
	return newCausalLM(cfg, opt, func(name string) (*ts.Tensor, error) { return loadTensor(ck, name, want[name], opt) })
}

// LoadValueModel loads the critic from a checkpoint folder. A policy
// checkpoint (no score head) gets a new head, initialised as RAGEN's
// critic is: weight ~ N(0, 0.02²), bias 0, from seed; its lm_head is unused.
func LoadValueModel(dir string, opt Options, seed int64) (*ValueModel, error) {
	cfg, ck, err := open(dir)
	if err != nil {
		return nil, err
	}
	defer ck.Close()
	names := map[string]bool{}
	for _, n := range ck.Names() {
		names[n] = true
	}
	hasHead := names["score.weight"]
	want := expectedShapes(cfg, false, hasHead)
	optional := map[string]bool{"lm_head.weight": true}
	if err := checkNames(dir, ck, want, optional); err != nil {
		return nil, err
	}
	get := func(name string) (*ts.Tensor, error) { return loadTensor(ck, name, want[name], opt) }
	bb, err := newBackbone(cfg, opt, get)
	if err != nil {
		return nil, err
	}
	vm := &ValueModel{Backbone: bb}
	if hasHead {
		if vm.Score.Weight, err = get("score.weight"); err == nil {
			vm.Score.Bias, err = get("score.bias")
		}
	} else {
		vm.Score, err = newScoreHead(cfg, opt, seed)
	}
	if err != nil {
		bb.Drop()
		return nil, err
	}
	return vm, nil
}

func open(dir string) (Config, *safetensors.Checkpoint, error) {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return Config{}, nil, fmt.Errorf("model folder %s does not exist or is not a folder", dir)
	}
	cfg, err := LoadConfig(dir)
	if err != nil {
		return Config{}, nil, err
	}
	ck, err := safetensors.OpenDir(dir)
	if err != nil {
		return Config{}, nil, err
	}
	return cfg, ck, nil
}

// expectedShapes lists every tensor a checkpoint must hold, with its shape:
// the architecture's biases (Config.Biases) and nothing it lacks.
func expectedShapes(c Config, lmHead, scoreHead bool) map[string][]int64 {
	d, I, V := int64(c.HiddenSize), int64(c.IntermediateSize), int64(c.VocabSize)
	hd := int64(c.HeadDimension())
	q, kv := int64(c.NumAttentionHeads)*hd, int64(c.NumKeyValueHeads)*hd
	qkvBias, oBias, mlpBias := c.Biases()
	m := map[string][]int64{"model.embed_tokens.weight": {V, d}, "model.norm.weight": {d}}
	for i := range c.NumHiddenLayers {
		p := layerPrefix(i)
		linear := func(name string, out, in int64, bias bool) {
			m[p+name+".weight"] = []int64{out, in}
			if bias {
				m[p+name+".bias"] = []int64{out}
			}
		}
		m[p+"input_layernorm.weight"] = []int64{d}
		m[p+"post_attention_layernorm.weight"] = []int64{d}
		linear("self_attn.q_proj", q, d, qkvBias)
		linear("self_attn.k_proj", kv, d, qkvBias)
		linear("self_attn.v_proj", kv, d, qkvBias)
		linear("self_attn.o_proj", d, q, oBias)
		linear("mlp.gate_proj", I, d, mlpBias)
		linear("mlp.up_proj", I, d, mlpBias)
		linear("mlp.down_proj", d, I, mlpBias)
	}
	if lmHead {
		m["lm_head.weight"] = []int64{V, d}
	}
	if scoreHead {
		m["score.weight"] = []int64{1, d}
		m["score.bias"] = []int64{1}
	}
	return m
}

// checkNames compares the checkpoint's tensors with the expected set.
func checkNames(dir string, ck *safetensors.Checkpoint, want map[string][]int64, optional map[string]bool) error {
	have := map[string]bool{}
	var extra []string
	for _, n := range ck.Names() {
		have[n] = true
		if _, ok := want[n]; !ok && !optional[n] {
			extra = append(extra, n)
		}
	}
	var missing []string
	for n := range want {
		if !have[n] {
			missing = append(missing, n)
		}
	}
	sort.Strings(missing)
	switch {
	case len(missing) > 0:
		return fmt.Errorf("checkpoint %s lacks tensor %s%s", dir, missing[0], more(len(missing)))
	case len(extra) > 0:
		hint := ""
		if extra[0] == "lm_head.weight" {
			hint = " (config.json says tie_word_embeddings is true)"
		}
		return fmt.Errorf("checkpoint %s has unexpected tensor %s%s%s", dir, extra[0], hint, more(len(extra)))
	}
	return nil
}

func more(n int) string {
	if n > 1 {
		return fmt.Sprintf(" and %d more", n-1)
	}
	return ""
}

// loadTensor copies one stored tensor into libtorch, converting it to the
// model's dtype and device. The bytes come straight from the file mapping,
// so a checkpoint is never held twice in memory; only one tensor at a time
// is in transit.
func loadTensor(ck *safetensors.Checkpoint, name string, shape []int64, opt Options) (*ts.Tensor, error) {
	info, err := ck.Info(name)
	if err != nil {
		return nil, err
	}
	if !equalShape(info.Shape, shape) {
		return nil, fmt.Errorf("tensor %s has shape %v, the config implies %v", name, info.Shape, shape)
	}
	dt, err := fromSafetensors(info.DType)
	if err != nil {
		return nil, fmt.Errorf("tensor %s: %w", name, err)
	}
	data, err := ck.Bytes(name)
	if err != nil {
		return nil, err
	}
	t, err := torchrt.TensorFromBytes(data, shape, dt)
	if err != nil {
		return nil, fmt.Errorf("tensor %s: %w", name, err)
	}
	if dt != opt.DType || opt.Device.IsCuda() {
		moved, err := t.ToDevice(opt.Device, opt.DType, false, false, true)
		if err != nil {
			return nil, fmt.Errorf("tensor %s: moving to %s/%v: %w", name, torchrt.DeviceName(opt.Device), opt.DType, err)
		}
		t = moved
	}
	return t, nil
}

// CountParams is the number of weights in params.
func CountParams(params []Param) int64 {
	var n int64
	for _, p := range params {
		n += numel(size(p.T))
	}
	return n
}

func numel(shape []int64) int64 {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	return n
}

func equalShape(a, b []int64) bool {
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
