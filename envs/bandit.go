package envs

import (
	"fmt"
	"math"
	"strings"
)

// BanditConfig mirrors RAGEN's BanditEnvConfig: a low-risk arm that always
// pays LoArmScore and a high-risk arm that pays HiArmHiScore with
// probability HiArmHiScoreProb and HiArmLoScore otherwise.
type BanditConfig struct {
	LoArmName        string  // the low-risk arm, e.g. "Phoenix"
	HiArmName        string  // the high-risk arm, e.g. "Dragon"
	LoArmScore       float64 // 0.1 in the code (the paper says 0.15)
	HiArmLoScore     float64 // 0.0
	HiArmHiScore     float64 // 1.0
	HiArmHiScoreProb float64 // 0.25, so the high arm's mean is 0.25 against 0.1
}

// DefaultBanditConfig returns RAGEN's dataclass defaults.
func DefaultBanditConfig() BanditConfig {
	return BanditConfig{
		LoArmName: "phoenix", HiArmName: "dragon",
		LoArmScore: 0.1, HiArmLoScore: 0.0, HiArmHiScore: 1.0, HiArmHiScoreProb: 0.25,
	}
}

// Validate reports the first unusable field.
func (c BanditConfig) Validate() error {
	switch {
	case c.LoArmName == "" || c.HiArmName == "" ||
		strings.TrimSpace(c.LoArmName) != c.LoArmName || strings.TrimSpace(c.HiArmName) != c.HiArmName:
		// Parsed actions are stripped, so padded names could never be chosen.
		return fmt.Errorf("bandit: LoArmName %q and HiArmName %q must be non-empty without surrounding spaces",
			c.LoArmName, c.HiArmName)
	case strings.ToLower(c.LoArmName) == strings.ToLower(c.HiArmName):
		return fmt.Errorf("bandit: LoArmName %q and HiArmName %q must differ ignoring case", c.LoArmName, c.HiArmName)
	case strings.Contains(c.LoArmName, ActionSep) || strings.Contains(c.HiArmName, ActionSep):
		return fmt.Errorf("bandit: LoArmName %q and HiArmName %q must not contain %q", c.LoArmName, c.HiArmName, ActionSep)
	case !(c.HiArmHiScoreProb >= 0 && c.HiArmHiScoreProb <= 1):
		return fmt.Errorf("bandit: HiArmHiScoreProb %v must be in [0, 1]", c.HiArmHiScoreProb)
	case !finite(c.LoArmScore) || !finite(c.HiArmLoScore) || !finite(c.HiArmHiScore):
		return fmt.Errorf("bandit: LoArmScore %v, HiArmLoScore %v and HiArmHiScore %v must be finite",
			c.LoArmScore, c.HiArmLoScore, c.HiArmHiScore)
	}
	return nil
}

// banditPrompt is RAGEN's INIT_PROMPT, trailing spaces included.
const banditPrompt = "You are playing a bandit game. Goal: Maximize your total reward by choosing which arm to pull. \n" +
	"Game Rules: \n" +
	"1. There are 2 arms, named %[1]s and %[2]s\n" +
	"2. Each arm has its own reward distribution, related to their names. \n" +
	"3. Analyze the symbolic meaning of each arm's name to guess how their reward distribution might behave.\n" +
	"4. Based on the symbolic meaning of their names, which arm do you think is more likely to give higher rewards on average? " +
	"Choose between %[1]s and %[2]s, and output like <answer> %[1]s </answer> or <answer> %[2]s </answer>.\n"

// Bandit is RAGEN's two-armed bandit: one pull per episode, the arms'
// order drawn at Reset.
type Bandit struct {
	cfg    BanditConfig
	rng    seededRand
	arms   []string // arm names in the order drawn at Reset
	obs    string
	pulled bool
	ready  bool
}

// NewBandit builds a Bandit environment; call Reset before Step.
func NewBandit(cfg BanditConfig) (*Bandit, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Bandit{cfg: cfg, rng: newSeededRand(), arms: []string{cfg.LoArmName, cfg.HiArmName}}, nil
}

// Reset draws the arm order: with probability 1/2 the low arm comes first.
// The high arm's payout is drawn from the same generator at Step, so
// environments sharing a seed (RAGEN's groups) share the outcome too.
func (b *Bandit) Reset(seed int64) (string, error) {
	b.rng.seed(seed)
	if b.rng.Float64() < 0.5 {
		b.arms[0], b.arms[1] = b.cfg.LoArmName, b.cfg.HiArmName
	} else {
		b.arms[0], b.arms[1] = b.cfg.HiArmName, b.cfg.LoArmName
	}
	b.obs = fmt.Sprintf(banditPrompt, b.arms[0], b.arms[1])
	b.pulled, b.ready = false, true
	return b.obs, nil
}

// Step pulls the named arm and ends the episode. Success means choosing the
// high arm, whatever it pays this time.
func (b *Bandit) Step(action string) (string, float64, bool, Info) {
	i := actionIndex(b.Actions(), action)
	if i < 0 || !b.ready {
		return b.obs, 0, b.pulled, Info{}
	}
	arm := b.arms[i]
	reward := b.cfg.LoArmScore
	if arm == b.cfg.HiArmName {
		reward = b.cfg.HiArmLoScore
		if b.rng.Float64() < b.cfg.HiArmHiScoreProb {
			reward = b.cfg.HiArmHiScore
		}
	}
	b.obs = arm + ": " + PyFloat(reward) + " points"
	b.pulled = true
	return b.obs, reward, true, Info{
		Success:           arm == b.cfg.HiArmName,
		ActionIsValid:     true,
		ActionIsEffective: true,
	}
}

// Render returns the prompt, or the payout after the pull.
func (b *Bandit) Render() string { return b.obs }

// Actions returns the two arm names in the order drawn at Reset (low arm
// first before any Reset). The slice is shared: do not modify it.
func (b *Bandit) Actions() []string { return b.arms }

// Solve returns the arm with the higher mean payout: the high-risk arm
// under RAGEN's payouts (0.25 against 0.1).
func (b *Bandit) Solve() ([]string, bool) {
	c := b.cfg
	hiMean := c.HiArmHiScoreProb*c.HiArmHiScore + (1-c.HiArmHiScoreProb)*c.HiArmLoScore
	if c.LoArmScore > hiMean {
		return []string{c.LoArmName}, b.ready
	}
	return []string{c.HiArmName}, b.ready
}

// finite says whether x is a number, neither NaN nor infinite: a reward
// that is not would poison every advantage of its batch.
func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
