package config

import (
	"fmt"
	"math"
	"slices"
)

// LoRA sets low-rank adapters on the actor and the critic (docs/training.md,
// "LoRA"): the base weights stay frozen and only the adapters (and the
// critic's value head) train. RAGEN's LoRA preset is rank 64, alpha 64 on
// every linear projection.
type LoRA struct {
	Rank    int      `yaml:"rank"`    // adapter rank r; 0 = full fine-tuning
	Alpha   float64  `yaml:"alpha"`   // the adapters' output is scaled by alpha/rank
	Targets []string `yaml:"targets"` // projections adapted in every layer (RAGEN's all-linear: all seven)
}

// LoRATargets are the projections lora.targets may name (model.LoRATargets).
var LoRATargets = []string{"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}

// DefaultLoRA is full fine-tuning, with RAGEN's alpha and targets ready for
// a lora.rank override.
func DefaultLoRA() LoRA {
	return LoRA{Rank: 0, Alpha: 64, Targets: slices.Clone(LoRATargets)}
}

// check validates the lora section against the rest of c.
func (l LoRA) check(c Config) error {
	switch {
	case l.Rank < 0:
		return fmt.Errorf("lora.rank %d must be ≥ 0 (0 trains every weight)", l.Rank)
	case !(l.Alpha > 0) || math.IsInf(l.Alpha, 0):
		return fmt.Errorf("lora.alpha %v must be a finite number > 0", l.Alpha)
	case len(l.Targets) == 0:
		return fmt.Errorf("lora.targets is empty; name projections from %v", LoRATargets)
	}
	for i, t := range l.Targets {
		if !slices.Contains(LoRATargets, t) {
			return fmt.Errorf("lora.targets[%d] %q is not one of %v", i, t, LoRATargets)
		}
		if slices.Contains(l.Targets[:i], t) {
			return fmt.Errorf("lora.targets[%d] %s is listed twice", i, t)
		}
	}
	if l.Rank > 0 {
		for _, o := range []struct {
			key string
			k   int
		}{{"actor", c.Actor.TrainLayers}, {"critic", c.Critic.TrainLayers}} {
			if o.k != 0 {
				return fmt.Errorf("lora.rank %d trains adapters on every layer; %s.train_layers %d must be 0 with it",
					l.Rank, o.key, o.k)
			}
		}
	}
	return nil
}
