package model

import (
	"errors"
	"fmt"
	"sync"

	"github.com/rs/zerolog/log"
	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"

	"github.com/ragen-go/ragen/internal/torchrt"
)

// getter returns the weight stored under a HuggingFace name.
type getter func(name string) (*ts.Tensor, error)

var attentionPathOnce sync.Once

// useSDPA decides once per process whether attention goes through
// libtorch's scaled_dot_product_attention (libtorch 2.x) or the exact
// matmul–softmax path (libtorch 1.13), and logs the choice.
func useSDPA() bool {
	ok := torchrt.HasSDPA()
	attentionPathOnce.Do(func() {
		if ok {
			log.Info().Msg("attention: libtorch scaled_dot_product_attention")
		} else {
			log.Info().Msg("attention: matmul-softmax path (this libtorch has no scaled_dot_product_attention)")
		}
	})
	return ok
}

// SetSDPA chooses every layer's attention path: libtorch's fused
// scaled_dot_product_attention (on) or the exact matmul–softmax path (off).
// Loading picks SDPA whenever the linked libtorch has it; this lets tests
// and benchmarks run both on one model. SDPA needs libtorch 2.x.
func (m *Backbone) SetSDPA(on bool) error {
	if on && !torchrt.HasSDPA() {
		return errors.New("attention: scaled_dot_product_attention is not available in this libtorch (it came with 2.0)")
	}
	for i := range m.Layers {
		m.Layers[i].Attn.SDPA = on
	}
	return nil
}

func newBackbone(cfg Config, opt Options, get getter) (m *Backbone, err error) {
	m = &Backbone{Cfg: cfg, DType: opt.DType, Device: opt.Device}
	var loaded []*ts.Tensor
	defer func() {
		if err != nil {
			dropAll(loaded...)
		}
	}()
	w := func(name string) *ts.Tensor {
		if err != nil {
			return nil
		}
		var t *ts.Tensor
		t, err = get(name)
		if err == nil {
			loaded = append(loaded, t)
		}
		return t
	}
	sdpa := useSDPA()
	qkvBias, oBias, mlpBias := cfg.Biases()
	// linear binds a projection, with its bias where the architecture has one.
	linear := func(name string, bias bool) Linear {
		l := Linear{Weight: w(name + ".weight")}
		if bias {
			l.Bias = w(name + ".bias")
		}
		return l
	}
	m.Embed = w("model.embed_tokens.weight")
	m.Norm = RMSNorm{Weight: w("model.norm.weight"), Eps: cfg.RMSNormEps}
	hd := int64(cfg.HeadDimension())
	for i := range cfg.NumHiddenLayers {
		p := layerPrefix(i)
		m.Layers = append(m.Layers, DecoderLayer{
			InputNorm:    RMSNorm{Weight: w(p + "input_layernorm.weight"), Eps: cfg.RMSNormEps},
			PostAttnNorm: RMSNorm{Weight: w(p + "post_attention_layernorm.weight"), Eps: cfg.RMSNormEps},
			Attn: Attention{
				Q:      linear(p+"self_attn.q_proj", qkvBias),
				K:      linear(p+"self_attn.k_proj", qkvBias),
				V:      linear(p+"self_attn.v_proj", qkvBias),
				O:      linear(p+"self_attn.o_proj", oBias),
				NHeads: int64(cfg.NumAttentionHeads), NKVHeads: int64(cfg.NumKeyValueHeads), HeadDim: hd,
				SDPA: sdpa,
			},
			MLP: MLP{
				Gate: linear(p+"mlp.gate_proj", mlpBias),
				Up:   linear(p+"mlp.up_proj", mlpBias),
				Down: linear(p+"mlp.down_proj", mlpBias),
			},
		})
	}
	if err != nil {
		return nil, err
	}
	if m.Rotary, err = newRotary(cfg.HeadDimension(), cfg.RopeTheta, cfg.Rope, opt.Device); err != nil {
		return nil, fmt.Errorf("rotary embeddings: %w", err)
	}
	return m, nil
}

func newCausalLM(cfg Config, opt Options, get getter) (*CausalLM, error) {
	bb, err := newBackbone(cfg, opt, get)
	if err != nil {
		return nil, err
	}
	m := &CausalLM{Backbone: bb, LMHead: bb.Embed}
	if !cfg.TieWordEmbeddings {
		if m.LMHead, err = get("lm_head.weight"); err != nil {
			bb.Drop()
			return nil, err
		}
	}
	return m, nil
}

// newScoreHead makes a fresh value head: weight ~ N(0, 0.02²), bias 0.
func newScoreHead(cfg Config, opt Options, seed int64) (l Linear, err error) {
	defer torchrt.Catch(&err, "initialising the value head")
	torchrt.ManualSeed(seed)
	w := must(ts.Randn([]int64{1, int64(cfg.HiddenSize)}, gotch.Float, gotch.CPU))
	w = must(w.MulScalar(ts.FloatScalar(0.02), true))
	l.Weight = must(w.ToDevice(opt.Device, opt.DType, false, false, true))
	l.Bias = must(ts.Zeros([]int64{1}, opt.DType, opt.Device))
	return l, nil
}
