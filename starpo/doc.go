// Package starpo wires StarPO together: rollouts (starpo/rollout) through
// the policy (model), advantages (starpo/advantage), losses (starpo/loss)
// and the optimiser (starpo/optim).
package starpo
