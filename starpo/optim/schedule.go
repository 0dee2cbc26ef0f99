package optim

import "fmt"

// Schedule kinds.
const (
	Constant = "constant" // Base at every step
	Warmup   = "warmup"   // linear from 0 to Base over WarmupSteps, then Base
)

// Schedule is the learning rate per scheduler step, as verl's
// get_constant_schedule_with_warmup gives it (a LambdaLR stepped once per
// update call, so the first update uses LR(0)):
//
//	LR(s) = Base·s/WarmupSteps   for s < WarmupSteps
//	LR(s) = Base                 otherwise
//
// RAGEN's configuration (warmup_style constant, no warm-up) is Constant.
type Schedule struct {
	Kind        string  // Constant or Warmup
	WarmupSteps int     // steps of linear warm-up; Warmup only, at least 1
	Base        float64 // the learning rate after warm-up
}

// NewSchedule resolves verl's optimiser fields into a Schedule: lr,
// lr_warmup_steps (negative: use the ratio), lr_warmup_steps_ratio and
// total_training_steps. As in verl, the warm-up from a ratio is
// ⌊ratio·totalSteps⌋ steps; no warm-up gives Constant.
func NewSchedule(base float64, warmupSteps int, warmupRatio float64, totalSteps int) (Schedule, error) {
	if warmupSteps < 0 {
		if !(warmupRatio >= 0 && warmupRatio <= 1) {
			return Schedule{}, fmt.Errorf("lr schedule: warm-up ratio %v is not in [0, 1]", warmupRatio)
		}
		if totalSteps < 0 {
			return Schedule{}, fmt.Errorf("lr schedule: total steps %d is negative", totalSteps)
		}
		warmupSteps = int(warmupRatio * float64(totalSteps))
	}
	s := Schedule{Kind: Constant, Base: base}
	if warmupSteps > 0 {
		s = Schedule{Kind: Warmup, WarmupSteps: warmupSteps, Base: base}
	}
	return s, s.Validate()
}

// Validate checks the kind, the warm-up length and the base rate.
func (s Schedule) Validate() error {
	if !finiteNonNeg(s.Base) {
		return fmt.Errorf("lr schedule: base learning rate %v is not a finite non-negative number", s.Base)
	}
	switch s.Kind {
	case Constant:
		if s.WarmupSteps != 0 {
			return fmt.Errorf("lr schedule: kind %q with warm-up steps %d; use %q", s.Kind, s.WarmupSteps, Warmup)
		}
	case Warmup:
		if s.WarmupSteps < 1 {
			return fmt.Errorf("lr schedule: kind %q with warm-up steps %d, want at least 1", s.Kind, s.WarmupSteps)
		}
	default:
		return fmt.Errorf("lr schedule: unknown kind %q, want %q or %q", s.Kind, Constant, Warmup)
	}
	return nil
}

// LR is the learning rate at scheduler step step (0 for the first update).
func (s Schedule) LR(step int) float64 {
	if s.Kind == Warmup && step < s.WarmupSteps {
		return s.Base * float64(max(step, 0)) / float64(s.WarmupSteps)
	}
	return s.Base
}
