package parity

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ragen-go/ragen/tokenizer/jinja"
)

// The chat templates of Qwen2.5-Instruct, SmolLM2-Instruct and
// Llama-3.2-Instruct (tokenizer/jinja/testdata/) rendered by package jinja
// and by transformers' own render_jinja_template (the code behind
// apply_chat_template(..., tokenize=False)), on the same conversations:
// the texts must be equal byte for byte, and where transformers raises,
// jinja must fail too, with the same message.

// chatCase is one conversation as apply_chat_template takes it; JSON
// values keep their key order on both sides.
type chatCase struct {
	Name                string                     `json:"-"`
	Messages            json.RawMessage            `json:"messages"`
	AddGenerationPrompt bool                       `json:"add_generation_prompt"`
	Tools               json.RawMessage            `json:"tools,omitempty"`
	Vars                map[string]json.RawMessage `json:"vars,omitempty"`
}

// chatNow is strftime_now's frozen clock on both sides.
var chatNow = time.Date(2024, 9, 5, 13, 4, 5, 0, time.UTC)

func TestChatTemplate(t *testing.T) {
	py := python(t)
	for _, tc := range []struct {
		file  string
		cases []chatCase
	}{
		{"qwen2.5-instruct.jinja", qwenChats()},
		{"smollm2-instruct.jinja", smolChats()},
		{"llama3.2-instruct.jinja", llamaChats()},
	} {
		t.Run(tc.file, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join(filepath.Dir(script(t, "x")), "..", "..", "tokenizer", "jinja", "testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			compareChats(t, py, tc.file, string(src), tc.cases)
		})
	}
}

// refOutcome is the reference's answer for one conversation.
type refOutcome struct {
	Text  *string `json:"text"`
	Error string  `json:"error"`
	Type  string  `json:"type"`
}

func compareChats(t *testing.T, py, name, src string, cases []chatCase) {
	tmpl, err := jinja.Parse(name, src)
	if err != nil {
		t.Fatal(err)
	}
	req := map[string]any{"template": src, "conversations": cases, "now": chatNow.Format("2006-01-02T15:04:05")}
	var resp struct{ Conversations []refOutcome }
	if err := runPython(py, script(t, "chat_template_ref.py"), req, &resp); err != nil {
		t.Fatal(err)
	}
	if len(resp.Conversations) != len(cases) {
		t.Fatalf("%d answers for %d conversations", len(resp.Conversations), len(cases))
	}
	raised := 0
	for i, c := range cases {
		ref := resp.Conversations[i]
		got, err := renderChat(tmpl, c)
		switch {
		case ref.Text != nil && err != nil:
			t.Errorf("%s: transformers renders, jinja fails: %v", c.Name, err)
		case ref.Text != nil && got != *ref.Text:
			t.Errorf("%s: texts differ\njinja:        %q\ntransformers: %q", c.Name, got, *ref.Text)
		case ref.Text == nil && err == nil:
			t.Errorf("%s: transformers raises %s(%q), jinja renders %q", c.Name, ref.Type, ref.Error, got)
		case ref.Text == nil:
			raised++
			t.Logf("%s: both fail: %s(%q)", c.Name, ref.Type, ref.Error)
			var je *jinja.Error
			if !errors.As(err, &je) || je.Msg != ref.Error || je.Raised != (ref.Type == "TemplateError") {
				t.Errorf("%s: transformers raises %s(%q), jinja fails with %v", c.Name, ref.Type, ref.Error, err)
			}
		}
	}
	t.Logf("%d conversations compared, %d of them failing on transformers' side", len(cases), raised)
}

