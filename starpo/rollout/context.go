package rollout

import (
	"fmt"
	"strconv"

	"github.com/ragen-go/ragen/envs"
	"github.com/ragen-go/ragen/tokenizer"
)

// SystemPrompt is RAGEN's system message, trailing space included (spec §3.2).
const SystemPrompt = "You're a helpful assistant. "

// Sequence is one token sequence of a trajectory, in token coordinates:
// LossMask[i] is 1 when IDs[i] was sampled by the policy (its log-prob, the
// prediction of token i from tokens < i, is trained) and 0 for prompt,
// environment text and the <|im_end|> appended after a generation that
// stopped without one. In response coordinates (position j predicts token
// j+1) the mask is LossMask[1:].
type Sequence struct {
	IDs         []int     // the tokens, prompt and sampled ones in order
	LossMask    []float64 // len(IDs); 1 exactly on trained sampled ids
	OldLogProbs []float64 // len(IDs); the sampling log-prob where LossMask is 1, else 0
	TurnEnds    []int     // index in IDs of each trained turn's last sampled token
}

// format is the answer format the state block asks for.
func (m *Manager) format() string {
	if m.cfg.EnableThink {
		return "<think> [Your thoughts] </think> <answer> [your answer] </answer>"
	}
	return "<answer> [your answer] </answer>"
}

// stateBlock is the "State:" block of a turn (spec §3.2), newline-terminated.
func (m *Manager) stateBlock(e Entry, maxTokens int) string {
	return "State:\n" + e.State + "\nYou have " + strconv.Itoa(e.ActionsLeft) +
		" actions left. Always output: " + m.format() +
		" with no extra text. Strictly follow this format. Max response length: " +
		strconv.Itoa(maxTokens) + " words (tokens).\n"
}

// rewardText prints a turn reward as RAGEN's prompt does: Python's repr of
// the sum, which starts from the integer 0, so a turn that executed nothing
// shows "0" and any other a float ("0.0", "-0.1", "10.9").
func rewardText(e Entry) string {
	if len(e.Actions) == 0 {
		return "0"
	}
	return envs.PyFloat(e.Reward)
}

// firstUser is the first user message: the tag prefix and turn 1's state.
func (m *Manager) firstUser(prefix string, e Entry, maxTokens int) string {
	return prefix + "\nTurn 1:\n" + m.stateBlock(e, maxTokens)
}

// nextUser is the user message after an answered turn: its reward, then
// turn k's header and state.
func (m *Manager) nextUser(prev Entry, k int, e Entry, maxTokens int) string {
	return "Reward:\n" + rewardText(prev) + "\n" + "\nTurn " + strconv.Itoa(k) + ":\n" + m.stateBlock(e, maxTokens)
}

// window is the history a turn's prompt shows: entries up to and including
// entry t, the last MaxContextWindow of them when that is positive, with
// turn numbering restarting at 1 (spec §3.6).
func (m *Manager) window(h []Entry, t int) []Entry {
	lo := 0
	if k := m.cfg.MaxContextWindow; k > 0 {
		lo = max(0, t+1-k)
	}
	return h[lo : t+1]
}

// messages is the chat RAGEN renders for w: system, the first user message,
// then each answered entry's raw response and, when another entry follows,
// the user message with its reward and the next state.
func (m *Manager) messages(prefix string, w []Entry, maxTokens int) []tokenizer.Message {
	msgs := []tokenizer.Message{
		{Role: tokenizer.RoleSystem, Content: SystemPrompt},
		{Role: tokenizer.RoleUser, Content: m.firstUser(prefix, w[0], maxTokens)},
	}
	for i, e := range w {
		if !e.Answered {
			break
		}
		msgs = append(msgs, tokenizer.Message{Role: tokenizer.RoleAssistant, Content: e.RawResponse})
		if i+1 < len(w) {
			msgs = append(msgs, tokenizer.Message{Role: tokenizer.RoleUser, Content: m.nextUser(e, i+2, w[i+1], maxTokens)})
		}
	}
	return msgs
}

// layout builds the token sequence of w with the sampled ids in place of
// the assistant contents. Where w ends with an unanswered entry it is that
// turn's prompt, ending with the generation prompt and prefix; where every
// entry is answered it ends "<|im_end|>\n" as RAGEN's update text does.
// Entries from trainFrom on are trained (mask, log-probs, turn ends).
//
// Its text is RenderChat of messages(w) (plus the generation prefix for a
// prompt) whenever each entry's sampled ids decode to its raw response
// without the prefix: only the ids differ from a re-tokenisation.
func (m *Manager) layout(prefix string, w []Entry, trainFrom, maxTokens int) (Sequence, error) {
	var s Sequence
	context := func(ids []int) {
		s.IDs = append(s.IDs, ids...)
		for range ids {
			s.LossMask = append(s.LossMask, 0)
			s.OldLogProbs = append(s.OldLogProbs, 0)
		}
	}
	head, err := tokenizer.RenderPrompt(m.messages(prefix, w[:1], maxTokens)[:2], m.cfg.EnableThink)
	if err != nil {
		return Sequence{}, fmt.Errorf("rollout: rendering the first prompt: %w", err)
	}
	context(m.tok.Encode(head))
	genPrompt := tokenizer.IMEnd + "\n" + tokenizer.IMStart + tokenizer.RoleAssistant + "\n" +
		tokenizer.GenerationPrefix(m.cfg.EnableThink)
	for i, e := range w {
		if !e.Answered {
			if i != len(w)-1 {
				return Sequence{}, fmt.Errorf("rollout: history entry %d of %d is unanswered", i, len(w))
			}
			break
		}
		if i >= trainFrom {
			for j, id := range e.IDs {
				s.IDs = append(s.IDs, id)
				s.LossMask = append(s.LossMask, 1)
				s.OldLogProbs = append(s.OldLogProbs, float64(e.LogProbs[j]))
			}
			s.TurnEnds = append(s.TurnEnds, len(s.IDs)-1)
		} else {
			context(e.IDs)
		}
		if e.IDs[len(e.IDs)-1] != m.imEnd {
			context([]int{m.imEnd}) // it stopped on "</answer>" or the length limit
		}
		if i+1 < len(w) {
			context(m.tok.Encode("\n" + tokenizer.IMStart + tokenizer.RoleUser + "\n" +
				m.nextUser(e, i+2, w[i+1], maxTokens) + genPrompt))
		} else {
			context(m.tok.Encode("\n"))
		}
	}
	return s, nil
}

// Prompt returns the token ids environment i generates its next turn from.
func (m *Manager) Prompt(i int) ([]int, error) {
	if err := m.checkIndex(i); err != nil {
		return nil, err
	}
	e := m.envs[i]
	w := m.window(e.history, len(e.history)-1)
	s, err := m.layout(e.prefix, w, len(w), e.spec.MaxTokens)
	return s.IDs, err
}

// PromptMessages returns the chat of environment i's next prompt, as RAGEN
// would render it (with raw responses); RenderPrompt of it decodes from
// Prompt's ids.
func (m *Manager) PromptMessages(i int) ([]tokenizer.Message, error) {
	if err := m.checkIndex(i); err != nil {
		return nil, err
	}
	e := m.envs[i]
	return m.messages(e.prefix, m.window(e.history, len(e.history)-1), e.spec.MaxTokens), nil
}
