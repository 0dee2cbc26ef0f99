package sft

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/ragen-go/ragen/envs"
	"github.com/ragen-go/ragen/starpo/rollout"
	"github.com/ragen-go/ragen/tokenizer"
)

// Demonstrations plays the expert (NewExpert) on m's environments, resetting
// with seed bases seed, seed+EnvGroups, … until n trajectories are
// collected. They are rendered exactly as rollouts are: the same prompts,
// turns, template and loss mask. It returns them with the expert's rollout
// metrics (its success rate, for the record).
func Demonstrations(m *rollout.Manager, tok *tokenizer.Tokenizer, n int, imp Imperfection,
	seed int64) ([]rollout.Trajectory, rollout.Metrics, error) {
	if n < 1 {
		return nil, nil, fmt.Errorf("demonstrations: %d episodes requested", n)
	}
	var out []rollout.Trajectory
	expert := NewExpert(m, tok, imp, seed)
	for round := int64(0); len(out) < n; round++ {
		if err := m.Reset(seed + round*int64(m.Config().EnvGroups)); err != nil {
			return nil, nil, err
		}
		trajs, _, err := m.Run(expert)
		if err != nil {
			return nil, nil, fmt.Errorf("demonstrations: %w", err)
		}
		out = append(out, trajs...)
	}
	out = out[:n]
	return out, rollout.ComputeMetrics(out, m.Config().GroupSize), nil
}

// NewExpert returns a rollout.Generator that answers each active
// environment of m as its solver does (Sokoban BFS, FrozenLake value
// iteration, the Bandit's better arm, a Countdown equation), written like a
// policy's answer: a short <think> then <answer>a || b</answer>, tokenised,
// ending where sampling would stop (on "</answer>"). imp makes it an
// imperfect expert whose demonstrations leave RL something to improve (see
// Imperfection). The expert is deterministic given seed.
func NewExpert(m *rollout.Manager, tok *tokenizer.Tokenizer, imp Imperfection, seed int64) rollout.Generator {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x5EED))
	maxPerTurn, think := m.Config().MaxActionsPerTurn, m.Config().EnableThink
	return func(prompts [][]int) ([]rollout.Generation, error) {
		idx := m.Active()
		if len(idx) != len(prompts) {
			return nil, fmt.Errorf("expert: %d prompts for %d active environments", len(prompts), len(idx))
		}
		out := make([]rollout.Generation, len(idx))
		for k, i := range idx {
			env, spec := m.Env(i)
			acts := expertActions(env, maxPerTurn)
			// The think speaks of the state before any action, so it is
			// written first; its style follows the prompt's length, which
			// varies with seed and turn, so the styles mix without
			// drawing from rng (earlier demonstrations stay as they were).
			style := len(prompts[k])
			if names := env.Actions(); len(names) > 0 && len(acts) > 0 && rng.Float64() < imp.Noise {
				acts[0] = names[rng.IntN(len(names))]
			}
			answer := strings.Join(acts, " "+envs.ActionSep+" ")
			// Drawn only when asked for, so that Invalid 0 leaves the
			// demonstrations of earlier runs unchanged.
			if imp.Invalid > 0 && rng.Float64() < imp.Invalid {
				answer = PlaceholderAnswer
			}
			// The prompt ends in the generation prefix, <think> or <answer>.
			text := answer + "</answer>"
			if think {
				text = writeThink(env, spec.EnvType, acts, imp.Grounded, style) + "</think><answer>" + text
			}
			ids := tok.Encode(text)
			out[k] = rollout.Generation{IDs: ids, LogProbs: make([]float32, len(ids)), Text: text}
		}
		return out, nil
	}
}

// PlaceholderAnswer is what an Imperfection.Invalid turn answers: the format
// instruction's placeholder copied verbatim ("Always output: <answer> [your
// answer] </answer>", docs/ragen.md#prompts), a failure of models that have
// not learned the format. It names no action, so the turn moves nothing and
// takes RAGEN's format penalty.
const PlaceholderAnswer = "[your answer]"

// Imperfection is how an expert's demonstrations depart from its solver.
type Imperfection struct {
	// Noise is the chance that a turn's first action is replaced by a
	// uniformly random one (environments with a fixed action set).
	Noise float64
	// Invalid is the chance that a turn answers PlaceholderAnswer instead
	// of its actions (after Noise is drawn).
	Invalid float64
	// Grounded writes, where the environment can (envs.ThinkWriter), a think
	// that states true claims about the board and the plan the answer
	// follows (after Noise), instead of one short templated line.
	Grounded bool
}

// expertActions is the solver's next actions (at most maxPerTurn); none
// when the environment has no solver or no solution.
func expertActions(env envs.Env, maxPerTurn int) []string {
	if p, ok := env.(envs.Policy); ok {
		// Stochastic: the plan assumes no slip; the next turn looks again.
		return p.PolicyPlan(maxPerTurn)
	}
	if s, ok := env.(envs.Solver); ok {
		if acts, ok := s.Solve(); ok {
			return acts[:min(len(acts), maxPerTurn)]
		}
	}
	return nil
}

// writeThink is the expert's think for the actions acts it answers:
// grounded when asked and the environment writes one, else expertThink's
// line.
func writeThink(env envs.Env, envType string, acts []string, grounded bool, style int) string {
	if w, ok := env.(envs.ThinkWriter); ok && grounded && len(acts) > 0 {
		return w.GroundedThink(acts, style)
	}
	return expertThink(envType, acts)
}

// expertThink is a short reasoning line per environment type.
func expertThink(envType string, acts []string) string {
	plan := strings.Join(acts, ", ")
	switch envType {
	case "bandit":
		return "The " + plan + " arm pays more on average."
	case "frozen_lake":
		return "Avoid the holes and head for the goal: " + plan + "."
	case "sokoban":
		return "Push the box onto the target: " + plan + "."
	case "countdown":
		return "Combine the numbers to reach the target."
	}
	return "Next: " + plan + "."
}
