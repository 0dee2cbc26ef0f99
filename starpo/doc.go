// Package starpo is StarPO's training step and the run around it.
//
// Trainer.Step is the pipeline, one method per phase:
//
//	Rollout       play the episodes with the policy (starpo/rollout)
//	Prepare       normalise the scores, keep the groups whose rewards
//	              disagree most (StarPO-S), place the rewards on tokens
//	Advantages    GAE on the critic's values, or GRPO (starpo/advantage)
//	UpdateCritic  the clipped value loss, PPO epochs (starpo/loss)
//	UpdateActor   the clipped policy loss, PPO epochs (starpo/loss, optim)
//
// A Recorder collects the step's metrics as the phases run. The math lives
// in the subpackages; this package moves data between them and the model.
// Run is a training run in its folder: the loop, validation, checkpoints
// and the metrics file.
package starpo
