package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"

	"github.com/ragen-go/ragen/internal/torchrt"
)

// LoRA is a low-rank adapter on a frozen projection (Hu et al., 2021), as
// PEFT computes it (peft/tuners/lora/layer.py, Linear.forward):
//
//	y = x·Wᵀ + b + (α/r)·(x·Aᵀ)·Bᵀ
//
// with A [r, in] drawn as PEFT draws it (kaiming-uniform with a = √5, that
// is U(−1/√in, 1/√in)) and B [out, r] zero, so a fresh adapter leaves the
// model exactly as it was. Only A and B are trained.
//
// Adapters are held in fp32 whatever the base's dtype (PEFT's
// autocast_adapter_dtype): on a bf16 base the input is cast up, the update
// added to the base's output in fp32 and the sum rounded once to bf16, as
// PEFT does; the optimiser steps fp32 weights.
type LoRA struct {
	A     *ts.Tensor // lora_A.weight [r, in]
	B     *ts.Tensor // lora_B.weight [out, r]
	Scale float64    // α/r
}

// LoRATargets are the projections an adapter can sit on, by PEFT's module
// names. All of them is PEFT's "all-linear" for these models (the lm head
// excluded), RAGEN's LoRA setting.
var LoRATargets = []string{"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}

// LoRAOptions say which adapters a model carries (AddLoRA). Rank 0 is none.
type LoRAOptions struct {
	Rank    int      // r
	Alpha   float64  // α: the update is scaled by α/r
	Targets []string // projections adapted in every layer, from LoRATargets
	Seed    uint64   // the draw of every A
}

// Validate checks the options, naming the one at fault.
func (o LoRAOptions) Validate() error {
	switch {
	case o.Rank < 1:
		return fmt.Errorf("lora: rank %d must be ≥ 1", o.Rank)
	case !(o.Alpha > 0) || math.IsInf(o.Alpha, 0):
		return fmt.Errorf("lora: alpha %v must be a finite number > 0", o.Alpha)
	case len(o.Targets) == 0:
		return fmt.Errorf("lora: no target projection (choose from %v)", LoRATargets)
	}
	for i, t := range o.Targets {
		if !slices.Contains(LoRATargets, t) {
			return fmt.Errorf("lora: target %q is not one of %v", t, LoRATargets)
		}
		if slices.Contains(o.Targets[:i], t) {
			return fmt.Errorf("lora: target %s is listed twice", t)
		}
	}
	return nil
}

// add returns y + (α/r)·(x·Aᵀ)·Bᵀ in y's dtype, taking ownership of y.
func (l *LoRA) add(x, y *ts.Tensor) *ts.Tensor {
	var s scope
	defer s.Drop()
	s.Keep(y)
	xa := x
	if x.DType() != l.A.DType() {
		xa = s.Op(x.Totype(l.A.DType(), false))
	}
	h := s.Op(ts.Linear(xa, l.A, ts.None)) // [..., r]
	d := s.Op(ts.Linear(h, l.B, ts.None))  // [..., out]
	d = s.Op(d.MulScalar(ts.FloatScalar(l.Scale), false))
	out := s.Op(y.Add(d, false)) // a bf16 y and an fp32 d add in fp32, as in PEFT
	if out.DType() != y.DType() {
		return must(out.Totype(y.DType(), false))
	}
	return s.Release(out)
}

// merge is W + (α/r)·B·A [out, in] in W's dtype (PEFT's merge), a new
// tensor: the sum is formed in the adapter's fp32 and rounded once.
func (l *LoRA) merge(w *ts.Tensor) *ts.Tensor {
	var s scope
	defer s.Drop()
	delta := s.Op(l.B.Matmul(l.A, false)) // [out, in]
	delta = s.Op(delta.MulScalar(ts.FloatScalar(l.Scale), false))
	wf := w
	if w.DType() != delta.DType() {
		wf = s.Op(w.Totype(delta.DType(), false))
	}
	sum := s.Op(wf.Add(delta, false))
	if sum.DType() != w.DType() {
		return must(sum.Totype(w.DType(), false))
	}
	return s.Release(sum)
}

// projection is one of a layer's linear maps under its HuggingFace name.
type projection struct {
	name string // "self_attn.q_proj", ...
	lin  *Linear
}

// target is the projection's PEFT target name (q_proj, ...).
func (p projection) target() string { return p.name[strings.LastIndex(p.name, ".")+1:] }

// projections are the layer's linear maps, in Params' order.
func (l *DecoderLayer) projections() []projection {
	return []projection{
		{"self_attn.q_proj", &l.Attn.Q}, {"self_attn.k_proj", &l.Attn.K}, {"self_attn.v_proj", &l.Attn.V},
		{"self_attn.o_proj", &l.Attn.O},
		{"mlp.gate_proj", &l.MLP.Gate}, {"mlp.up_proj", &l.MLP.Up}, {"mlp.down_proj", &l.MLP.Down},
	}
}

// AddLoRA gives every layer's target projections a fresh adapter (A
// drawn from o.Seed, B zero) in fp32 on the model's device. The model's
// output is unchanged until B is trained.
func (m *Backbone) AddLoRA(o LoRAOptions) (err error) {
	if err := o.Validate(); err != nil {
		return err
	}
	if m.LoRA.Rank > 0 {
		return fmt.Errorf("lora: the model already has rank-%d adapters", m.LoRA.Rank)
	}
	defer torchrt.Catch(&err, "adding LoRA adapters")
	defer func() {
		if err != nil {
			m.dropAdapters()
		}
	}()
	rng := rand.New(rand.NewPCG(o.Seed, 0x10a))
	r := int64(o.Rank)
	for i := range m.Layers {
		for _, p := range m.Layers[i].projections() {
			if !slices.Contains(o.Targets, p.target()) {
				continue
			}
			sh := size(p.lin.Weight) // [out, in]
			out, in := sh[0], sh[1]
			bound := 1 / math.Sqrt(float64(in))
			vals := make([]float32, r*in)
			for j := range vals {
				vals[j] = float32((2*rng.Float64() - 1) * bound)
			}
			a := &LoRA{Scale: o.Alpha / float64(o.Rank)}
			p.lin.LoRA = a
			a.A = toDevice(must(torchrt.TensorFromBytes(float32Bytes(vals), []int64{r, in}, gotch.Float)), m.Device)
			a.B = must(ts.Zeros([]int64{out, r}, gotch.Float, m.Device))
		}
	}
	m.LoRA = o
	m.LoRA.Targets = slices.Clone(o.Targets)
	return nil
}

// toDevice moves t to dev (taking ownership).
func toDevice(t *ts.Tensor, dev gotch.Device) *ts.Tensor {
	if !dev.IsCuda() {
		return t
	}
	return must(t.ToDevice(dev, t.DType(), false, false, true))
}

// HasLoRA says whether the model carries adapters.
func (m *Backbone) HasLoRA() bool { return m.LoRA.Rank > 0 }

// Adapters lists the adapters under the names PEFT saves them with
// (base_model.model.model.layers.N.self_attn.q_proj.lora_A.weight, ...);
// none without LoRA.
func (m *Backbone) Adapters() []Param {
	var ps []Param
	for i := range m.Layers {
		for _, p := range m.Layers[i].projections() {
			if a := p.lin.LoRA; a != nil {
				name := "base_model.model." + layerPrefix(i) + p.name
				ps = append(ps, Param{name + ".lora_A.weight", a.A}, Param{name + ".lora_B.weight", a.B})
			}
		}
	}
	return ps
}

// dropAdapters frees the adapters and detaches them from the model.
func (m *Backbone) dropAdapters() {
	for i := range m.Layers {
		for _, p := range m.Layers[i].projections() {
			if a := p.lin.LoRA; a != nil {
				dropAll(a.A, a.B)
				p.lin.LoRA = nil
			}
		}
	}
	m.LoRA = LoRAOptions{}
}

// shareBase is a backbone over m's weights without m's adapters. It owns
// none of them: its Drop frees only adapters added to it later.
func (m *Backbone) shareBase() *Backbone {
	c := *m
	c.Layers = slices.Clone(m.Layers)
	c.shared, c.LoRA = true, LoRAOptions{}
	for i := range c.Layers {
		for _, p := range c.Layers[i].projections() {
			p.lin.LoRA = nil
		}
	}
	return &c
}

// castAdapters gives m (an autocast copy of master) dt copies of master's
// adapters, made differentiably so that their gradients reach the masters.
func (m *Backbone) castAdapters(master *Backbone, dt gotch.DType) (err error) {
	defer torchrt.Catch(&err, "autocast copy of the adapters")
	for i := range master.Layers {
		src, dst := master.Layers[i].projections(), m.Layers[i].projections()
		for j := range src {
			if a := src[j].lin.LoRA; a != nil {
				c := &LoRA{Scale: a.Scale}
				dst[j].lin.LoRA = c
				c.A = must(a.A.Totype(dt, false))
				c.B = must(a.B.Totype(dt, false))
			}
		}
	}
	m.LoRA = master.LoRA
	return nil
}

// Base is the policy without its adapters, over the same weights: the
// frozen starting policy of a LoRA run, the reference for its KL terms at
// no second copy of the model. Dropping it frees nothing of m.
func (m *CausalLM) Base() *CausalLM {
	return &CausalLM{Backbone: m.Backbone.shareBase(), LMHead: m.LMHead}
}

// NewValueModelOn makes a critic over base's weights, which it shares and
// does not own: a fresh value head (as LoadValueModel makes one, from
// seed, but in fp32, the dtype of trained weights) on the policy's frozen
// backbone, to which the caller adds the critic's own adapters. This is
// RAGEN's LoRA critic (verl's, with the score head in modules_to_save) at
// the memory of its adapters and head alone.
func NewValueModelOn(base *Backbone, seed int64) (*ValueModel, error) {
	vm := &ValueModel{Backbone: base.shareBase()}
	var err error
	if vm.Score, err = newScoreHead(base.Cfg, Options{Device: base.Device, DType: gotch.Float}, seed); err != nil {
		return nil, err
	}
	return vm, nil
}

// State is what a training checkpoint keeps of the policy: with adapters,
// the adapters (the base is frozen: it is the model the run started from);
// otherwise every weight.
func (m *CausalLM) State() []Param {
	if m.HasLoRA() {
		return m.Adapters()
	}
	return m.Params()
}

// State is what a training checkpoint keeps of the critic: with adapters,
// the adapters and the value head; otherwise every weight.
func (m *ValueModel) State() []Param {
	if m.HasLoRA() {
		return append(m.Adapters(), Param{"score.weight", m.Score.Weight}, Param{"score.bias", m.Score.Bias})
	}
	return m.Params()
}

// MergedParams are the policy's Params with every adapter folded into its
// weight, W + (α/r)·B·A in W's dtype (PEFT's merge_and_unload): what an
// export of a LoRA policy writes. The merged matrices are new tensors,
// freed by release; without adapters they are Params and release does
// nothing.
func (m *CausalLM) MergedParams() (ps []Param, release func(), err error) {
	ps = m.Params()
	if !m.HasLoRA() {
		return ps, func() {}, nil
	}
	merged := map[*ts.Tensor]*ts.Tensor{}
	var made []*ts.Tensor
	release = func() { dropAll(made...) }
	err = torchrt.NoGrad(func() (err error) {
		defer torchrt.Catch(&err, "merging the adapters")
		for i := range m.Layers {
			for _, p := range m.Layers[i].projections() {
				if a := p.lin.LoRA; a != nil {
					w := a.merge(p.lin.Weight)
					made = append(made, w)
					merged[p.lin.Weight] = w
				}
			}
		}
		return nil
	})
	if err != nil {
		release()
		return nil, nil, err
	}
	for i := range ps {
		if w, ok := merged[ps[i].T]; ok {
			ps[i].T = w
		}
	}
	return ps, release, nil
}
