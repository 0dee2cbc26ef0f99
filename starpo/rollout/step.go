package rollout

import (
	"fmt"
	"slices"

	"github.com/ragen-go/ragen/envs"
)

// Generation is the policy's answer to one prompt.
type Generation struct {
	IDs      []int     // the sampled token ids, <|im_end|> last when sampling stopped on it
	LogProbs []float32 // log-probability of each sampled id under the sampling policy
	Text     string    // the ids decoded with special tokens skipped
}

// Apply feeds environment i's answer to it (docs/ragen.md#parsing): the
// text is parsed, the valid actions up to the episode's remaining budget are
// executed in order until one ends the episode, the format penalty is added
// when the answer earns it, and the episode-end rules are applied. The
// sampled ids and log-probs are kept, copied, for training.
func (m *Manager) Apply(i int, g Generation) error {
	if err := m.checkIndex(i); err != nil {
		return err
	}
	e := m.envs[i]
	switch {
	case e.status.Terminated:
		return fmt.Errorf("rollout: env %d is terminated and takes no more answers", i)
	case len(g.IDs) == 0:
		return fmt.Errorf("rollout: generation for env %d has no ids", i)
	case len(g.LogProbs) != len(g.IDs):
		return fmt.Errorf("rollout: generation for env %d has %d log-probs for %d ids", i, len(g.LogProbs), len(g.IDs))
	}
	// Ids past the tokenizer's are allowed: Qwen2.5's embedding has rows
	// beyond its vocabulary (151936 for 151665 tokens) that a sampler can
	// pick. They carry no text (the transcript, like HuggingFace's decode,
	// skips them) and are trained on as sampled; the model bounds them.
	for _, id := range g.IDs {
		if id < 0 {
			return fmt.Errorf("rollout: generation for env %d has negative token id %d", i, id)
		}
	}
	p := envs.ParseResponse(g.Text, m.cfg.EnableThink, m.cfg.MaxActionsPerTurn, e.env)
	if m.cfg.EnableThink { // before the actions run: the think speaks of this state
		t := think(m.tok, e.env, g, p, m.cfg.MaxActionsPerTurn, m.cfg.Reasoning)
		t.Prompt = e.history[len(e.history)-1].prompt
		e.status.Turns = append(e.status.Turns, t)
		e.status.Reasoning.add(t.Reward)
		e.status.Shaping += t.Reward.Sum()
	}
	limit := e.spec.MaxActionsPerTraj - e.status.NumActions
	valid := p.Valid[:min(len(p.Valid), max(limit, 0))]

	var (
		reward   float64
		info     envs.Info
		done     bool
		executed []string
	)
	for _, a := range valid {
		_, r, d, inf := e.env.Step(a)
		reward += r
		info = inf
		executed = append(executed, a)
		if d {
			done = true
			break
		}
	}
	if p.FormatPenalty {
		e.status.Penalty += m.cfg.FormatPenalty
		e.status.Terms.Penalty++
	}
	shaped, term := m.cfg.Shaping.Turn(p, m.cfg.EnableThink)
	e.status.Shaping += shaped
	switch term {
	case "bonus":
		e.status.Terms.ThinkBonus++
	case "empty":
		e.status.Terms.EmptyThink++
	case "long":
		e.status.Terms.LongThink++
	}
	st := &e.status
	st.NumActions += len(executed)
	st.Rewards = append(st.Rewards, reward)
	if done {
		st.Terminated, st.Truncated = true, !info.Success
	} else if st.NumActions >= e.spec.MaxActionsPerTraj {
		st.Terminated, st.Truncated = true, true
	}

	cur := &e.history[len(e.history)-1]
	cur.Answered = true
	cur.Actions, cur.Reward, cur.Info = executed, reward, info
	cur.Response, cur.RawResponse = p.Response, p.Raw
	cur.IDs, cur.LogProbs = slices.Clone(g.IDs), slices.Clone(g.LogProbs)
	e.history = append(e.history, Entry{
		State:       e.env.Render(),
		ActionsLeft: e.spec.MaxActionsPerTraj - st.NumActions,
	})
	return nil
}

// Step applies a batch of answers, gens[k] to environment idx[k], each
// environment on its own goroutine. An index may appear once.
func (m *Manager) Step(idx []int, gens []Generation) error {
	if len(idx) != len(gens) {
		return fmt.Errorf("rollout: %d generations for %d environments", len(gens), len(idx))
	}
	seen := make(map[int]bool, len(idx))
	for _, i := range idx {
		if err := m.checkIndex(i); err != nil {
			return err
		}
		if seen[i] {
			return fmt.Errorf("rollout: env %d appears twice in one step", i)
		}
		seen[i] = true
	}
	return parallel(len(idx), func(k int) error { return m.Apply(idx[k], gens[k]) })
}
