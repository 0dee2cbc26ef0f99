package rollout

import (
	"errors"
	"fmt"

	"github.com/ragen-go/ragen/tokenizer"
)

// Generator samples one answer per prompt, in order. The caller wires the
// model's sampler and the tokenizer's DecodeSkipSpecial into it; sampling
// should stop at <|im_end|> (and may stop at "</answer>" or a length limit).
type Generator func(prompts [][]int) ([]Generation, error)

// Trajectory is one environment's episode, ready for scoring and update.
//
// With MaxContextWindow −1 the embedded Sequence is the whole episode, one
// training sequence: every turn's prompt is a prefix of it, so the sampled
// ids sit in exactly the context they were sampled in and OldLogProbs are
// on-policy. With MaxContextWindow k > 0 turns see different contexts, so
// the embedded Sequence is empty and PerTurn holds one sequence per turn
// (its windowed prompt, then its sampled ids, the only trained tokens).
type Trajectory struct {
	EnvID, GroupID    int
	Tag               string
	Seed              int64
	Sequence                              // the episode as one sequence (MaxContextWindow −1)
	PerTurn           []Sequence          // one sequence per turn (MaxContextWindow > 0)
	TurnRewards       []float64           // env reward of each turn
	Penalty           float64             // accumulated format penalty
	Shaping           float64             // accumulated reasoning/format shaping reward
	Score             float64             // sum of TurnRewards plus Penalty plus Shaping
	Terms             TermTurns           // turns each reward term applied to
	Turns             []TurnThink         // each answered turn's think (thinking enabled)
	ReasoningReward   ReasoningReward     // the reasoning reward by component, part of Shaping
	Success           bool                // terminated and not truncated
	NumActions        int                 // actions executed
	ActionIsValid     float64             // turns whose last step was valid, over turns
	ActionIsEffective float64             // turns whose last step changed the state, over turns
	ResponseTokens    int                 // sampled tokens over all turns
	Messages          []tokenizer.Message // the whole chat with raw responses, for inspection
}

// Rows are the trajectory's training sequences: the whole episode, or with
// a context window one per turn (PerTurn).
func (t Trajectory) Rows() []Sequence {
	if len(t.PerTurn) > 0 {
		return t.PerTurn
	}
	return []Sequence{t.Sequence}
}

// Run plays one rollout from the current Reset (docs/ragen.md#rollout): up to
// MaxTurn times it prompts the active environments, generates, and steps them,
// stopping early when none is active. It returns every environment's
// trajectory, in env-id order, and the rollout metrics. Call Reset before each
// Run.
func (m *Manager) Run(gen Generator) ([]Trajectory, Metrics, error) {
	if !m.reset {
		return nil, nil, errors.New("rollout: Run needs a Reset before each rollout")
	}
	m.reset = false
	for turn := range m.cfg.MaxTurn {
		idx := m.Active()
		if len(idx) == 0 {
			break
		}
		prompts := make([][]int, len(idx))
		if err := parallel(len(idx), func(k int) (err error) {
			prompts[k], err = m.Prompt(idx[k])
			return err
		}); err != nil {
			return nil, nil, err
		}
		for k, i := range idx {
			h := m.envs[i].history
			h[len(h)-1].prompt = prompts[k]
		}
		gens, err := gen(prompts)
		if err != nil {
			return nil, nil, fmt.Errorf("rollout: generating turn %d: %w", turn+1, err)
		}
		if len(gens) != len(prompts) {
			return nil, nil, fmt.Errorf("rollout: generator returned %d generations for %d prompts in turn %d",
				len(gens), len(prompts), turn+1)
		}
		if err := m.Step(idx, gens); err != nil {
			return nil, nil, fmt.Errorf("rollout: turn %d: %w", turn+1, err)
		}
	}
	trajs, err := m.Trajectories()
	if err != nil {
		return nil, nil, err
	}
	return trajs, ComputeMetrics(trajs, m.cfg.GroupSize), nil
}

// Trajectories formulates every environment's episode so far
// (docs/ragen.md#training-sequence, with the sampled ids kept: see the package
// doc).
func (m *Manager) Trajectories() ([]Trajectory, error) {
	out := make([]Trajectory, len(m.envs))
	err := parallel(len(m.envs), func(i int) (err error) {
		out[i], err = m.trajectory(m.envs[i])
		return err
	})
	return out, err
}

func (m *Manager) trajectory(e *envState) (Trajectory, error) {
	if e.history == nil {
		return Trajectory{}, fmt.Errorf("rollout: env %d has not been reset", e.id)
	}
	t := Trajectory{
		EnvID: e.id, GroupID: e.group, Tag: e.tag, Seed: e.seed,
		TurnRewards:     append([]float64(nil), e.status.Rewards...),
		Penalty:         e.status.Penalty,
		Shaping:         e.status.Shaping,
		Terms:           e.status.Terms,
		Turns:           e.status.Turns,
		ReasoningReward: e.status.Reasoning,
		Success:         e.status.Success(),
		NumActions:      e.status.NumActions,
	}
	t.Score = t.Penalty + t.Shaping
	for _, r := range t.TurnRewards {
		t.Score += r
	}
	answered := e.history[:len(e.history)-1] // the last entry is the post-final state
	if len(answered) == 0 {
		return t, nil
	}
	for _, h := range answered {
		t.ResponseTokens += len(h.IDs)
		if h.Info.ActionIsValid {
			t.ActionIsValid++
		}
		if h.Info.ActionIsEffective {
			t.ActionIsEffective++
		}
	}
	n := float64(len(answered))
	t.ActionIsValid /= n
	t.ActionIsEffective /= n
	t.Messages = m.messages(e.prefix, answered, e.spec.MaxTokens)

	var err error
	if m.cfg.MaxContextWindow <= 0 {
		t.Sequence, err = m.layout(e.prefix, answered, 0, e.spec.MaxTokens)
		return t, err
	}
	for k := range answered {
		w := m.window(answered, k)
		s, err := m.layout(e.prefix, w, len(w)-1, e.spec.MaxTokens)
		if err != nil {
			return Trajectory{}, err
		}
		t.PerTurn = append(t.PerTurn, s)
	}
	return t, nil
}