// renderChat renders c as apply_chat_template would.
func renderChat(tmpl *jinja.Template, c chatCase) (string, error) {
	msgs, err := jinja.DecodeJSON(c.Messages)
	if err != nil {
		return "", err
	}
	var tools any
	if c.Tools != nil {
		if tools, err = jinja.DecodeJSON(c.Tools); err != nil {
			return "", err
		}
	}
	extra := map[string]any{}
	for k, v := range c.Vars {
		extra[k] = v
	}
	vars := jinja.ChatVars(msgs, tools, c.AddGenerationPrompt, extra)
	return tmpl.RenderOptions(vars, jinja.Options{Now: func() time.Time { return chatNow }})
}

// Message texts that stress the templates: whitespace at the ends, blank
// lines, quotes and backslashes, unicode, empty.
var (
	sysRagen  = "You're a helpful assistant. "
	board     = "You are solving the Sokoban puzzle. You are the player and you need to push all boxes to targets.\nTurn 1:\nState:\n######\n#_P__#\n#_X_O#\n#____#\n######\nYou have 10 actions left. Always output: <think> [Your thoughts] </think> <answer> [your answer] </answer> with no extra text. Strictly follow this format.\nDecide the next action:\n"
	board2    = "Turn 2:\nReward:\n-0.1\nState:\n######\n#__P_#\n#_X_O#\n#____#\n######\nYou have 9 actions left. Always output: <think> [Your thoughts] </think> <answer> [your answer] </answer> with no extra text.\n"
	answer    = "<think>The box is below me; I should go around it.</think><answer>Left || Up</answer>"
	answer2   = "<think>Push right.</think><answer>Right</answer>"
	padded    = "  leading and trailing spaces \n\n"
	newlines  = "\n\nline one\n\nline two\n"
	unicodeS  = "héllo wörld — 你好 🌍\u00a0nbsp\ttab «quotes» ﬁ"
	quoted    = `He said "hi" \ and 'bye' {{ not a tag }} {% nor this %}`
	emptyText = ""
)

func msg(role, content string) map[string]any {
	return map[string]any{"role": role, "content": content}
}

// rawJSON marshals v (maps marshal with sorted keys; use raw strings where
// order matters).
func rawJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// baseConversations are message lists for every template, by name.
func baseConversations() []struct {
	name string
	msgs json.RawMessage
} {
	type conv = struct {
		name string
		msgs json.RawMessage
	}
	list := func(ms ...map[string]any) json.RawMessage { return rawJSON(ms) }
	return []conv{
		{"single user", list(msg("user", "Hello!"))},
		{"system and user", list(msg("system", sysRagen), msg("user", board))},
		{"ragen two turns", list(msg("system", sysRagen), msg("user", board), msg("assistant", answer), msg("user", board2))},
		{"ragen three turns", list(msg("system", sysRagen), msg("user", board), msg("assistant", answer), msg("user", board2), msg("assistant", answer2))},
		{"no system multi-turn", list(msg("user", board), msg("assistant", answer), msg("user", board2), msg("assistant", answer2))},
		{"padded contents", list(msg("system", padded), msg("user", newlines), msg("assistant", padded))},
		{"unicode", list(msg("user", unicodeS), msg("assistant", unicodeS))},
		{"quotes and braces", list(msg("system", quoted), msg("user", quoted))},
		{"empty contents", list(msg("system", emptyText), msg("user", emptyText), msg("assistant", emptyText))},
		{"empty user only", list(msg("user", emptyText))},
		{"system only", list(msg("system", sysRagen))},
		{"second system message", list(msg("user", "a"), msg("system", "mid-conversation system"), msg("user", "b"))},
		{"assistant first", list(msg("assistant", answer), msg("user", "ok"))},
		{"whitespace only", list(msg("system", " \n\t "), msg("user", "\n"))},
		{"long conversation", list(msg("system", sysRagen), msg("user", board), msg("assistant", answer), msg("user", board2), msg("assistant", answer2), msg("user", board), msg("assistant", answer), msg("user", board2))},
	}
}

