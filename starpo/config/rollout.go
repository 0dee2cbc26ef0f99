package config

import "github.com/ragen-go/ragen/starpo/rollout"

// RolloutConfig is the rollout manager's configuration for the
// environments e (Train, Val, or a variant of them) reset from seed: the
// agent's turn and action limits, its format penalty, context window and
// reward shaping.
func (c Config) RolloutConfig(e Envs, seed int64) rollout.Config {
	rc := rollout.DefaultConfig()
	rc.Tags, rc.NGroups, rc.EnvGroups, rc.GroupSize, rc.Seed = e.Tags, e.NGroups, e.EnvGroups, e.GroupSize, seed
	rc.MaxTurn, rc.MaxActionsPerTurn, rc.EnableThink = c.Agent.MaxTurn, c.Agent.MaxActionsPerTurn, c.Agent.EnableThink
	rc.FormatPenalty, rc.MaxContextWindow = c.Agent.FormatPenalty, c.Agent.MaxContextWindow
	rc.Shaping = rollout.Shaping(c.Shaping)
	rc.Reasoning = rollout.Reasoning(c.Reasoning)
	return rc
}
