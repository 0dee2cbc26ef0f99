package model

import (
	"encoding/json"
	"strings"
	"testing"
)

// v5Config is config.json as transformers 5.17's save_pretrained writes it
// for a Qwen2Config: dtype and rope_parameters instead of torch_dtype and
// rope_theta, and layer_types.
const v5Config = `{
  "architectures": ["Qwen2ForCausalLM"],
  "attention_dropout": 0.0,
  "bos_token_id": null,
  "dtype": "float32",
  "eos_token_id": null,
  "hidden_act": "silu",
  "hidden_size": 64,
  "initializer_range": 0.02,
  "intermediate_size": 96,
  "layer_types": ["full_attention", "full_attention"],
  "max_position_embeddings": 512,
  "max_window_layers": 28,
  "model_type": "qwen2",
  "num_attention_heads": 4,
  "num_hidden_layers": 2,
  "num_key_value_heads": 2,
  "pad_token_id": null,
  "rms_norm_eps": 1e-06,
  "rope_parameters": {"rope_theta": 1000000.0, "rope_type": "default"},
  "sliding_window": null,
  "tie_word_embeddings": true,
  "transformers_version": "5.17.0",
  "use_cache": true,
  "use_sliding_window": false,
  "vocab_size": 1000
}`

func TestConfigTransformers5(t *testing.T) {
	c, err := ParseConfig([]byte(v5Config))
	if err != nil {
		t.Fatal(err)
	}
	if c.RopeTheta != 1e6 || c.TorchDtype != "float32" {
		t.Fatalf("rope_theta %g, torch_dtype %q; want 1e6 and float32 from rope_parameters and dtype", c.RopeTheta, c.TorchDtype)
	}
	// An export in another dtype says so under both names, and keeps rope_parameters.
	c.TorchDtype = "bfloat16"
	data, err := c.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		DType      string         `json:"dtype"`
		TorchDtype string         `json:"torch_dtype"`
		Rope       ropeParameters `json:"rope_parameters"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	if out.DType != "bfloat16" || out.TorchDtype != "bfloat16" || out.Rope.RopeTheta == nil || *out.Rope.RopeTheta != 1e6 || out.Rope.RopeType != "default" {
		t.Fatalf("exported %s", data)
	}
	if _, err := ParseConfig(data); err != nil {
		t.Fatalf("the export does not parse again: %v", err)
	}

	for _, tc := range []struct{ from, to, want string }{
		{`"rope_type": "default"`, `"rope_type": "yarn"`, `rope_type "yarn" is not supported`},
		{`"rope_type": "default"`, `"rope_type": "default", "factor": 4`, "rope_parameters"},
		{`"full_attention"]`, `"sliding_attention"]`, `layer_types[1] "sliding_attention"`},
		{`["full_attention", "full_attention"]`, `["full_attention"]`, "layer_types has 1 entries for num_hidden_layers 2"},
		{`"dtype": "float32"`, `"dtype": "float32", "torch_dtype": "bfloat16"`, `dtype "float32" and torch_dtype "bfloat16" disagree`},
		{`"dtype": "float32"`, `"dtype": "int8"`, `torch_dtype "int8"`},
		{`"rope_type": "default"`, `"rope_type": "default"}, "rope_theta": 10000, "x": {`, "rope_theta 1e+06 and rope_theta 10000 disagree"},
	} {
		bad := strings.Replace(v5Config, tc.from, tc.to, 1)
		if bad == v5Config {
			t.Fatalf("test case %q does not change the config", tc.from)
		}
		if _, err := ParseConfig([]byte(bad)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s → %s: err = %v, want one mentioning %q", tc.from, tc.to, err, tc.want)
		}
	}
}