// withPrompts pairs each conversation with add_generation_prompt false
// and true.
func withPrompts(vars map[string]json.RawMessage) []chatCase {
	var out []chatCase
	for _, c := range baseConversations() {
		for _, agp := range []bool{false, true} {
			out = append(out, chatCase{Name: fmt.Sprintf("%s/agp=%v", c.name, agp), Messages: c.msgs, AddGenerationPrompt: agp, Vars: vars})
		}
	}
	return out
}

// Tool definitions and calls, with the key order of transformers' docs.
const (
	weatherTool  = `{"type": "function", "function": {"name": "get_current_temperature", "description": "Get the current temperature at a location.", "parameters": {"type": "object", "properties": {"location": {"type": "string", "description": "The location to get the temperature for, in the format \"City, Country\""}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "description": "The unit to return the temperature in."}}, "required": ["location", "unit"]}, "return": {"type": "number", "description": "The current temperature, in °C or °F."}}}`
	moveTool     = `{"type": "function", "function": {"name": "move", "description": "Move the player one step.", "parameters": {"type": "object", "properties": {"direction": {"type": "string", "enum": ["Up", "Down", "Left", "Right"]}, "steps": {"type": "integer", "minimum": 1}}, "required": ["direction"]}}}`
	toolCall     = `{"type": "function", "function": {"name": "get_current_temperature", "arguments": {"location": "Paris, France", "unit": "celsius"}}}`
	toolCall2    = `{"type": "function", "function": {"name": "move", "arguments": {"direction": "Left", "steps": 2, "note": "ünïcode \"quoted\"", "ok": true, "ratio": 0.5, "none": null}}}`
	toolCallStr  = `{"type": "function", "function": {"name": "move", "arguments": "{\"direction\": \"Up\"}"}}`
	toolCallBare = `{"name": "move", "arguments": {"direction": "Down"}}`
)

func tools(ts ...string) json.RawMessage { return json.RawMessage("[" + strings.Join(ts, ", ") + "]") }

func qwenChats() []chatCase {
	cs := withPrompts(nil)
	both := tools(weatherTool, moveTool)
	add := func(name, msgs string, tl json.RawMessage, agp bool) {
		cs = append(cs, chatCase{Name: name, Messages: json.RawMessage(msgs), Tools: tl, AddGenerationPrompt: agp})
	}
	add("tools, no system", `[{"role": "user", "content": "What is the temperature in Paris?"}]`, both, true)
	add("tools with system", `[{"role": "system", "content": "You're a helpful assistant. "}, {"role": "user", "content": "Hi"}]`, both, false)
	add("empty tool list", `[{"role": "user", "content": "Hi"}]`, tools(), true)
	add("tool call and response", `[{"role": "user", "content": "Temperature in Paris?"}, {"role": "assistant", "content": "", "tool_calls": [`+toolCall+`]}, {"role": "tool", "content": "22.0"}, {"role": "assistant", "content": "It is 22 °C."}]`, both, false)
	add("tool call with content", `[{"role": "user", "content": "Go left twice"}, {"role": "assistant", "content": "<think>left</think>", "tool_calls": [`+toolCall2+`]}, {"role": "tool", "content": "moved"}]`, both, true)
	add("two tool calls and responses", `[{"role": "system", "content": "sys"}, {"role": "user", "content": "both"}, {"role": "assistant", "content": null, "tool_calls": [`+toolCall+`, `+toolCall2+`]}, {"role": "tool", "content": "22.0"}, {"role": "tool", "content": "{\"moved\": true}"}, {"role": "user", "content": "thanks"}]`, both, true)
	add("string arguments and bare call", `[{"role": "user", "content": "up then down"}, {"role": "assistant", "content": "", "tool_calls": [`+toolCallStr+`, `+toolCallBare+`]}]`, both, false)
	add("tool call without tools", `[{"role": "user", "content": "Temperature?"}, {"role": "assistant", "content": "", "tool_calls": [`+toolCall+`]}, {"role": "tool", "content": "22.0"}]`, nil, true)
	add("tool message first", `[{"role": "tool", "content": "orphan result"}, {"role": "user", "content": "what was that?"}]`, nil, false)
	add("unknown role dropped", `[{"role": "user", "content": "a"}, {"role": "narrator", "content": "b"}]`, nil, false)
	add("empty conversation", `[]`, nil, true)
	add("missing content", `[{"role": "user"}]`, nil, false)
	add("list content", `[{"role": "user", "content": [{"type": "text", "text": "hi"}]}]`, nil, false)
	return cs
}

