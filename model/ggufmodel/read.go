package ggufmodel

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ragen-go/ragen/gguf"
)

// Model is a GGUF file seen as a HuggingFace checkpoint.
type Model struct {
	File *gguf.File
	// Arch is general.architecture: "llama" or "qwen2".
	Arch string
	// Config is the config.json the metadata amounts to, for
	// model.ParseConfig.
	Config map[string]any

	heads, kvHeads int
	byHF           map[string]*gguf.Tensor // HuggingFace name -> tensor
}

// Open reads the GGUF file at path. The file stays mapped until Close.
func Open(path string) (*Model, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return nil, err
	}
	m, err := FromFile(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	return m, nil
}

// Close releases the file.
func (m *Model) Close() error { return m.File.Close() }

// FromFile maps a parsed GGUF file. Every error is one sentence naming the
// file and the key or tensor at fault.
func FromFile(f *gguf.File) (*Model, error) {
	fail := func(format string, a ...any) error {
		return fmt.Errorf("gguf %s: %s", f.Name, fmt.Sprintf(format, a...))
	}
	arch, err := f.String("general.architecture")
	if err != nil {
		return nil, err
	}
	if arch != ArchLlama && arch != ArchQwen2 {
		return nil, fail("architecture %q is not supported (only llama and qwen2)", arch)
	}
	m := &Model{File: f, Arch: arch, byHF: map[string]*gguf.Tensor{}}
	cfg, err := m.config()
	if err != nil {
		return nil, err
	}
	layers := cfg["num_hidden_layers"].(int)
	for _, t := range f.Tensors {
		if t.Name == ropeFreqsName {
			if err := m.ropeScaling(cfg, t); err != nil {
				return nil, fail("%v", err)
			}
			continue
		}
		hf, err := fromGGUF(t.Name, layers)
		if err != nil {
			return nil, fail("%v", err)
		}
		m.byHF[hf] = t
	}
	if n := m.layersPresent(); n != layers {
		return nil, fail("%s.block_count %d does not match its tensors, which hold %d layers", arch, layers, n)
	}
	if err := m.biases(cfg); err != nil {
		return nil, fail("%v", err)
	}
	_, hasHead := m.byHF["lm_head.weight"]
	cfg["tie_word_embeddings"] = !hasHead
	if emb, ok := m.byHF["model.embed_tokens.weight"]; ok {
		if v := emb.Shape()[0]; cfg["vocab_size"] == nil {
			cfg["vocab_size"] = int(v)
		}
	} else {
		return nil, fail("it has no token_embd.weight tensor")
	}
	m.Config = cfg
	return m, nil
}

// config reads the architecture's hyperparameters into config.json keys.
func (m *Model) config() (map[string]any, error) {
	f, arch := m.File, m.Arch
	key := func(k string) string { return arch + "." + k }
	cfg := map[string]any{
		"model_type": arch, "hidden_act": "silu", "torch_dtype": "float32",
		"architectures": []string{map[string]string{ArchLlama: "LlamaForCausalLM", ArchQwen2: "Qwen2ForCausalLM"}[arch]},
	}
	ints := []struct{ gguf, hf string }{
		{"context_length", "max_position_embeddings"}, {"embedding_length", "hidden_size"},
		{"feed_forward_length", "intermediate_size"}, {"block_count", "num_hidden_layers"},
		{"attention.head_count", "num_attention_heads"},
	}
	for _, k := range ints {
		v, err := f.Uint(key(k.gguf))
		if err != nil {
			return nil, err
		}
		if v == 0 || v > 1<<24 {
			return nil, fmt.Errorf("gguf %s: %s is %d, not a plausible size", f.Name, key(k.gguf), v)
		}
		cfg[k.hf] = int(v)
	}
	heads := cfg["num_attention_heads"].(int)
	kv := heads
	if f.Has(key("attention.head_count_kv")) {
		v, err := f.Uint(key("attention.head_count_kv"))
		if err != nil {
			return nil, err
		}
		kv = int(v)
	}
	cfg["num_key_value_heads"] = kv
	m.heads, m.kvHeads = heads, kv
	eps, err := f.Float(key("attention.layer_norm_rms_epsilon"))
	if err != nil {
		return nil, err
	}
	cfg["rms_norm_eps"] = eps
	theta := 10000.0 // llama.cpp's default freq_base
	if f.Has(key("rope.freq_base")) {
		if theta, err = f.Float(key("rope.freq_base")); err != nil {
			return nil, err
		}
	}
	cfg["rope_theta"] = theta
	if err := m.headDim(cfg); err != nil {
		return nil, err
	}
	if f.Has(key("rope.scaling.type")) {
		t, err := f.String(key("rope.scaling.type"))
		if err != nil {
			return nil, err
		}
		if t != "none" {
			return nil, fmt.Errorf("gguf %s: %s %q is not supported (only plain rotary embeddings)", f.Name, key("rope.scaling.type"), t)
		}
	}
	if f.Has(key("vocab_size")) {
		v, err := f.Uint(key("vocab_size"))
		if err != nil {
			return nil, err
		}
		cfg["vocab_size"] = int(v)
	}
	for _, t := range []struct{ gguf, hf string }{{"bos_token_id", "bos_token_id"}, {"eos_token_id", "eos_token_id"}} {
		if k := "tokenizer.ggml." + t.gguf; f.Has(k) {
			v, err := f.Uint(k)
			if err != nil {
				return nil, err
			}
			cfg[t.hf] = int(v)
		}
	}
	return cfg, nil
}

