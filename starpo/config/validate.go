package config

import "fmt"

// Validate checks the configuration before any work, naming the key at fault.
func (c Config) Validate() error {
	if _, err := c.envSpecs(); err != nil {
		return err
	}
	for _, e := range []struct {
		key string
		v   Envs
	}{{"train", c.Train}, {"val", c.Val}} {
		if err := e.v.validate(e.key, c.knownTag); err != nil {
			return err
		}
	}
	switch {
	case c.Steps < 0:
		return fmt.Errorf("steps %d must be ≥ 0", c.Steps)
	case c.ValEvery < 0 || c.SaveEvery < 0:
		return fmt.Errorf("val_every and save_every must be ≥ 0")
	case c.Agent.MaxTurn < 1 || c.Agent.MaxActionsPerTurn < 1:
		return fmt.Errorf("agent.max_turn and agent.max_actions_per_turn must be ≥ 1")
	case c.Agent.MaxContextWindow == 0 || c.Agent.MaxContextWindow < -1:
		return fmt.Errorf("agent.max_context_window %d must be -1 (every turn) or a positive number of turns",
			c.Agent.MaxContextWindow)
	case !(c.Builtin.RopeTheta > 0):
		return fmt.Errorf("builtin_model.rope_theta %g must be positive", c.Builtin.RopeTheta)
	case c.Rollout.ResponseLength < 1:
		return fmt.Errorf("rollout.response_length %d must be ≥ 1", c.Rollout.ResponseLength)
	case c.Rollout.Reuse < 1:
		return fmt.Errorf("rollout.reuse %d must be ≥ 1 (the update rounds each rollout batch trains)", c.Rollout.Reuse)
	case c.Algorithm.AdvEstimator.Check() != nil:
		return fmt.Errorf("algorithm.adv_estimator %q is not gae or grpo", c.Algorithm.AdvEstimator)
	case c.Algorithm.RewardNorm.Check() != nil:
		return fmt.Errorf("algorithm.reward_norm: %w", c.Algorithm.RewardNorm.Check())
	case c.Algorithm.FilterType.Check() != nil:
		return fmt.Errorf("algorithm.filter_type: %w", c.Algorithm.FilterType.Check())
	case c.Algorithm.LossAggMode.Check() != nil:
		return fmt.Errorf("algorithm.loss_agg_mode: %w", c.Algorithm.LossAggMode.Check())
	case c.Algorithm.MicroBatch < 1:
		return fmt.Errorf("algorithm.micro_batch %d must be ≥ 1", c.Algorithm.MicroBatch)
	case c.Algorithm.PPOMiniBatch < 0:
		return fmt.Errorf("algorithm.ppo_mini_batch %d must be ≥ 0 (0 = all kept trajectories)",
			c.Algorithm.PPOMiniBatch)
	case c.Algorithm.PPOEpochs < 1:
		return fmt.Errorf("algorithm.ppo_epochs %d must be ≥ 1", c.Algorithm.PPOEpochs)
	case c.Algorithm.KLLossType.Check() != nil:
		return fmt.Errorf("algorithm.kl_loss_type %q is not kl (k1), abs, mse (k2) or low_var_kl (k3)",
			c.Algorithm.KLLossType)
	case c.Algorithm.KLPenalty.Check() != nil:
		return fmt.Errorf("algorithm.kl_penalty %q is not kl (k1), abs, mse (k2) or low_var_kl (k3)",
			c.Algorithm.KLPenalty)
	case c.SFT.Episodes < 0:
		return fmt.Errorf("sft.episodes %d must be ≥ 0 (0: no warm start in ragen quickstart)", c.SFT.Episodes)
	case c.SFT.Epochs < 1 || c.SFT.Batch < 1 || c.SFT.MicroBatch < 1:
		return fmt.Errorf("sft.epochs, sft.batch and sft.micro_batch must be ≥ 1")
	case !(c.SFT.Noise >= 0 && c.SFT.Noise <= 1):
		return fmt.Errorf("sft.noise %v must be in [0, 1]", c.SFT.Noise)
	case !(c.SFT.Invalid >= 0 && c.SFT.Invalid <= 1):
		return fmt.Errorf("sft.invalid %v must be in [0, 1]", c.SFT.Invalid)
	case c.SFT.Heldout < 0 || c.SFT.EvalEvery < 0:
		return fmt.Errorf("sft.heldout %d and sft.eval_every %d must be ≥ 0", c.SFT.Heldout, c.SFT.EvalEvery)
	case c.Algorithm.Autocast != "" && c.Algorithm.Autocast != "bf16":
		return fmt.Errorf("algorithm.autocast %q is not \"\" (off) or bf16", c.Algorithm.Autocast)
	case c.KeepCheckpoints < 0:
		return fmt.Errorf("keep_checkpoints %d must be ≥ 0 (the newest checkpoints kept; 0 keeps all)", c.KeepCheckpoints)
	case c.KeepEvery < 0:
		return fmt.Errorf("keep_every %d must be ≥ 0 (0: no checkpoint kept beyond the newest)", c.KeepEvery)
	case c.TrajectoriesEvery < 0:
		return fmt.Errorf("trajectories_every %d must be ≥ 0", c.TrajectoriesEvery)
	case c.Shaping.ThinkMaxWords < 0:
		return fmt.Errorf("shaping.think_max_words %d must be ≥ 0", c.Shaping.ThinkMaxWords)
	case c.Actor.TrainLayers < 0:
		return fmt.Errorf("actor.train_layers %d must be ≥ 0 (0 trains every weight)", c.Actor.TrainLayers)
	case c.Critic.TrainLayers < 0:
		return fmt.Errorf("critic.train_layers %d must be ≥ 0 (0 trains every weight)", c.Critic.TrainLayers)
	}
	if err := c.LoRA.check(c); err != nil {
		return err
	}
	if err := c.checkRolloutFilter(); err != nil {
		return err
	}
	if err := c.checkBiLevelGAE(); err != nil {
		return err
	}
	// Learning rates, warm-up ratios and the other numbers: checkRanges.
	return c.checkRanges()
}

// validate checks the layout; known says whether a tag exists.
func (e Envs) validate(key string, known func(tag string) error) error {
	if len(e.Tags) == 0 || len(e.Tags) != len(e.NGroups) {
		return fmt.Errorf("%s.tags and %s.n_groups must be lists of the same non-zero length", key, key)
	}
	sum := 0
	for i, tag := range e.Tags {
		if err := known(tag); err != nil {
			return fmt.Errorf("%s.tags: %w", key, err)
		}
		if e.NGroups[i] < 1 {
			return fmt.Errorf("%s.n_groups[%d] %d (tag %s) must be ≥ 1", key, i, e.NGroups[i], tag)
		}
		sum += e.NGroups[i]
	}
	if sum != e.EnvGroups {
		return fmt.Errorf("%s.n_groups sum to %d, but %s.env_groups is %d", key, sum, key, e.EnvGroups)
	}
	if e.GroupSize < 1 {
		return fmt.Errorf("%s.group_size %d must be ≥ 1", key, e.GroupSize)
	}
	return nil
}
