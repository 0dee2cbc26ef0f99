package model

import (
	"testing"
)

// FuzzParseConfig: no config.json makes ParseConfig panic, and one it
// accepts is within the bounds, gives a tensor list of a bounded size, and
// exports a config.json that parses to the same sizes.
func FuzzParseConfig(f *testing.F) {
	base := `"hidden_size":32,"intermediate_size":48,"num_hidden_layers":2,"num_attention_heads":4,"num_key_value_heads":2,"rope_theta":10000,"rms_norm_eps":1e-6,"vocab_size":64,"max_position_embeddings":128`
	for _, s := range []string{
		v5Config,
		`{"model_type":"qwen2",` + base + `}`,
		`{"model_type":"llama",` + base + `,"head_dim":8,"eos_token_id":[1,3,5],"bos_token_id":0,"rope_scaling":{"factor":32.0,"high_freq_factor":4.0,"low_freq_factor":1.0,"original_max_position_embeddings":8192,"rope_type":"llama3"}}`,
		`{"model_type":"llama",` + base + `,"head_dim":null,"eos_token_id":null,"rope_parameters":{"rope_type":"default","rope_theta":10000}}`,
		`{"model_type":"qwen2","num_hidden_layers":1000000000}`,
		`{"model_type":"llama",` + base + `,"head_dim":-8}`,
		`{"model_type":"qwen2",` + base + `,"layer_types":["full_attention","full_attention"]}`,
		`{}`, `[]`, `null`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConfig(data)
		if err != nil {
			return
		}
		if c.NumHiddenLayers > MaxLayers || c.HiddenSize > MaxHidden || c.VocabSize > MaxVocab ||
			c.IntermediateSize > MaxIntermediate || c.NumAttentionHeads > MaxHeads || c.HeadDimension() <= 0 {
			t.Fatalf("accepted out-of-bounds sizes: %+v", c)
		}
		want := expectedShapes(c, !c.TieWordEmbeddings, true)
		if n := len(want); n > 4+12*MaxLayers+1 {
			t.Fatalf("%d expected tensors", n)
		}
		out, err := c.JSON()
		if err != nil {
			t.Fatalf("accepted config does not export: %v", err)
		}
		back, err := ParseConfig(out)
		if err != nil {
			t.Fatalf("the export of an accepted config is refused: %v\n%s", err, out)
		}
		if back.NumHiddenLayers != c.NumHiddenLayers || back.HeadDimension() != c.HeadDimension() || back.VocabSize != c.VocabSize {
			t.Fatalf("export changed the sizes: %+v -> %+v", c, back)
		}
	})
}
