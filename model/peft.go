package model

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/sugarme/gotch"

	"github.com/ragen-go/ragen/internal/torchrt"
	"github.com/ragen-go/ragen/model/safetensors"
)

// peftConfig is PEFT's adapter_config.json for a LoRA adapter of a causal
// LM (peft.LoraConfig; keys left out take PEFT's defaults).
type peftConfig struct {
	PeftType        string   `json:"peft_type"`
	TaskType        string   `json:"task_type"`
	BaseModel       string   `json:"base_model_name_or_path"`
	R               int      `json:"r"`
	LoraAlpha       float64  `json:"lora_alpha"`
	LoraDropout     float64  `json:"lora_dropout"`
	TargetModules   []string `json:"target_modules"`
	Bias            string   `json:"bias"`
	FanInFanOut     bool     `json:"fan_in_fan_out"`
	InferenceMode   bool     `json:"inference_mode"`
	InitLoraWeights bool     `json:"init_lora_weights"`
	UseRSLoRA       bool     `json:"use_rslora"`
	UseDoRA         bool     `json:"use_dora"`
	ModulesToSave   []string `json:"modules_to_save"`
}

// ExportAdapter writes the policy's adapters as a PEFT LoRA folder that
// peft.PeftModel.from_pretrained(base, dir) loads over the base model:
// adapter_model.safetensors (PEFT's tensor names, fp32) and
// adapter_config.json (r, lora_alpha, target_modules, base, CAUSAL_LM, no
// dropout, no bias). base is written as base_model_name_or_path. Like
// Export, it writes a sibling folder and renames it into place.
func (m *CausalLM) ExportAdapter(dir, base string) (err error) {
	if !m.HasLoRA() {
		return fmt.Errorf("exporting an adapter: the model has no LoRA adapters")
	}
	tmp := dir + ".partial"
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return fmt.Errorf("creating adapter folder: %w", err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	o := m.LoRA
	cfg := peftConfig{
		PeftType: "LORA", TaskType: "CAUSAL_LM", BaseModel: base, R: o.Rank, LoraAlpha: o.Alpha,
		TargetModules: o.Targets, Bias: "none", InferenceMode: true, InitLoraWeights: true,
	}
	if err := writeJSON(filepath.Join(tmp, "adapter_config.json"), cfg); err != nil {
		return err
	}
	var tensors []safetensors.Tensor
	for _, p := range m.Adapters() {
		p := p
		tensors = append(tensors, safetensors.Tensor{
			Name: p.Name, DType: safetensors.F32, Shape: size(p.T),
			Source: func() ([]byte, error) { return torchrt.TensorBytes(p.T, gotch.Float) },
		})
	}
	if err := safetensors.Write(filepath.Join(tmp, "adapter_model.safetensors"), tensors,
		map[string]string{"format": "pt"}); err != nil {
		return err
	}
	return replaceDir(tmp, dir)
}

// LoadAdapter reads a PEFT LoRA folder (adapter_config.json and
// adapter_model.safetensors, as ExportAdapter or peft's save_pretrained
// writes them) onto the policy, which must carry no adapters yet: plain
// LoRA on the model's projections (target_modules a list of them, or
// "all-linear"), no bias, DoRA or rsLoRA. Every tensor is bound strictly
// by name and shape: a missing, unexpected or misshapen one is an error
// naming it.
func (m *CausalLM) LoadAdapter(dir string) (err error) {
	path := filepath.Join(dir, "adapter_config.json")
	o, err := readPeftConfig(path)
	if err != nil {
		return err
	}
	ck, err := safetensors.Open(filepath.Join(dir, "adapter_model.safetensors"))
	if err != nil {
		return err
	}
	defer ck.Close()
	if err := m.AddLoRA(o); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer func() {
		if err != nil {
			m.dropAdapters()
		}
	}()
	file := filepath.Join(dir, "adapter_model.safetensors")
	want := m.Adapters()
	if err := checkNames(file, ck.Names(), adapterShapes(want), nil); err != nil {
		return err
	}
	return torchrt.NoGrad(func() (err error) {
		defer torchrt.Catch(&err, "loading "+file)
		for _, p := range want {
			info, err := ck.Info(p.Name)
			if err != nil {
				return err
			}
			if !equalShape(info.Shape, size(p.T)) {
				return fmt.Errorf("%s: tensor %s has shape %v, the model's rank-%d adapter %v", file, p.Name,
					info.Shape, o.Rank, size(p.T))
			}
			dt, err := fromSafetensors(info.DType)
			if err != nil {
				return fmt.Errorf("%s: tensor %s: %w", file, p.Name, err)
			}
			data, err := ck.Bytes(p.Name)
			if err != nil {
				return err
			}
			t, err := place(p.Name, data, info.Shape, dt, Options{Device: deviceOf(p.T), DType: gotch.Float})
			if err != nil {
				return err
			}
			torchrt.CopyInto(p.T, t)
			t.MustDrop()
		}
		return nil
	})
}

func adapterShapes(ps []Param) map[string][]int64 {
	m := make(map[string][]int64, len(ps))
	for _, p := range ps {
		m[p.Name] = size(p.T)
	}
	return m
}

// readPeftConfig reads adapter_config.json into the adapter settings it
// describes, refusing what LoadAdapter cannot apply.
func readPeftConfig(path string) (LoRAOptions, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return LoRAOptions{}, err
	}
	var c struct {
		PeftType      string          `json:"peft_type"`
		TaskType      string          `json:"task_type"`
		R             int             `json:"r"`
		LoraAlpha     float64         `json:"lora_alpha"`
		TargetModules json.RawMessage `json:"target_modules"`
		Bias          string          `json:"bias"`
		FanInFanOut   bool            `json:"fan_in_fan_out"`
		UseRSLoRA     bool            `json:"use_rslora"`
		UseDoRA       bool            `json:"use_dora"`
		Layers        json.RawMessage `json:"layers_to_transform"`
		RankPattern   map[string]any  `json:"rank_pattern"`
		AlphaPattern  map[string]any  `json:"alpha_pattern"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return LoRAOptions{}, fmt.Errorf("%s: %w", path, err)
	}
	bad := func(format string, a ...any) (LoRAOptions, error) {
		return LoRAOptions{}, fmt.Errorf("%s: %s", path, fmt.Sprintf(format, a...))
	}
	switch {
	case c.PeftType != "LORA":
		return bad("peft_type %q is not LORA", c.PeftType)
	case c.TaskType != "" && c.TaskType != "CAUSAL_LM":
		return bad("task_type %q is not CAUSAL_LM", c.TaskType)
	case c.Bias != "" && c.Bias != "none":
		return bad("bias %q: only adapters without biases (none) are supported", c.Bias)
	case c.FanInFanOut || c.UseRSLoRA || c.UseDoRA:
		return bad("fan_in_fan_out, use_rslora and use_dora must be false")
	case len(c.Layers) > 0 && string(c.Layers) != "null":
		return bad("layers_to_transform %s: adapters on some layers only are not supported", c.Layers)
	case len(c.RankPattern) > 0 || len(c.AlphaPattern) > 0:
		return bad("rank_pattern and alpha_pattern must be empty")
	}
	o := LoRAOptions{Rank: c.R, Alpha: c.LoraAlpha}
	var all string
	if json.Unmarshal(c.TargetModules, &all) == nil && all == "all-linear" {
		o.Targets = LoRATargets
	} else if err := json.Unmarshal(c.TargetModules, &o.Targets); err != nil {
		return bad("target_modules %s is neither a list of projections nor \"all-linear\"", c.TargetModules)
	}
	// PEFT saves target_modules as a set, in no fixed order.
	o.Targets = slices.Clone(o.Targets)
	slices.SortFunc(o.Targets, func(a, b string) int {
		return slices.Index(LoRATargets, a) - slices.Index(LoRATargets, b)
	})
	if err := o.Validate(); err != nil {
		return bad("%v", err)
	}
	return o, nil
}
