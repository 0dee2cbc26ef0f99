package tokenizer

import (
	_ "embed"
	"errors"
	"fmt"
	"sync"

	"github.com/ragen-go/ragen/tokenizer/jinja"
)

// Message roles of chat templates.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Qwen25ChatTemplate is the chat_template of Qwen2.5-Instruct's
// tokenizer_config.json, the format RAGEN's Qwen2.5 runs use (the tests'
// Qwen tokenizer carries it).
//
//go:embed qwen2.5-instruct-chat-template.jinja
var Qwen25ChatTemplate string

// Message is one chat message.
type Message struct {
	Role    string `json:"role"`    // system, user, assistant or tool
	Content string `json:"content"` // the text, put in verbatim
}

// ErrNoChatTemplate is returned by RenderChat for a tokenizer that has no
// chat template.
var ErrNoChatTemplate = errors.New("no chat template")

// chat is a tokenizer's parsed chat template, parsed on first use: a
// template outside package jinja's subset fails only the commands that
// render chats.
type chat struct {
	once sync.Once
	tmpl *jinja.Template
	err  error
}

// HasChatTemplate says whether the tokenizer has a chat template.
func (t *Tokenizer) HasChatTemplate() bool { return t.chatTempl != "" }

// RenderChat returns the text the tokenizer's own chat template renders for
// msgs, as transformers' apply_chat_template(msgs, tokenize=False,
// add_generation_prompt=addGenerationPrompt) does: the template comes from
// tokenizer_config.json's chat_template, chat_template.jinja beside it, or
// a GGUF file's tokenizer.chat_template, and sees the tokenizer's special
// tokens (bos_token, eos_token, pad_token, unk_token) as transformers
// passes them. Errors name the template and, for a construct the renderer
// does not support, the construct (package jinja).
func (t *Tokenizer) RenderChat(msgs []Message, addGenerationPrompt bool) (string, error) {
	if len(msgs) == 0 {
		return "", errors.New("chat: no messages")
	}
	tmpl, err := t.chatTemplate()
	if err != nil {
		return "", err
	}
	list := make([]any, len(msgs))
	for i, m := range msgs {
		d := jinja.NewDict()
		if err := d.Set("role", m.Role); err != nil {
			return "", err
		}
		if err := d.Set("content", m.Content); err != nil {
			return "", err
		}
		list[i] = d
	}
	return tmpl.Render(jinja.ChatVars(list, nil, addGenerationPrompt, t.specialTokenVars()))
}

// chatTemplate parses the chat template once.
func (t *Tokenizer) chatTemplate() (*jinja.Template, error) {
	if t.chatTempl == "" {
		return nil, fmt.Errorf("tokenizer %s: %w (tokenizer_config.json's chat_template, chat_template.jinja or a GGUF file's tokenizer.chat_template)", t.path, ErrNoChatTemplate)
	}
	t.chat.once.Do(func() { t.chat.tmpl, t.chat.err = jinja.Parse(t.chatName, t.chatTempl) })
	return t.chat.tmpl, t.chat.err
}

// specialTokenVars are the special tokens transformers gives a chat
// template, by their special_tokens_map names.
func (t *Tokenizer) specialTokenVars() map[string]any {
	vars := map[string]any{}
	for name, id := range map[string]int{"bos_token": t.bos, "eos_token": t.eos, "pad_token": t.pad, "unk_token": t.unk} {
		if id >= 0 && id < len(t.tokens) && t.tokens[id] != nil {
			vars[name] = string(t.tokens[id])
		}
	}
	return vars
}

// GenerationPrefix is the text RAGEN appends after the generation prompt to
// force the model to open its reasoning (<think>) or, with thinking off, its
// answer (<answer>). The model's output continues it, so parsing prepends it
// again (docs/ragen.md#prompts).
func GenerationPrefix(enableThink bool) string {
	if enableThink {
		return "<think>"
	}
	return "<answer>"
}

// RenderPrompt is the full text RAGEN generates from: RenderChat with the
// generation prompt, then GenerationPrefix.
func (t *Tokenizer) RenderPrompt(msgs []Message, enableThink bool) (string, error) {
	s, err := t.RenderChat(msgs, true)
	if err != nil {
		return "", err
	}
	return s + GenerationPrefix(enableThink), nil
}
