package tokenizer

import (
	"strings"
	"testing"
)

func TestRenderChatLayout(t *testing.T) {
	msgs := []Message{
		{RoleSystem, "You're a helpful assistant. "},
		{RoleUser, "State:\n#_P#"},
		{RoleAssistant, "<answer>Up</answer>"},
	}
	want := "<|im_start|>system\nYou're a helpful assistant. <|im_end|>\n" +
		"<|im_start|>user\nState:\n#_P#<|im_end|>\n" +
		"<|im_start|>assistant\n<answer>Up</answer><|im_end|>\n"
	got, err := RenderChat(msgs, false)
	if err != nil || got != want {
		t.Errorf("RenderChat = %q, %v\nwant %q", got, err, want)
	}
	got, err = RenderChat(msgs, true)
	if err != nil || got != want+"<|im_start|>assistant\n" {
		t.Errorf("with generation prompt: %q, %v", got, err)
	}
	got, err = RenderPrompt(msgs[:2], true)
	if err != nil || !strings.HasSuffix(got, "<|im_end|>\n<|im_start|>assistant\n<think>") {
		t.Errorf("RenderPrompt(think) = %q, %v", got, err)
	}
	got, err = RenderPrompt(msgs[:2], false)
	if err != nil || !strings.HasSuffix(got, "<|im_start|>assistant\n<answer>") {
		t.Errorf("RenderPrompt(no think) = %q, %v", got, err)
	}
	got, err = RenderChat([]Message{{RoleUser, "hi"}}, false)
	if want := "<|im_start|>system\n" + DefaultSystemPrompt + "<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n"; err != nil || got != want {
		t.Errorf("no system message: %q, %v; want %q", got, err, want)
	}
}

func TestRenderChatErrors(t *testing.T) {
	if _, err := RenderChat(nil, true); err == nil {
		t.Error("no error for an empty chat")
	}
	_, err := RenderChat([]Message{{RoleUser, "a"}, {"critic", "b"}}, false)
	if err == nil || !strings.Contains(err.Error(), `message 1 has role "critic"`) {
		t.Errorf("unknown role: %v", err)
	}
	if _, err := RenderPrompt(nil, true); err == nil {
		t.Error("RenderPrompt: no error for an empty chat")
	}
}

func TestGenerationPrefix(t *testing.T) {
	if GenerationPrefix(true) != "<think>" || GenerationPrefix(false) != "<answer>" {
		t.Errorf("GenerationPrefix = %q, %q", GenerationPrefix(true), GenerationPrefix(false))
	}
}

// RenderChat's constants are the template's: its default system prompt, and
// the block layout. The test vocabulary ships Qwen3's template, not
// Qwen2.5's, which ChatTemplate lets a caller notice.
func TestQwen25Template(t *testing.T) {
	for _, s := range []string{
		"'<|im_start|>system\\n" + DefaultSystemPrompt + "<|im_end|>\\n'",
		"'<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n'",
		"'<|im_start|>assistant\\n'",
		"'\\n<tool_response>\\n'",
	} {
		if !strings.Contains(Qwen25ChatTemplate, s) {
			t.Errorf("Qwen25ChatTemplate lacks %s", s)
		}
	}
	tmpl := qwen3(t).ChatTemplate()
	if tmpl == "" || tmpl == Qwen25ChatTemplate || !strings.Contains(tmpl, "reasoning_content") {
		t.Errorf("the test vocabulary's chat_template should be Qwen3's; got %.80q", tmpl)
	}
}
