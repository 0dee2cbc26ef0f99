package tokenizer

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The test vocabulary carries Qwen2.5-Instruct's template: RenderChat is
// that template's ChatML.
func TestRenderChatQwen(t *testing.T) {
	tok := qwen3(t)
	msgs := []Message{
		{RoleSystem, "You're a helpful assistant. "},
		{RoleUser, "State:\n#_P#"},
		{RoleAssistant, "<answer>Up</answer>"},
	}
	want := "<|im_start|>system\nYou're a helpful assistant. <|im_end|>\n" +
		"<|im_start|>user\nState:\n#_P#<|im_end|>\n" +
		"<|im_start|>assistant\n<answer>Up</answer><|im_end|>\n"
	got, err := tok.RenderChat(msgs, false)
	if err != nil || got != want {
		t.Errorf("RenderChat = %q, %v\nwant %q", got, err, want)
	}
	got, err = tok.RenderChat(msgs, true)
	if err != nil || got != want+"<|im_start|>assistant\n" {
		t.Errorf("with generation prompt: %q, %v", got, err)
	}
	got, err = tok.RenderPrompt(msgs[:2], true)
	if err != nil || !strings.HasSuffix(got, "<|im_end|>\n<|im_start|>assistant\n<think>") {
		t.Errorf("RenderPrompt(think) = %q, %v", got, err)
	}
	got, err = tok.RenderPrompt(msgs[:2], false)
	if err != nil || !strings.HasSuffix(got, "<|im_start|>assistant\n<answer>") {
		t.Errorf("RenderPrompt(no think) = %q, %v", got, err)
	}
	got, err = tok.RenderChat([]Message{{RoleUser, "hi"}}, false)
	if want := "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n" +
		"<|im_start|>user\nhi<|im_end|>\n"; err != nil || got != want {
		t.Errorf("no system message: %q, %v; want %q", got, err, want)
	}
	if tok.ChatTemplate() != Qwen25ChatTemplate {
		t.Errorf("the test vocabulary's template is not Qwen2.5-Instruct's (scripts/fetch-tokenizer-data.sh)")
	}
}

// Llama 3.2's template: the fixed date line and the header tokens.
func TestRenderChatLlama(t *testing.T) {
	tok := llama32(t)
	got, err := tok.RenderChat([]Message{{RoleSystem, " Be brief. "}, {RoleUser, "hi\n"}}, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\nToday Date: ",
		"Be brief.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("Llama 3.2 render %q lacks %q", got, want)
		}
	}
}

func TestRenderChatErrors(t *testing.T) {
	tok := qwen3(t)
	if _, err := tok.RenderChat(nil, true); err == nil {
		t.Error("no error for an empty chat")
	}
	if _, err := tok.RenderPrompt(nil, true); err == nil {
		t.Error("RenderPrompt: no error for an empty chat")
	}
	// A folder without a template, and one whose template uses a construct
	// outside the supported subset.
	dir := t.TempDir()
	data, err := os.ReadFile(tok.Path())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	bare, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bare.RenderChat([]Message{{RoleUser, "hi"}}, true); !errors.Is(err, ErrNoChatTemplate) {
		t.Errorf("no template: %v", err)
	}
	jinjaPath := filepath.Join(dir, "chat_template.jinja")
	if err := os.WriteFile(jinjaPath, []byte("{% for m in messages %}{{ m.content | wordwrap(5) }}{% endfor %}"), 0o644); err != nil {
		t.Fatal(err)
	}
	odd, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = odd.RenderChat([]Message{{RoleUser, "hi"}}, true)
	if err == nil || !strings.Contains(err.Error(), jinjaPath) || !strings.Contains(err.Error(), "wordwrap") {
		t.Errorf("unsupported construct: %v; want an error naming %s and the filter", err, jinjaPath)
	}
}

func TestGenerationPrefix(t *testing.T) {
	if GenerationPrefix(true) != "<think>" || GenerationPrefix(false) != "<answer>" {
		t.Errorf("GenerationPrefix = %q, %q", GenerationPrefix(true), GenerationPrefix(false))
	}
}
