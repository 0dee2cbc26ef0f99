package model

import (
	"fmt"
	"os"
	"path/filepath"

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
