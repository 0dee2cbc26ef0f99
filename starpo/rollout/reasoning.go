package rollout

import (
	"slices"
	"sort"
	"strings"

	"github.com/ragen-go/ragen/envs"
	"github.com/ragen-go/ragen/tokenizer"
)

// Reasoning holds the weights of the reasoning-aware reward terms, added per
// answered turn to the trajectory score beside the format penalty (so the
// RL math is unchanged; docs/training.md, "Rewarding the think"). Each reads
// what the think says, checked by the environment against the state the
// think was written in (envs.Reason). All are zero by default, as in RAGEN.
type Reasoning struct {
	// Consistency pays +w when the actions the think commits to equal the
	// answer's, and charges −w when the think commits to others.
	Consistency float64
	// Claims pays +w per true claim about the board and charges −w per
	// false one; at most ClaimsCap claims a turn count, so repeating a true
	// sentence does not pay without end.
	Claims float64
	// Plan pays w × the progress of the think's plan when it is legal
	// (simulated on a copy of the environment) and charges −w when it is
	// not.
	Plan float64
}

// ClaimsCap is how many claims of one turn the claims term counts.
const ClaimsCap = 3

// On reports whether any reasoning term is enabled.
func (r Reasoning) On() bool { return r.Consistency != 0 || r.Claims != 0 || r.Plan != 0 }

// ReasoningReward is the reasoning reward by component.
type ReasoningReward struct {
	Consistency, Claims, Plan float64
}

// Sum is the components' total.
func (r ReasoningReward) Sum() float64 { return r.Consistency + r.Claims + r.Plan }

func (r *ReasoningReward) add(o ReasoningReward) {
	r.Consistency += o.Consistency
	r.Claims += o.Claims
	r.Plan += o.Plan
}

// TurnThink is one answered turn's think: what it said, the tokens it took,
// and what the environment's checks made of it. Turns are recorded only
// with thinking enabled.
type TurnThink struct {
	Think  string // the stripped think ("" when empty or not closed)
	Closed bool   // the response closed its think with </think>
	// Tokens is the number of sampled tokens of the think's content
	// (between <think> and </think>, tags excluded); 0 when not closed.
	Tokens int
	Prompt []int // the prompt the turn was generated from, ending in the <think> prefix
	// ThinkIDs are the sampled ids of the think's content: the longest
	// prefix of the generation that decodes to a prefix of the text before
	// </think> (a token straddling the tag is left out).
	ThinkIDs []int
	Check    envs.Reasoning  // the think checked against the state it was written in
	Agree    int             // +1: the committed actions equal the answer's; −1: they differ; 0: no commitment
	Reward   ReasoningReward // the reasoning reward this turn earned
}

// think reads a turn's think before its actions run (the checks need the
// state the think was written in) and scores it with the weights w.
func think(tok *tokenizer.Tokenizer, env envs.Env, g Generation, p envs.Parsed, maxPerTurn int, w Reasoning) TurnThink {
	t := TurnThink{}
	// g.Text is what followed the prompt's <think> prefix.
	if i := strings.Index(g.Text, "</think>"); i >= 0 {
		t.Closed = true
		t.ThinkIDs = thinkIDs(tok, g.IDs, g.Text[:i])
		t.Tokens = len(t.ThinkIDs)
	}
	if !p.Matched {
		return t
	}
	t.Think = p.Think
	if t.Think != "" {
		t.Check = envs.Reason(env, t.Think)
	}
	if c := t.Check.Commits; len(c) > 0 {
		t.Agree = -1
		if len(p.Valid) > 0 && slices.Equal(c[:min(len(c), maxPerTurn)], p.Valid) {
			t.Agree = 1
		}
	}
	t.Reward = ReasoningReward{Consistency: w.Consistency * float64(t.Agree)}
	if n := t.Check.Claims; n > 0 {
		scored := min(n, ClaimsCap)
		right := min(t.Check.TrueClaims, scored) // true claims first: the cap never turns a true one false
		t.Reward.Claims = w.Claims * float64(right-(scored-right))
	}
	if t.Check.PlanChecked {
		if t.Check.PlanLegal {
			t.Reward.Plan = w.Plan * t.Check.PlanProgress
		} else {
			t.Reward.Plan = -w.Plan
		}
	}
	return t
}

// thinkIDs is the longest prefix of ids whose decoding is a prefix of text.
// Decoded prefixes grow with the prefix length, so a binary search finds it.
func thinkIDs(tok *tokenizer.Tokenizer, ids []int, text string) []int {
	k := sort.Search(len(ids)+1, func(n int) bool {
		s, err := tok.DecodeSkipSpecial(ids[:n])
		return err != nil || !strings.HasPrefix(text, s)
	})
	return slices.Clone(ids[:max(k-1, 0)])
}

// thinkMetrics are the think diagnostics of a batch (docs/training.md,
// "Think diagnostics"), by name without prefix; empty when no turn was
// recorded (thinking off).
func thinkMetrics(trajs []Trajectory) Metrics {
	var (
		tokens                                     []float64
		empty, repeat, repeatable                  float64
		commits, agree, claimTurns, claims, truths float64
		plans, legal, progress                     float64
		rew                                        ReasoningReward
	)
	for _, t := range trajs {
		rew.add(t.ReasoningReward)
		for k, turn := range t.Turns {
			tokens = append(tokens, float64(turn.Tokens))
			if turn.Tokens == 0 {
				empty++
			}
			if k > 0 && turn.Think != "" {
				repeatable++
				if strings.Join(strings.Fields(turn.Think), " ") == strings.Join(strings.Fields(t.Turns[k-1].Think), " ") {
					repeat++
				}
			}
			c := turn.Check
			if len(c.Commits) > 0 {
				commits++
				if turn.Agree > 0 {
					agree++
				}
			}
			if c.Claims > 0 {
				claimTurns++
				claims += float64(c.Claims)
				truths += float64(c.TrueClaims)
			}
			if c.PlanChecked {
				plans++
				if c.PlanLegal {
					legal++
					progress += c.PlanProgress
				}
			}
		}
	}
	out := Metrics{}
	n := float64(len(tokens))
	if n == 0 {
		return out
	}
	sort.Float64s(tokens)
	out["think/tokens_mean"] = mean(tokens)
	out["think/tokens_median"] = (tokens[(len(tokens)-1)/2] + tokens[len(tokens)/2]) / 2
	out["think/empty_share"] = empty / n
	out["reasoning/commit_turns"] = commits / n
	out["reasoning/claim_turns"] = claimTurns / n
	out["reasoning/plan_turns"] = plans / n
	out.ratio("think/repeat_share", repeat, repeatable)
	out.ratio("reasoning/agreement", agree, commits)
	out.ratio("reasoning/claim_accuracy", truths, claims)
	out.ratio("reasoning/plan_legal", legal, plans)
	out.ratio("reasoning/plan_progress", progress, plans)
	nt := float64(len(trajs))
	out["reward/reasoning/consistency"] = rew.Consistency / nt
	out["reward/reasoning/claims"] = rew.Claims / nt
	out["reward/reasoning/plan"] = rew.Plan / nt
	return out
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// ratio sets m[name] = a/b when there is something to measure (b > 0):
// an agreement rate over no committed turn is not 0, it is absent, and the
// curve has a gap rather than a false dip.
func (m Metrics) ratio(name string, a, b float64) {
	if b > 0 {
		m[name] = a / b
	}
}
