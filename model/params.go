package model

import (
	"fmt"
	"strings"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"
)

// floatDType is the dtype logits, values and softmaxes are computed in.
const floatDType = gotch.Float

// Param is a named weight, under HuggingFace's name.
type Param struct {
	Name string
	T    *ts.Tensor
}

// Params lists the backbone's weights under HuggingFace's names. A bias
// the architecture lacks is not listed: it exists nowhere (optimiser,
// checkpoints, data-parallel buckets, exports all take this list).
func (m *Backbone) Params() []Param {
	ps := []Param{{"model.embed_tokens.weight", m.Embed}}
	linear := func(name string, l Linear) {
		ps = append(ps, Param{name + ".weight", l.Weight})
		if l.Bias != nil {
			ps = append(ps, Param{name + ".bias", l.Bias})
		}
	}
	for i := range m.Layers {
		l := &m.Layers[i]
		p := layerPrefix(i)
		ps = append(ps, Param{p + "input_layernorm.weight", l.InputNorm.Weight})
		linear(p+"self_attn.q_proj", l.Attn.Q)
		linear(p+"self_attn.k_proj", l.Attn.K)
		linear(p+"self_attn.v_proj", l.Attn.V)
		linear(p+"self_attn.o_proj", l.Attn.O)
		ps = append(ps, Param{p + "post_attention_layernorm.weight", l.PostAttnNorm.Weight})
		linear(p+"mlp.gate_proj", l.MLP.Gate)
		linear(p+"mlp.up_proj", l.MLP.Up)
		linear(p+"mlp.down_proj", l.MLP.Down)
	}
	return append(ps, Param{"model.norm.weight", m.Norm.Weight})
}

// Drop frees the backbone's tensors: its adapters, and its weights unless
// they are another model's (shareBase).
func (m *Backbone) Drop() {
	m.dropAdapters()
	if m.shared {
		return
	}
	for _, p := range m.Params() {
		dropAll(p.T)
	}
	dropAll(m.Rotary.InvFreq)
}

// Params lists every weight under HuggingFace's names; a tied head is not
// listed separately (HuggingFace's checkpoints omit lm_head.weight then).
func (m *CausalLM) Params() []Param {
	ps := m.Backbone.Params()
	if !m.Cfg.TieWordEmbeddings {
		ps = append(ps, Param{"lm_head.weight", m.LMHead})
	}
	return ps
}

// Drop frees the model's tensors.
func (m *CausalLM) Drop() {
	if !m.Cfg.TieWordEmbeddings && !m.shared {
		dropAll(m.LMHead)
	}
	m.Backbone.Drop()
}

// Params lists the critic's weights.
func (m *ValueModel) Params() []Param {
	return append(m.Backbone.Params(), Param{"score.weight", m.Score.Weight}, Param{"score.bias", m.Score.Bias})
}

// Drop frees the critic's tensors.
func (m *ValueModel) Drop() {
	dropAll(m.Score.Weight, m.Score.Bias)
	m.Backbone.Drop()
}

func layerPrefix(i int) string { return fmt.Sprintf("model.layers.%d.", i) }

// TopLayers is a partial fine-tune's share of params (a model's Params with
// the given number of decoder layers): the top k decoder layers, the final
// norm and a critic's score head. The embeddings (and a head tied to them),
// an untied lm_head and the lower layers stay frozen. k = 0 keeps every
// weight. Freezing the bottom of the network also ends autograd there: no
// graph is built through a frozen layer below every trained one, so its
// forward costs what inference does.
func TopLayers(params []Param, layers, k int) ([]Param, error) {
	if k == 0 {
		return params, nil
	}
	if k < 0 || k > layers {
		return nil, fmt.Errorf("train_layers %d must be between 0 and the model's %d layers", k, layers)
	}
	var out []Param
	for _, p := range params {
		var i int
		switch {
		case p.Name == "model.norm.weight" || strings.HasPrefix(p.Name, "score."):
			out = append(out, p)
		case strings.HasPrefix(p.Name, "model.layers."):
			if _, err := fmt.Sscanf(p.Name, "model.layers.%d.", &i); err == nil && i >= layers-k {
				out = append(out, p)
			}
		}
	}
	return out, nil
}
