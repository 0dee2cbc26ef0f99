package rollout

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ragen-go/ragen/envs"
	"github.com/ragen-go/ragen/tokenizer"
)

// SystemPrompt is RAGEN's system message, trailing space included
// (docs/ragen.md#prompts).
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

// stateBlock is the "State:" block of a turn (docs/ragen.md#prompts),
// newline-terminated.
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
// turn numbering restarting at 1 (docs/ragen.md#context-window).
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
			next := m.nextUser(e, i+2, w[i+1], maxTokens)
			msgs = append(msgs, tokenizer.Message{Role: tokenizer.RoleUser, Content: next})
		}
	}
	return msgs
}

// sentinel stands for the sampled text of answered entry k when a chat is
// rendered: the template places it where that generation goes. Private-use
// characters, which no prompt of this project contains.
func sentinel(k int) string { return "\ue000ragen-generation-" + strconv.Itoa(k) + "\ue001" }

// renderText renders the chat of w with each answered entry's generation
// replaced by its sentinel, after the generation prefix it was sampled
// from; with a prompt (w ends with an unanswered entry) it ends with the
// generation prompt and prefix. n is the number of sentinels.
func (m *Manager) renderText(prefix string, w []Entry, maxTokens int) (text string, n int, err error) {
	msgs := m.messages(prefix, w, maxTokens)
	for i := range msgs {
		if msgs[i].Role == tokenizer.RoleAssistant {
			msgs[i].Content = tokenizer.GenerationPrefix(m.cfg.EnableThink) + sentinel(n)
			n++
		}
	}
	prompt := !w[len(w)-1].Answered
	if text, err = m.tok.RenderChat(msgs, prompt); err != nil {
		return "", 0, fmt.Errorf("rollout: rendering a prompt with the chat template: %w", err)
	}
	if prompt {
		text += tokenizer.GenerationPrefix(m.cfg.EnableThink)
	}
	return text, n, nil
}

// render is renderText cut at the sentinels: segs[k] is the text before
// generation k (after generation k−1), and the last segment what follows
// the last generation: the next turn's generation prompt and prefix, or,
// when every entry is answered, the template's close of the last answer.
func (m *Manager) render(prefix string, w []Entry, maxTokens int) ([]string, error) {
	text, n, err := m.renderText(prefix, w, maxTokens)
	if err != nil {
		return nil, err
	}
	return m.cut(text, n)
}

// cut cuts a rendered text at its n sentinels.
func (m *Manager) cut(text string, n int) ([]string, error) {
	segs := make([]string, 0, n+1)
	for k := range n {
		before, after, ok := strings.Cut(text, sentinel(k))
		if !ok || strings.Contains(after, sentinel(k)) {
			return nil, fmt.Errorf("rollout: the chat template of %s does not render an assistant message's "+
				"content exactly once and unchanged, so the sampled ids cannot be placed in the conversation",
				m.tok.Path())
		}
		segs = append(segs, before)
		text = after
	}
	return append(segs, text), nil
}

// layout builds the token sequence of w with the sampled ids in place of
// the generations. Where w ends with an unanswered entry it is that turn's
// prompt, ending with the generation prompt and prefix; where every entry
// is answered it is the prompt of the last answer, its sampled ids, and the
// template's close of that answer ("<|im_end|>\n" in ChatML). Entries from
// trainFrom on are trained (mask, log-probs, turn ends).
//
// Each piece of template text is encoded on its own, and a piece that
// begins with the token the generation stopped on (its end-of-turn token,
// sampled and trained) does not repeat it. A generation that stopped on a
// stop string or the length limit gets the template's end-of-turn token as
// context, not trained.
func (m *Manager) layout(prefix string, w []Entry, trainFrom, maxTokens int) (Sequence, error) {
	var segs []string
	var err error
	if !w[len(w)-1].Answered {
		segs, err = m.render(prefix, w, maxTokens)
	} else {
		// The last answer's context is the prompt it was sampled from, and
		// the close is the full conversation's text after it.
		last := len(w) - 1
		asked := append(slices.Clone(w[:last]), Entry{State: w[last].State, ActionsLeft: w[last].ActionsLeft})
		if segs, err = m.render(prefix, asked, maxTokens); err == nil {
			var full []string
			if full, err = m.render(prefix, w, maxTokens); err == nil {
				segs = append(segs, full[len(full)-1])
			}
		}
	}
	if err != nil {
		return Sequence{}, err
	}
	var s Sequence
	context := func(text string) {
		ids := m.tok.Encode(text)
		s.IDs = append(s.IDs, ids...)
		for range ids {
			s.LossMask = append(s.LossMask, 0)
			s.OldLogProbs = append(s.OldLogProbs, 0)
		}
	}
	context(segs[0])
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
			s.IDs = append(s.IDs, e.IDs...)
			for range e.IDs {
				s.LossMask = append(s.LossMask, 0)
				s.OldLogProbs = append(s.OldLogProbs, 0)
			}
		}
		context(m.afterStop(segs[i+1], e.IDs))
	}
	return s, nil
}

// afterStop is the template text after a generation, less the special token
// it begins with when the generation already ended on that token.
func (m *Manager) afterStop(text string, ids []int) string {
	if len(ids) == 0 {
		return text
	}
	last := ids[len(ids)-1]
	if !m.tok.IsSpecial(last) {
		return text
	}
	tokText, err := m.tok.Decode([]int{last})
	if err != nil || tokText == "" {
		return text
	}
	return strings.TrimPrefix(text, tokText)
}

// checkTemplate makes sure the chat template extends a conversation's
// prompt when a turn is added, as ChatML and Llama 3's do: a trajectory is
// one training sequence whose earlier turns must read as they were sampled.
// It renders the prompts of a three-turn conversation and checks that each
// begins with the one before and its generation.
func (m *Manager) checkTemplate() error {
	w := []Entry{{State: "#P_#", ActionsLeft: 3}}
	prev := ""
	for k := range 3 {
		text, n, err := m.renderText("Probe.", w, 100)
		if err != nil {
			return err
		}
		if _, err := m.cut(text, n); err != nil {
			return err
		}
		if !strings.HasPrefix(text, prev) {
			return fmt.Errorf("rollout: the chat template of %s renders a conversation's earlier turns "+
				"differently once a turn is added, so a multi-turn trajectory could not be trained on the "+
				"prompts it was sampled from", m.tok.Path())
		}
		prev = text + sentinel(k)
		last := &w[len(w)-1]
		last.Answered, last.Actions, last.Reward, last.RawResponse = true, []string{"Up"}, -0.1, "x"
		w = append(w, Entry{State: "#_P#", ActionsLeft: 2 - k})
	}
	return nil
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
