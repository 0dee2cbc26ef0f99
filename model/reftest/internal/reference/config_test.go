package reference

import (
	"strings"
	"testing"
)

func TestParseConfig(t *testing.T) {
	// A Qwen2.5-0.5B-Instruct config.json, abridged.
	c, err := ParseConfig([]byte(`{
  "architectures": ["Qwen2ForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 151643,
  "eos_token_id": 151645, "hidden_act": "silu", "hidden_size": 896, "initializer_range": 0.02,
  "intermediate_size": 4864, "max_position_embeddings": 32768, "max_window_layers": 21,
  "model_type": "qwen2", "num_attention_heads": 14, "num_hidden_layers": 24, "num_key_value_heads": 2,
  "rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "sliding_window": 32768, "tie_word_embeddings": true,
  "torch_dtype": "bfloat16", "transformers_version": "4.43.1", "use_cache": true,
  "use_sliding_window": false, "vocab_size": 151936, "rope_scaling": null}`))
	if err != nil {
		t.Fatal(err)
	}
	if c.HeadDimension() != 64 || c.NumAttentionHeads/c.NumKeyValueHeads != 7 || !c.TieWordEmbeddings || c.EOSTokenID != 151645.0 {
		t.Errorf("parsed %+v", c)
	}
	const base = `"model_type": "qwen2", "hidden_size": 32, "intermediate_size": 8, "num_hidden_layers": 1, ` +
		`"num_attention_heads": 4, "vocab_size": 8, "rope_theta": 1, "rms_norm_eps": 1`
	bad := map[string]string{
		`{"model_type": "gemma"}`:                                                         "model_type",
		`{` + base + `, "num_key_value_heads": 3}`:                                        "num_key_value_heads",
		`{` + base + `, "num_key_value_heads": 2, "rope_scaling": {"rope_type": "yarn"}}`: "rope_scaling",
		`{` + base + `, "num_key_value_heads": 2, "use_sliding_window": true}`:            "sliding",
		`{` + base + `, "num_key_value_heads": 2, "hidden_act": "gelu"}`:                  "hidden_act",
		`{`: "not a valid",
	}
	for js, want := range bad {
		if _, err := ParseConfig([]byte(js)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseConfig(%s): %v, want an error about %s", js, err, want)
		}
	}
}
