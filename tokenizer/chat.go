package tokenizer

import (
	_ "embed"
	"errors"
	"fmt"
	"strings"
)

// Chat-format tokens of Qwen (ChatML).
const (
	IMStart   = "<|im_start|>"  // opens a message; id 151644 in Qwen's vocabulary
	IMEnd     = "<|im_end|>"    // closes a message; Qwen2.5-Instruct's eos, id 151645
	EndOfText = "<|endoftext|>" // Qwen's pad token, id 151643
)

// Message roles of the chat template.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// DefaultSystemPrompt is what Qwen2.5-Instruct's template inserts when the
// first message is not a system message.
const DefaultSystemPrompt = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."

// Qwen25ChatTemplate is the Jinja chat_template of Qwen2.5-Instruct's
// tokenizer_config.json, which RenderChat reproduces for messages without
// tool calls.
//
//go:embed qwen2.5-instruct-chat-template.jinja
var Qwen25ChatTemplate string

// Message is one chat message.
type Message struct {
	Role    string `json:"role"`    // system, user, assistant or tool
	Content string `json:"content"` // the text, put in verbatim
}

// RenderChat returns the text that Qwen2.5-Instruct's chat template renders
// for msgs (tokenizer.apply_chat_template(msgs, tokenize=False,
// add_generation_prompt=...)), byte for byte:
//
//   - a system block first: msgs[0] when it is a system message, otherwise
//     DefaultSystemPrompt;
//   - each message as <|im_start|>{role}\n{content}<|im_end|>\n;
//   - consecutive tool messages as one user message, each content wrapped
//     in \n<tool_response>\n...\n</tool_response>;
//   - with addGenerationPrompt, <|im_start|>assistant\n at the end.
//
// The template silently drops messages of other roles; RenderChat reports
// them as errors instead, and an empty list too (the template fails on it).
func RenderChat(msgs []Message, addGenerationPrompt bool) (string, error) {
	if len(msgs) == 0 {
		return "", errors.New("chat: no messages")
	}
	n := 64
	for _, m := range msgs {
		n += len(m.Content) + 32
	}
	var b strings.Builder
	b.Grow(n)
	block := func(role, content string) {
		b.WriteString(IMStart)
		b.WriteString(role)
		b.WriteByte('\n')
		b.WriteString(content)
		b.WriteString(IMEnd)
		b.WriteByte('\n')
	}
	if msgs[0].Role == RoleSystem {
		block(RoleSystem, msgs[0].Content)
	} else {
		block(RoleSystem, DefaultSystemPrompt)
	}
	for i, m := range msgs {
		switch m.Role {
		case RoleSystem:
			if i > 0 {
				block(m.Role, m.Content)
			}
		case RoleUser, RoleAssistant:
			block(m.Role, m.Content)
		case RoleTool:
			if i == 0 || msgs[i-1].Role != RoleTool {
				b.WriteString(IMStart + RoleUser)
			}
			b.WriteString("\n<tool_response>\n")
			b.WriteString(m.Content)
			b.WriteString("\n</tool_response>")
			if i == len(msgs)-1 || msgs[i+1].Role != RoleTool {
				b.WriteString(IMEnd + "\n")
			}
		default:
			return "", fmt.Errorf("chat: message %d has role %q; want system, user, assistant or tool", i, m.Role)
		}
	}
	if addGenerationPrompt {
		b.WriteString(IMStart + RoleAssistant + "\n")
	}
	return b.String(), nil
}

// GenerationPrefix is the text RAGEN appends after the generation prompt to
// force the model to open its reasoning (<think>) or, with thinking off, its
// answer (<answer>). The model's output continues it, so parsing prepends it
// again (spec §3.3–3.4).
func GenerationPrefix(enableThink bool) string {
	if enableThink {
		return "<think>"
	}
	return "<answer>"
}

// RenderPrompt is the full text RAGEN generates from: RenderChat with the
// generation prompt, then GenerationPrefix.
func RenderPrompt(msgs []Message, enableThink bool) (string, error) {
	s, err := RenderChat(msgs, true)
	if err != nil {
		return "", err
	}
	return s + GenerationPrefix(enableThink), nil
}
