package advantage

import "fmt"

// Estimator is verl's adv_estimator: how a step turns rewards into
// advantages.
type Estimator string

// The advantage estimators.
const (
	// EstimatorGAE is PPO's: generalised advantage estimation on the
	// critic's values, whitened over the batch (GAE, WhitenMasked).
	EstimatorGAE Estimator = "gae"
	// EstimatorGRPO is critic-free: each trajectory's (group-normalised)
	// score on its tokens (GRPOOutcome).
	EstimatorGRPO Estimator = "grpo"
)

// Check says whether e is one of the estimators.
func (e Estimator) Check() error {
	if e != EstimatorGAE && e != EstimatorGRPO {
		return fmt.Errorf("advantage estimator %q is not gae or grpo", string(e))
	}
	return nil
}
