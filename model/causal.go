package model

import (
	"fmt"

	"github.com/sugarme/gotch/ts"

	"github.com/ragen-go/ragen/internal/torchrt"
)

// Param is a named weight, under HuggingFace's name.
type Param struct {
	Name string
	T    *ts.Tensor
}

// CausalLM is Qwen2ForCausalLM: the backbone and a language-model head,
// which reuses the embedding matrix when the embeddings are tied.
type CausalLM struct {
	*Backbone
	LMHead *ts.Tensor // lm_head.weight [V, d]; the same tensor as Embed when tied
}

// Logits maps hidden states [B, T, d] to logits [B, T, V] in fp32.
func (m *CausalLM) Logits(hidden *ts.Tensor) *ts.Tensor {
	head := Linear{Weight: m.LMHead}
	l := head.Forward(hidden)
	if l.DType() != floatDType {
		l = must(l.Totype(floatDType, true))
	}
	return l
}

// LastLogits runs the model on in and returns the logits of each sequence's
// last position, [B, V] fp32. The head is applied to that position only
// (HuggingFace's logits_to_keep=1).
func (m *CausalLM) LastLogits(in Inputs, cache *Cache) (logits *ts.Tensor, err error) {
	defer torchrt.Catch(&err, "forward pass")
	var s scope
	defer s.Drop()
	h := s.Keep(m.Forward(in, cache)) // [B, T, d]
	T := size(h)[1]
	last := s.Op(h.Narrow(1, T-1, 1, false)) // [B, 1, d]
	l := s.Keep(m.Logits(last))              // [B, 1, V]
	return must(l.SqueezeDim(1, false)), nil
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
	if !m.Cfg.TieWordEmbeddings {
		dropAll(m.LMHead)
	}
	m.Backbone.Drop()
}

// ValueModel is the critic: a Qwen2 backbone with a scalar head
// (HuggingFace's Qwen2ForTokenClassification with one label, as verl and
// RAGEN build it), giving a value per token.
type ValueModel struct {
	*Backbone
	Score Linear // score.weight [1, d], score.bias [1]
}

// Values maps inputs to per-token values [B, T] in fp32.
func (m *ValueModel) Values(in Inputs) (v *ts.Tensor, err error) {
	defer torchrt.Catch(&err, "critic forward pass")
	var s scope
	defer s.Drop()
	h := s.Keep(m.Forward(in, nil))
	out := s.Keep(m.Score.Forward(h)) // [B, T, 1]
	if out.DType() != floatDType {
		out = s.Op(out.Totype(floatDType, false))
	}
	return must(out.SqueezeDim(-1, false)), nil
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
