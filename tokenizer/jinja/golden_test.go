package jinja

import (
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/golden.json with transformers' renders (needs RAGEN_PARITY_PYTHON)")

// goldenChat is one conversation rendered by a real chat template, with
// what transformers' apply_chat_template(..., tokenize=False) gives for it:
// text, or the message of the error it raises.
type goldenChat struct {
	Template            string                     `json:"template"`
	Name                string                     `json:"name"`
	Messages            json.RawMessage            `json:"messages"`
	Tools               json.RawMessage            `json:"tools,omitempty"`
	AddGenerationPrompt bool                       `json:"add_generation_prompt"`
	Vars                map[string]json.RawMessage `json:"vars,omitempty"`
	Text                *string                    `json:"text,omitempty"`
	Error               string                     `json:"error,omitempty"`
}

// goldenNow is strftime_now's clock in the golden renders.
var goldenNow = time.Date(2024, 9, 5, 13, 4, 5, 0, time.UTC)

// TestGolden renders the chats of testdata/golden.json with the real
// templates of Qwen2.5-Instruct, SmolLM2-Instruct and Llama-3.2-Instruct
// and compares them with transformers' renders stored there (regenerate
// them with -update).
func TestGolden(t *testing.T) {
	path := filepath.Join("testdata", "golden.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var chats []goldenChat
	if err := json.Unmarshal(data, &chats); err != nil {
		t.Fatal(err)
	}
	if *update {
		updateGolden(t, path, chats)
		return
	}
	templates := map[string]*Template{}
	for _, c := range chats {
		tmpl := templates[c.Template]
		if tmpl == nil {
			src, err := os.ReadFile(filepath.Join("testdata", c.Template))
			if err != nil {
				t.Fatal(err)
			}
			if tmpl, err = Parse(c.Template, string(src)); err != nil {
				t.Fatal(err)
			}
			templates[c.Template] = tmpl
		}
		got, err := renderGolden(tmpl, c)
		switch {
		case c.Text != nil && err != nil:
			t.Errorf("%s %s: %v", c.Template, c.Name, err)
		case c.Text != nil && got != *c.Text:
			t.Errorf("%s %s:\n got %q\nwant %q", c.Template, c.Name, got, *c.Text)
		case c.Text == nil:
			var e *Error
			if !errors.As(err, &e) || e.Msg != c.Error {
				t.Errorf("%s %s: error %v, want %q", c.Template, c.Name, err, c.Error)
			}
		}
	}
}

func renderGolden(tmpl *Template, c goldenChat) (string, error) {
	msgs, err := DecodeJSON(c.Messages)
	if err != nil {
		return "", err
	}
	var tools any
	if c.Tools != nil {
		if tools, err = DecodeJSON(c.Tools); err != nil {
			return "", err
		}
	}
	extra := map[string]any{}
	for k, v := range c.Vars {
		extra[k] = v
	}
	return tmpl.RenderOptions(ChatVars(msgs, tools, c.AddGenerationPrompt, extra), Options{Now: func() time.Time { return goldenNow }})
}

// updateGolden asks transformers for the chats' renders, one request per
// template, and rewrites the file.
func updateGolden(t *testing.T, path string, chats []goldenChat) {
	byTemplate := map[string][]int{}
	for i, c := range chats {
		byTemplate[c.Template] = append(byTemplate[c.Template], i)
	}
	for name, idx := range byTemplate {
		src, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		var convs []any
		for _, i := range idx {
			c := chats[i]
			convs = append(convs, map[string]any{"messages": c.Messages, "tools": c.Tools, "add_generation_prompt": c.AddGenerationPrompt, "vars": c.Vars})
		}
		req := map[string]any{"template": string(src), "now": goldenNow.Format("2006-01-02T15:04:05"), "conversations": convs}
		outs, _ := reference(t, req)
		for j, i := range idx {
			chats[i].Text, chats[i].Error = outs[j].Text, outs[j].Error
		}
	}
	out, err := json.MarshalIndent(chats, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(out, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkRenderQwen renders a RAGEN-like three-turn chat with Qwen2.5's
// template, as a rollout does once per turn.
func BenchmarkRenderQwen(b *testing.B) {
	src, err := os.ReadFile(filepath.Join("testdata", "qwen2.5-instruct.jinja"))
	if err != nil {
		b.Fatal(err)
	}
	tmpl, err := Parse("qwen", string(src))
	if err != nil {
		b.Fatal(err)
	}
	msgs, err := DecodeJSON([]byte(`[{"role": "system", "content": "You're a helpful assistant. "},
		{"role": "user", "content": "######\n#_P__#\n#_X_O#\n######\nYour answer:"},
		{"role": "assistant", "content": "<think>push</think><answer>Left || Up</answer>"},
		{"role": "user", "content": "######\n#__P_#\n#_X_O#\n######\nYour answer:"}]`))
	if err != nil {
		b.Fatal(err)
	}
	vars := ChatVars(msgs, nil, true, nil)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tmpl.Render(vars); err != nil {
			b.Fatal(err)
		}
	}
}

// TestConcurrentRenders renders one parsed template from many goroutines
// with shared variables: a Template and the caller's values are only read.
func TestConcurrentRenders(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var chats []goldenChat
	if err := json.Unmarshal(data, &chats); err != nil {
		t.Fatal(err)
	}
	c := chats[0]
	src, err := os.ReadFile(filepath.Join("testdata", c.Template))
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := Parse(c.Template, string(src))
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := DecodeJSON(c.Messages)
	if err != nil {
		t.Fatal(err)
	}
	vars := ChatVars(msgs, nil, c.AddGenerationPrompt, nil)
	want, err := tmpl.Render(vars)
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			for range 50 {
				got, err := tmpl.Render(vars)
				if err == nil && got != want {
					err = errors.New("a concurrent render differs")
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
