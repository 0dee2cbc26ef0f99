package envs

import (
	"fmt"
	"strings"
)

// ActionSep separates actions inside <answer>…</answer> (RAGEN's
// agent_proxy.action_sep).
const ActionSep = "||"

// Prefix returns the first user message for tag (docs/ragen.md#prompts): the
// tag's instruction, then the symbol legend, then the action list and the
// per-episode action budget.
//
// Quirks of RAGEN kept, because RAGEN's reported numbers were measured with
// these prompts:
//   - The legend and the action list come from the environment type's
//     defaults, not the tag's own configuration. SokobanDifferentGridVocab
//     therefore lists #, _, O, √, X, P, S while its grid shows W . G C B A @.
//     (The registry stores this in Spec.PromptSymbols; register a tag with
//     its own legend there to get a consistent prompt.)
//   - Bandit lists no actions (its default action_lookup is empty until
//     Reset), and Countdown lists neither symbols nor actions.
//   - The budget printed is max_actions_per_traj (10), not the per-turn
//     limit (5).
//   - Symbols and actions are joined with ", " and the separator is shown as
//     " || " inside double quotes; the action block ends in a newline, the
//     legend block does not.
func Prefix(tag string) (string, error) {
	spec, err := Lookup(tag)
	if err != nil {
		return "", err
	}
	return SpecPrefix(spec), nil
}

// SpecPrefix builds the first user message from a spec; see Prefix.
func SpecPrefix(spec Spec) string {
	var b strings.Builder
	b.WriteString(spec.Instruction)
	if len(spec.PromptSymbols) > 0 {
		b.WriteString("\nThe meaning of each symbol in the state is:\n")
		for i, s := range spec.PromptSymbols {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(s.Char + ": " + s.Meaning)
		}
	}
	if len(spec.PromptActions) > 0 {
		b.WriteString("\nYour available actions are:\n")
		b.WriteString(strings.Join(spec.PromptActions, ", "))
		fmt.Fprintf(&b, "\nYou can make up to %d actions, separated by the action separator \" %s \"\n",
			spec.MaxActionsPerTraj, ActionSep)
	}
	return b.String()
}