func smolChats() []chatCase {
	cs := withPrompts(nil)
	add := func(name, msgs string, agp bool) {
		cs = append(cs, chatCase{Name: name, Messages: json.RawMessage(msgs), AddGenerationPrompt: agp})
	}
	add("empty conversation", `[]`, true)
	add("missing content", `[{"role": "user"}]`, false)
	add("numeric content", `[{"role": "user", "content": 42}]`, false)
	add("extra keys", `[{"role": "user", "content": "hi", "name": "bob"}]`, true)
	return cs
}

func llamaChats() []chatCase {
	date := map[string]json.RawMessage{"bos_token": rawJSON("<|begin_of_text|>"), "date_string": rawJSON("26 Jul 2024")}
	cs := withPrompts(date)
	both := tools(weatherTool, moveTool)
	vars := func(kv ...string) map[string]json.RawMessage {
		v := map[string]json.RawMessage{"bos_token": rawJSON("<|begin_of_text|>")}
		for i := 0; i < len(kv); i += 2 {
			v[kv[i]] = json.RawMessage(kv[i+1])
		}
		return v
	}
	add := func(name, msgs string, tl json.RawMessage, agp bool, v map[string]json.RawMessage) {
		cs = append(cs, chatCase{Name: name, Messages: json.RawMessage(msgs), Tools: tl, AddGenerationPrompt: agp, Vars: v})
	}
	user := `[{"role": "system", "content": "  You're a helpful assistant.  "}, {"role": "user", "content": "  What is the temperature in Paris?\n"}]`
	add("clock date", `[{"role": "user", "content": "Hi"}]`, nil, true, vars())
	add("clock date with system", `[{"role": "system", "content": "sys"}, {"role": "user", "content": "Hi"}]`, nil, false, vars())
	add("tools in user message", user, both, true, vars("date_string", `"01 Jan 2025"`))
	add("tools in system message", user, both, true, vars("date_string", `"01 Jan 2025"`, "tools_in_user_message", "false"))
	add("custom tools", user, nil, false, vars("date_string", `"01 Jan 2025"`, "custom_tools", string(tools(moveTool))))
	add("tools without a user message", `[{"role": "system", "content": "sys"}]`, both, true, vars("date_string", `"01 Jan 2025"`))
	add("tool call and ipython result", `[{"role": "user", "content": "Temperature in Paris?"}, {"role": "assistant", "tool_calls": [`+toolCall+`]}, {"role": "tool", "content": "22.0"}, {"role": "assistant", "content": "22 °C"}]`, both, true, date)
	add("tool result as mapping", `[{"role": "user", "content": "Go"}, {"role": "assistant", "tool_calls": [`+toolCall2+`]}, {"role": "ipython", "content": {"moved": true, "position": [1, 2]}}]`, nil, true, date)
	add("two tool calls raise", `[{"role": "user", "content": "both"}, {"role": "assistant", "tool_calls": [`+toolCall+`, `+toolCall2+`]}]`, nil, false, date)
	add("string arguments", `[{"role": "user", "content": "up"}, {"role": "assistant", "tool_calls": [`+toolCallStr+`]}]`, nil, false, date)
	add("no bos token", `[{"role": "user", "content": "Hi"}]`, nil, true, map[string]json.RawMessage{"date_string": rawJSON("26 Jul 2024")})
	add("empty conversation", `[]`, nil, true, date)
	return cs
}
