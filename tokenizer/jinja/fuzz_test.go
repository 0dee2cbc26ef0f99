package jinja

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// fuzzVars are the variables of a fuzzed render when the fuzzed JSON is
// not an object: a chat with a tool call, as the templates expect.
const fuzzVars = `{"messages": [{"role": "system", "content": "You're a helpful assistant. "}, {"role": "user", "content": "  hi\n"}, {"role": "assistant", "content": "<think>x</think><answer>Left</answer>", "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": {"a": 1}}}]}, {"role": "tool", "content": "ok"}], "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}], "add_generation_prompt": true, "bos_token": "<s>", "s": " a ", "n": 3, "l": [1, "x"], "d": {"k": [1, 2]}}`

// FuzzParseRender feeds arbitrary templates and variables through Parse
// and Render: neither may panic, every failure is an *Error, and output
// stays within Options.MaxOutput.
func FuzzParseRender(f *testing.F) {
	for _, name := range []string{"qwen2.5-instruct.jinja", "smollm2-instruct.jinja", "llama3.2-instruct.jinja"} {
		src, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(src), fuzzVars)
	}
	for _, table := range allCases() {
		for _, c := range table {
			f.Add(c.src, c.vars)
		}
	}
	f.Add("{% for i in range(100) %}{% for j in range(100) %}{{ i * j }}{% endfor %}{% endfor %}", "")
	f.Add("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", "")
	f.Add("{% set ns = namespace(s='ab') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}", "")
	const maxOut = 1 << 16
	f.Fuzz(func(t *testing.T, src, vars string) {
		tmpl, err := Parse("fuzz", src)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Parse error %T %v, want *Error", err, err)
			}
			return
		}
		v, err := DecodeJSON([]byte(vars))
		d, ok := v.(*Dict)
		if err != nil || !ok {
			v, _ = DecodeJSON([]byte(fuzzVars))
			d = v.(*Dict)
		}
		m := map[string]any{}
		for i, k := range d.keys {
			if s, ok := k.(string); ok {
				m[s] = d.vals[i]
			}
		}
		opts := Options{MaxOutput: maxOut, MaxSteps: 20000, Now: func() time.Time { return testNow }}
		out, err := tmpl.RenderOptions(m, opts)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Render error %T %v, want *Error", err, err)
			}
			return
		}
		if len(out) > maxOut {
			t.Fatalf("output of %d bytes beyond MaxOutput %d", len(out), maxOut)
		}
	})
}
