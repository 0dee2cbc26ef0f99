package rollout

import (
	"strconv"
	"strings"
)

// Metrics are rollout metrics by RAGEN's names (docs/ragen.md#metrics),
// without the train/ or val-env/ prefix, which the caller adds.
type Metrics map[string]float64

// ComputeMetrics gives, for each tag, the means over its environments of
// success, num_actions, action_is_effective and action_is_valid (each a
// per-turn average within an episode), and pass@{groupSize}: the fraction
// of the tag's groups with at least one success. Two more separate format
// from play: valid_episodes, the share of episodes whose every turn was a
// valid action, and success_in_valid, the success among those episodes
// (absent when there are none). response_length is the
// mean number of sampled tokens per trajectory, over all tags. The reward
// terms are means per trajectory over all tags: reward/env (summed turn
// rewards), reward/format_penalty, reward/shaping, and the share of answered
// turns each term applied to (reward/*_turns).
func ComputeMetrics(trajs []Trajectory, groupSize int) Metrics {
	type acc struct {
		n, success, actions, effective, valid float64
		allValid, successValid                float64      // episodes with every turn valid, and those of them that succeeded
		groups                                map[int]bool // group id → any success
	}
	byTag := map[string]*acc{}
	out := Metrics{}
	var tokens, env, pen, shaping, turns, penT, bonusT, emptyT, longT float64
	for _, t := range trajs {
		a := byTag[t.Tag]
		if a == nil {
			a = &acc{groups: map[int]bool{}}
			byTag[t.Tag] = a
		}
		a.n++
		if t.Success {
			a.success++
		}
		a.actions += float64(t.NumActions)
		a.effective += t.ActionIsEffective
		a.valid += t.ActionIsValid
		if t.ActionIsValid == 1 {
			a.allValid++
			if t.Success {
				a.successValid++
			}
		}
		a.groups[t.GroupID] = a.groups[t.GroupID] || t.Success
		tokens += float64(t.ResponseTokens)
		for _, r := range t.TurnRewards {
			env += r
		}
		pen += t.Penalty
		shaping += t.Shaping
		turns += float64(len(t.TurnRewards))
		penT += float64(t.Terms.Penalty)
		bonusT += float64(t.Terms.ThinkBonus)
		emptyT += float64(t.Terms.EmptyThink)
		longT += float64(t.Terms.LongThink)
	}
	for tag, a := range byTag {
		out[tag+"/success"] = a.success / a.n
		out[tag+"/num_actions"] = a.actions / a.n
		out[tag+"/action_is_effective"] = a.effective / a.n
		out[tag+"/action_is_valid"] = a.valid / a.n
		out[tag+"/valid_episodes"] = a.allValid / a.n
		if a.allValid > 0 {
			out[tag+"/success_in_valid"] = a.successValid / a.allValid
		}
		pass := 0.0
		for _, ok := range a.groups {
			if ok {
				pass++
			}
		}
		out[tag+"/pass@"+strconv.Itoa(groupSize)] = pass / float64(len(a.groups))
	}
	if n := float64(len(trajs)); n > 0 {
		out["response_length"] = tokens / n
		out["reward/env"], out["reward/format_penalty"], out["reward/shaping"] = env/n, pen/n, shaping/n
	}
	for k, v := range thinkMetrics(trajs) {
		out[k] = v
	}
	if turns > 0 {
		out["reward/format_penalty_turns"] = penT / turns
		out["reward/think_bonus_turns"] = bonusT / turns
		out["reward/empty_think_turns"] = emptyT / turns
		out["reward/long_think_turns"] = longT / turns
	}
	return out
}

// ByTag picks one per-tag metric (success, action_is_valid, …) out of m,
// by tag.
func (m Metrics) ByTag(name string) map[string]float64 {
	out := map[string]float64{}
	for k, v := range m {
		if tag, ok := strings.CutSuffix(k, "/"+name); ok {
			out[tag] = v
		}
	}
	return out
}
