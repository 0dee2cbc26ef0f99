package model

import (
	"fmt"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"

	"github.com/ragen-go/ragen/internal/torchrt"
)

// Mixed precision with fp32 master weights, what torch.autocast(bf16) does
// for an fp32 model: the forward and backward run on dt copies of the
// weights, and autograd carries each copy's gradient back through the cast
// into the master weight, in fp32, where the optimiser steps. The copy is
// built with the model's own constructor (the same getter path as loading
// a checkpoint), so it is the dtype path that model/dtype.go already runs
// for bf16 checkpoints: activations in dt, RMSNorm statistics, softmax and
// logits in fp32.
//
// A LoRA model's copy carries dt casts of its adapters the same way (the
// frozen base is cast too, and gets no gradient).
//
// A copy goes stale when the masters change: make one per forward pass
// (casting the weights costs one read of them, small beside a training
// forward and backward) and Drop it after the backward.

// AutocastCausalLM returns a dt working copy of m (fp32).
func AutocastCausalLM(m *CausalLM, dt gotch.DType) (*CausalLM, error) {
	get, err := castGetter(m.Params(), m.DType, dt)
	if err != nil {
		return nil, err
	}
	c, err := newCausalLM(m.Cfg, Options{Device: m.Device, DType: dt}, get)
	if err != nil {
		return nil, err
	}
	c.followPath(m.Backbone)
	if err := c.castAdapters(m.Backbone, dt); err != nil {
		c.Drop()
		return nil, err
	}
	return c, nil
}

// AutocastValueModel returns a dt working copy of the critic m (fp32).
func AutocastValueModel(m *ValueModel, dt gotch.DType) (*ValueModel, error) {
	get, err := castGetter(m.Params(), m.DType, dt)
	if err != nil {
		return nil, err
	}
	bb, err := newBackbone(m.Cfg, Options{Device: m.Device, DType: dt}, get)
	if err != nil {
		return nil, err
	}
	c := &ValueModel{Backbone: bb}
	if c.Score.Weight, err = get("score.weight"); err == nil {
		c.Score.Bias, err = get("score.bias")
	}
	if err != nil {
		bb.Drop()
		return nil, err
	}
	c.followPath(m.Backbone)
	if err := c.castAdapters(m.Backbone, dt); err != nil {
		c.Drop()
		return nil, err
	}
	return c, nil
}

// castGetter serves the named weights cast to dt, differentiably.
func castGetter(params []Param, from, dt gotch.DType) (getter, error) {
	if from != gotch.Float {
		return nil, fmt.Errorf("autocast keeps fp32 master weights, but the model is held in %s (load it with dtype fp32)", DTypeFlag(from))
	}
	byName := map[string]*ts.Tensor{}
	for _, p := range params {
		byName[p.Name] = p.T
	}
	return func(name string) (t *ts.Tensor, err error) {
		defer torchrt.Catch(&err, "autocast copy of "+name)
		w, ok := byName[name]
		if !ok {
			return nil, fmt.Errorf("autocast: the model has no weight %s", name)
		}
		return must(w.Totype(dt, false)), nil
	}, nil
}

// followPath gives the copy its master's attention path (SetSDPA).
func (m *Backbone) followPath(master *Backbone) {
	for i := range m.Layers {
		m.Layers[i].Attn.SDPA = master.Layers[i].Attn.SDPA
	}
}
