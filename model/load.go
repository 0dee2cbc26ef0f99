package model

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"unsafe"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"

	"github.com/ragen-go/ragen/internal/torchrt"
	"github.com/ragen-go/ragen/model/ggufmodel"
	"github.com/ragen-go/ragen/model/safetensors"
)

// Options says where and how to hold a model.
type Options struct {
	Device gotch.Device
	DType  gotch.DType
}

// LoadCausalLM loads a Qwen2 or Llama model: a HuggingFace checkpoint
// folder (config.json and model.safetensors or its shards) or a GGUF file
// (ggufmodel). Names are bound strictly: a missing or unexpected tensor or
// a wrong shape is an error naming it.
func LoadCausalLM(path string, opt Options) (*CausalLM, error) {
	cfg, src, err := open(path)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	if err := checkLayerCount(path, cfg, src.Names()); err != nil {
		return nil, err
	}
	want := expectedShapes(cfg, !cfg.TieWordEmbeddings, false)
	if err := checkTensors(path, src, want, nil); err != nil {
		return nil, err
	}
	return newCausalLM(cfg, opt, func(name string) (*ts.Tensor, error) { return src.load(name, want[name], opt) })
}

// LoadValueModel loads the critic from a checkpoint folder or GGUF file. A
// policy checkpoint (no score head) gets a new head, initialised as RAGEN's
// critic is: weight ~ N(0, 0.02²), bias 0, from seed; its lm_head is unused.
func LoadValueModel(path string, opt Options, seed int64) (*ValueModel, error) {
	cfg, src, err := open(path)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	names := src.Names()
	if err := checkLayerCount(path, cfg, names); err != nil {
		return nil, err
	}
	hasHead := slices.Contains(names, "score.weight")
	want := expectedShapes(cfg, false, hasHead)
	optional := map[string]bool{"lm_head.weight": true}
	if err := checkTensors(path, src, want, optional); err != nil {
		return nil, err
	}
	get := func(name string) (*ts.Tensor, error) { return src.load(name, want[name], opt) }
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

// IsGGUF says whether path names a GGUF file rather than a checkpoint
// folder.
func IsGGUF(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir() && strings.EqualFold(filepath.Ext(path), ".gguf")
}

// OpenConfig reads the config of the model at path, a checkpoint folder or
// a GGUF file, without loading its weights.
func OpenConfig(path string) (Config, error) {
	cfg, src, err := open(path)
	if err != nil {
		return Config{}, err
	}
	src.Close()
	return cfg, nil
}

func open(path string) (Config, weights, error) {
	if IsGGUF(path) {
		g, err := ggufmodel.Open(path)
		if err != nil {
			return Config{}, nil, err
		}
		data, err := g.ConfigJSON()
		if err == nil {
			var cfg Config
			if cfg, err = ParseConfig(data); err == nil {
				return cfg, ggufWeights{g}, nil
			}
			err = fmt.Errorf("gguf %s: %w", path, err)
		}
		g.Close()
		return Config{}, nil, err
	}
	if st, err := os.Stat(path); err != nil || !st.IsDir() {
		return Config{}, nil, fmt.Errorf("model %s is neither a checkpoint folder nor a .gguf file", path)
	}
	cfg, err := LoadConfig(path)
	if err != nil {
		return Config{}, nil, err
	}
	ck, err := safetensors.OpenDir(path)
	if err != nil {
		return Config{}, nil, err
	}
	return cfg, safetensorsWeights{ck}, nil
}

// weights is where a model's tensors come from, by HuggingFace name.
type weights interface {
	Names() []string
	// shape is the stored shape of the tensor called name, or false.
	shape(name string) ([]int64, bool)
	// load copies one tensor into libtorch as shape, in opt's dtype and
	// on its device.
	load(name string, shape []int64, opt Options) (*ts.Tensor, error)
	Close() error
}

// safetensorsWeights are a checkpoint folder's.
type safetensorsWeights struct{ *safetensors.Checkpoint }

func (w safetensorsWeights) shape(name string) ([]int64, bool) {
	info, err := w.Info(name)
	return info.Shape, err == nil
}

// load copies one stored tensor into libtorch, converting it to the
// model's dtype and device. The bytes come straight from the file mapping,
// so a checkpoint is never held twice in memory; only one tensor at a time
// is in transit.
func (w safetensorsWeights) load(name string, shape []int64, opt Options) (*ts.Tensor, error) {
	info, err := w.Info(name)
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
	data, err := w.Bytes(name)
	if err != nil {
		return nil, err
	}
	return place(name, data, shape, dt, opt)
}

// ggufWeights are a GGUF file's, dequantized one tensor at a time.
type ggufWeights struct{ *ggufmodel.Model }

func (w ggufWeights) shape(name string) ([]int64, bool) { return w.Shape(name) }

func (w ggufWeights) load(name string, shape []int64, opt Options) (*ts.Tensor, error) {
	got, _ := w.Shape(name)
	if !equalShape(got, shape) {
		return nil, fmt.Errorf("gguf %s: tensor %s has shape %v, the config implies %v", w.File.Name, name, got, shape)
	}
	data, err := w.Float32(name)
	if err != nil {
		return nil, err
	}
	return place(name, float32Bytes(data), shape, gotch.Float, opt)
}

// place makes a libtorch tensor of data (dtype dt) in opt's dtype and
// device.
func place(name string, data []byte, shape []int64, dt gotch.DType, opt Options) (*ts.Tensor, error) {
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

// float32Bytes views v's memory as bytes (little-endian, as libtorch
// reads them on every platform it runs on here).
func float32Bytes(v []float32) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v))
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

// checkLayerCount compares num_hidden_layers with the layers the tensor
// names cover (model.layers.N.*), before expectedShapes lists a name for
// every declared layer.
func checkLayerCount(path string, cfg Config, names []string) error {
	seen := map[string]bool{}
	for _, n := range names {
		if rest, ok := strings.CutPrefix(n, "model.layers."); ok {
			if i, _, ok := strings.Cut(rest, "."); ok {
				seen[i] = true // a malformed index is checkNames' to report
			}
		}
	}
	if len(seen) != cfg.NumHiddenLayers {
		if !IsGGUF(path) {
			path = filepath.Join(path, "config.json")
		}
		return fmt.Errorf("%s: num_hidden_layers %d does not match the checkpoint's tensors, which hold %d layers",
			path, cfg.NumHiddenLayers, len(seen))
	}
	return nil
}

// checkTensors checks the names (checkNames) and then every shape against
// the config's, before a single tensor is copied.
func checkTensors(path string, src weights, want map[string][]int64, optional map[string]bool) error {
	if err := checkNames(path, src.Names(), want, optional); err != nil {
		return err
	}
	names := make([]string, 0, len(want))
	for n := range want {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if got, _ := src.shape(n); !equalShape(got, want[n]) {
			return fmt.Errorf("model %s: tensor %s has shape %v, the config implies %v", path, n, got, want[n])
		}
	}
	return nil
}

// checkNames compares the checkpoint's tensors with the expected set.
func checkNames(dir string, names []string, want map[string][]int64, optional map[string]bool) error {
	have := map[string]bool{}
	var extra []string
	for _, n := range names {
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
