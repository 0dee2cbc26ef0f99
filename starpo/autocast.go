package starpo

import (
	"fmt"

	"github.com/sugarme/gotch"

	"github.com/ragen-go/ragen/internal/cudagraph"
	"github.com/ragen-go/ragen/model"
)

// Autocast modes of the updates (config.Algorithm.Autocast).
const (
	AutocastOff  = ""     // the updates run in the models' own dtype
	AutocastBF16 = "bf16" // bf16 forward and backward, fp32 master weights
)

// autocastOnCPU lets the tests run the bf16 update on the CPU, where the
// trainer refuses it: bf16 matmuls there are slower than fp32 on most
// CPUs, and the CPU path stays the exact one.
var autocastOnCPU = false

// checkDevicePaths refuses, before any work, the CUDA-only paths a run on
// another device asks for: CUDA-graph decoding and the bf16 autocast.
func (t *Trainer) checkDevicePaths() error {
	if t.Cfg.Rollout.CUDAGraphs {
		// The decoder's own check (a CUDA device and a build with the shim).
		if err := cudagraph.Available(t.Actor.Device); err != nil {
			return fmt.Errorf("rollout.cuda_graphs: %w: set rollout.cuda_graphs false (rollout.static_cache alone "+
				"runs anywhere)", err)
		}
	}
	return t.checkAutocast()
}

// checkAutocast refuses an autocast the trainer cannot do, before any work.
func (t *Trainer) checkAutocast() error {
	switch t.Cfg.Algorithm.Autocast {
	case AutocastOff:
		return nil
	case AutocastBF16:
	default:
		return fmt.Errorf("algorithm.autocast %q is not off (\"\") or bf16", t.Cfg.Algorithm.Autocast)
	}
	if dev := t.Actor.Device; !dev.IsCuda() && !autocastOnCPU {
		return fmt.Errorf("algorithm.autocast bf16 runs the updates on a CUDA device only; the actor is on the CPU " +
			"(bf16 matmuls are slower than fp32 there, and the CPU path stays exact): leave algorithm.autocast off")
	}
	for _, m := range []struct {
		name string
		dt   gotch.DType
		on   bool
	}{{"actor", t.Actor.DType, true}, {"critic", criticDType(t), t.Critic != nil}} {
		if m.on && m.dt != gotch.Float {
			return fmt.Errorf("algorithm.autocast bf16 keeps fp32 master weights, but the %s is held in %s: set "+
				"dtype fp32", m.name, model.DTypeFlag(m.dt))
		}
	}
	return nil
}

func criticDType(t *Trainer) gotch.DType {
	if t.Critic == nil {
		return gotch.Float
	}
	return t.Critic.DType
}

// actorForUpdate is the policy one micro-batch's forward and backward run
// through: the actor itself, or under autocast a bf16 copy whose gradients
// reach the actor's fp32 weights (model.AutocastCausalLM), made afresh per
// micro-batch because an optimiser step changes the masters.
func (t *Trainer) actorForUpdate() (*model.CausalLM, func(), error) {
	if t.Cfg.Algorithm.Autocast == AutocastOff {
		return t.Actor, func() {}, nil
	}
	c, err := model.AutocastCausalLM(t.Actor, gotch.BFloat16)
	if err != nil {
		return nil, nil, fmt.Errorf("actor: %w", err)
	}
	return c, c.Drop, nil
}

// criticForUpdate is actorForUpdate for the critic.
func (t *Trainer) criticForUpdate() (*model.ValueModel, func(), error) {
	if t.Cfg.Algorithm.Autocast == AutocastOff {
		return t.Critic, func() {}, nil
	}
	c, err := model.AutocastValueModel(t.Critic, gotch.BFloat16)
	if err != nil {
		return nil, nil, fmt.Errorf("critic: %w", err)
	}
	return c, c.Drop, nil
}
