package rollout

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ragen-go/ragen/envs"
)

// Config is the environment-state manager's configuration: RAGEN's
// es_manager.{train,val}.env_configs and the agent_proxy and es_manager fields
// a rollout reads (docs/ragen.md#defaults, #rollout). The response token limit
// is the generator's business and is not here.
type Config struct {
	Tags              []string  // environment tags, in env-id order
	NGroups           []int     // groups per tag, aligned with Tags
	EnvGroups         int       // total groups; must equal the sum of NGroups
	GroupSize         int       // environments per group, all started from the group's seed
	Seed              int64     // seed base: seed.train (10000) for training, seed.val (123) for validation
	MaxTurn           int       // agent_proxy.max_turn: turns per episode
	MaxActionsPerTurn int       // agent_proxy.max_actions_per_turn: actions kept from one answer
	EnableThink       bool      // agent_proxy.enable_think: <think>…</think> before <answer>
	FormatPenalty     float64   // es_manager.format_penalty, added once per offending turn
	MaxContextWindow  int       // agent_proxy.max_context_window: history entries shown; −1 shows all
	Shaping           Shaping   // reasoning/format reward terms beyond RAGEN (zero = off)
	Reasoning         Reasoning // reasoning-aware reward terms (zero = off)
	Shard             Shard     // the share of the groups this process plays (data parallelism); zero = all
}

// Shard is a data-parallel process's share of the environments: of each
// tag's groups, rank r of world plays the r-th contiguous slice, so every
// rank gets a mix of tags (multi-turn tags take longer) and group g keeps
// its global id, seed and env ids whichever rank plays it.
type Shard struct {
	Rank, World int
}

// groups is the slice [lo, hi) of n groups that shard s plays.
func (s Shard) groups(n int) (lo, hi int) {
	if s.World <= 1 {
		return 0, n
	}
	return s.Rank * n / s.World, (s.Rank + 1) * n / s.World
}

// Shaping is the reasoning/format reward, added per answered turn to the
// trajectory score beside RAGEN's format penalty. The paper finds that
// reasoning withers under outcome-only rewards (its "thinking" responses
// shrink from ≈340 to ≈100 tokens on Sokoban); these terms let a run pay
// for reasoning that is present, bounded and followed by a valid answer,
// and charge for empty or runaway reasoning. RAGEN has none of them, so the
// defaults are all zero.
type Shaping struct {
	ThinkBonus        float64 // a turn with a non-empty <think> of at most ThinkMaxWords words and a valid answer
	EmptyThinkPenalty float64 // a turn whose <think> is empty (format matched), usually negative
	LongThinkPenalty  float64 // a turn whose <think> has more than ThinkMaxWords words, usually negative
	ThinkMaxWords     int     // the bound for the two above; 0 = no bound (no runaway penalty)
}

// Turn returns the shaping reward of one parsed answer and which term, if
// any, applied ("bonus", "empty", "long" or "").
func (s Shaping) Turn(p envs.Parsed, enableThink bool) (float64, string) {
	if !enableThink || !p.Matched {
		return 0, ""
	}
	words := len(strings.Fields(p.Think))
	switch {
	case words == 0:
		return s.EmptyThinkPenalty, "empty"
	case s.ThinkMaxWords > 0 && words > s.ThinkMaxWords:
		return s.LongThinkPenalty, "long"
	case !p.FormatPenalty:
		return s.ThinkBonus, "bonus"
	}
	return 0, ""
}

// DefaultConfig returns RAGEN's training defaults for one tag: 8 groups of 16
// SimpleSokoban environments, seed base 10000, 5 turns of at most 5 actions,
// thinking on, penalty −0.1, unlimited context.
func DefaultConfig() Config {
	return Config{
		Tags: []string{"SimpleSokoban"}, NGroups: []int{8}, EnvGroups: 8, GroupSize: 16,
		Seed: 10000, MaxTurn: 5, MaxActionsPerTurn: 5, EnableThink: true,
		FormatPenalty: -0.1, MaxContextWindow: -1,
	}
}

// Validate reports the first field that cannot make a rollout. Tags are
// checked against the registry by NewManager.
func (c Config) Validate() error {
	if len(c.Tags) == 0 {
		return errors.New("rollout config: Tags is empty")
	}
	if len(c.NGroups) != len(c.Tags) {
		return fmt.Errorf("rollout config: NGroups has %d entries for %d Tags", len(c.NGroups), len(c.Tags))
	}
	sum := 0
	for i, n := range c.NGroups {
		if n < 1 {
			return fmt.Errorf("rollout config: NGroups[%d] (tag %q) is %d, want at least 1", i, c.Tags[i], n)
		}
		sum += n
	}
	switch {
	case sum != c.EnvGroups:
		return fmt.Errorf("rollout config: NGroups sum to %d, EnvGroups is %d", sum, c.EnvGroups)
	case c.GroupSize < 1:
		return fmt.Errorf("rollout config: GroupSize %d must be at least 1", c.GroupSize)
	case c.MaxTurn < 1:
		return fmt.Errorf("rollout config: MaxTurn %d must be at least 1", c.MaxTurn)
	case c.MaxActionsPerTurn < 1:
		return fmt.Errorf("rollout config: MaxActionsPerTurn %d must be at least 1", c.MaxActionsPerTurn)
	case c.MaxContextWindow == 0 || c.MaxContextWindow < -1:
		return fmt.Errorf("rollout config: MaxContextWindow %d must be -1 (unlimited) or positive", c.MaxContextWindow)
	case c.Shard.World > 1 && (c.Shard.Rank < 0 || c.Shard.Rank >= c.Shard.World):
		return fmt.Errorf("rollout config: shard rank %d is outside [0, %d)", c.Shard.Rank, c.Shard.World)
	}
	if c.Shard.World > 1 {
		n := 0
		for _, g := range c.NGroups {
			lo, hi := c.Shard.groups(g)
			n += hi - lo
		}
		if n == 0 {
			return fmt.Errorf("rollout config: rank %d of %d gets no environment group: %d groups (%v) are too few "+
				"for %d processes", c.Shard.Rank, c.Shard.World, c.EnvGroups, c.NGroups, c.Shard.World)
		}
	}
	return nil
}

// TrainSeed is the seed base of training step step (0-based): RAGEN's reset
// counter grows by EnvGroups per reset, so every step sees fresh initial
// states (10000–10007, then 10008–10015, … with the defaults). It is a
// function of the step, not hidden state, so a resumed run continues the
// sequence. Validation resets with Seed itself every time.
func (c Config) TrainSeed(step int) int64 {
	return c.Seed + int64(step)*int64(c.EnvGroups)
}