// ropeScaling reads a rope_freqs tensor into config.json's rope_scaling.
func (m *Model) ropeScaling(cfg map[string]any, t *gguf.Tensor) error {
	if m.Arch != ArchLlama {
		return fmt.Errorf("tensor %s belongs to llama models, not %s", t.Name, m.Arch)
	}
	hd := cfg["hidden_size"].(int) / cfg["num_attention_heads"].(int)
	if v, ok := cfg["head_dim"].(int); ok {
		hd = v
	}
	orig := 8192 // Llama 3's pre-training context
	if k := m.Arch + ".rope.scaling.original_context_length"; m.File.Has(k) {
		v, err := m.File.Uint(k)
		if err != nil {
			return err
		}
		orig = int(v)
	}
	rs, err := llama3Scaling(t, cfg["rope_theta"].(float64), hd, orig)
	if err == nil && rs != nil {
		cfg["rope_scaling"] = rs
	}
	return err
}

// headDim reads key_length (an explicit head_dim) and checks that values
// and the rotary embedding use the same width.
func (m *Model) headDim(cfg map[string]any) error {
	f, key := m.File, func(k string) string { return m.Arch + "." + k }
	hidden, heads := cfg["hidden_size"].(int), cfg["num_attention_heads"].(int)
	hd := 0
	if heads > 0 && hidden%heads == 0 {
		hd = hidden / heads
	}
	if f.Has(key("attention.key_length")) {
		v, err := f.Uint(key("attention.key_length"))
		if err != nil {
			return err
		}
		if int(v) != hd {
			cfg["head_dim"] = int(v)
		}
		hd = int(v)
	}
	for _, k := range []string{"attention.value_length", "rope.dimension_count"} {
		if !f.Has(key(k)) {
			continue
		}
		v, err := f.Uint(key(k))
		if err != nil {
			return err
		}
		if int(v) != hd {
			return fmt.Errorf("gguf %s: %s is %d but the head width is %d; only full-width rotary embeddings and equal key and value widths are supported",
				f.Name, key(k), v, hd)
		}
	}
	return nil
}

// layersPresent counts the decoder layers the tensors hold.
func (m *Model) layersPresent() int {
	seen := map[string]bool{}
	for hf := range m.byHF {
		if rest, ok := strings.CutPrefix(hf, "model.layers."); ok {
			i, _, _ := strings.Cut(rest, ".")
			seen[i] = true
		}
	}
	return len(seen)
}

// biases reads which projections carry biases from the tensors present,
// and checks that the pattern is one the architecture has.
func (m *Model) biases(cfg map[string]any) error {
	present := map[string]bool{} // per-layer name suffixes of any layer
	for hf := range m.byHF {
		if rest, ok := strings.CutPrefix(hf, "model.layers."); ok {
			_, suffix, _ := strings.Cut(rest, ".")
			present[suffix] = true
		}
	}
	has := func(suffix string) bool { return present[suffix] }
	q, k, v := has("self_attn.q_proj.bias"), has("self_attn.k_proj.bias"), has("self_attn.v_proj.bias")
	o := has("self_attn.o_proj.bias")
	mlp := has("mlp.gate_proj.bias") || has("mlp.up_proj.bias") || has("mlp.down_proj.bias")
	switch m.Arch {
	case ArchQwen2:
		if o || mlp {
			return fmt.Errorf("a qwen2 model has biases on q, k and v only, but this one has an o_proj or MLP bias")
		}
	case ArchLlama:
		if q != o || q != k || q != v {
			return fmt.Errorf("a llama model has biases on all of q, k, v and o (attention_bias) or on none of them")
		}
		if q {
			cfg["attention_bias"] = true
		}
		if mlp {
			cfg["mlp_bias"] = true
		}
	}
	return nil
}

// ConfigJSON is Config as config.json.
func (m *Model) ConfigJSON() ([]byte, error) { return json.MarshalIndent(m.Config, "", "  ") }

// Names lists the tensors under their HuggingFace names, sorted.
func (m *Model) Names() []string {
	names := make([]string, 0, len(m.byHF))
	for n := range m.byHF {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Shape is the row-major shape of the tensor called name (HuggingFace's
// name), and whether there is one.
func (m *Model) Shape(name string) ([]int64, bool) {
	t, ok := m.byHF[name]
	if !ok {
		return nil, false
	}
	return t.Shape(), true
}

// Float32 returns the tensor called name (HuggingFace's name) dequantized,
// in HuggingFace's layout: row-major, llama's q/k rows in rotate-half
// order.
func (m *Model) Float32(name string) ([]float32, error) {
	t, ok := m.byHF[name]
	if !ok {
		return nil, fmt.Errorf("gguf %s: it has no tensor for %s", m.File.Name, name)
	}
	data, err := t.Float32()
	if err != nil {
		return nil, err
	}
	if heads, ok := permuted(m.Arch, name, m.heads, m.kvHeads); ok {
		sh := t.Shape()
		cols := 1
		if len(sh) == 2 {
			cols = int(sh[1])
		}
		rows := len(data) / cols
		if rows%(2*heads) != 0 {
			return nil, fmt.Errorf("gguf %s: tensor %s has %d rows, not a whole number of %d heads of even width", m.File.Name, t.Name, rows, heads)
		}
		data = unpermute(data, heads, cols)
	}
	return data, nil
}

// Base is the file's name without its folder, for messages and metadata.
func (m *Model) Base() string { return filepath.Base(m.File.Name) }
