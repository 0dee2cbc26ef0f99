package jinja

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Template is a parsed chat template, safe for concurrent renders.
type Template struct {
	name  string
	body  []node
	unset []string // names starting the template unset (symbols.go)
}

// Parse parses source, naming it name in errors. Constructs outside the
// supported subset are refused here when the syntax shows them: unknown
// statements, filters and tests.
func Parse(name, source string) (*Template, error) {
	toks, line, err := lex(source)
	if err != nil {
		return nil, &Error{Template: name, Line: line, Msg: err.Error()}
	}
	p := &parser{toks: toks}
	body, _, err := p.parseBody()
	if err != nil {
		var se *syntaxError
		if errors.As(err, &se) {
			return nil, &Error{Template: name, Line: se.line, Msg: se.msg}
		}
		return nil, &Error{Template: name, Msg: err.Error()}
	}
	if se := checkFolding(body); se != nil {
		return nil, &Error{Template: name, Line: se.line, Msg: se.msg}
	}
	return &Template{name: name, body: body, unset: analyzeFrame(body, nil, nil)}, nil
}

// Name is the name given to Parse.
func (t *Template) Name() string { return t.name }

// Func is a function that templates can call, passed as a variable or in
// Options.Globals. Arguments arrive as template values: nil, bool, int64,
// float64, string, []any and *Dict; the result is converted like a
// variable.
type Func func(args []any, kwargs map[string]any) (any, error)

// Defaults of Options.
const (
	DefaultMaxOutput = 16 << 20  // bytes of output, and of any one string
	DefaultMaxSteps  = 1_000_000 // loop iterations and macro calls
	maxCallDepth     = 100       // nested macro calls
)

// Options adjust a render.
type Options struct {
	// Now is the clock of strftime_now; time.Now when nil.
	Now func() time.Time
	// Globals are extra functions and values, below the variables.
	Globals map[string]any
	// MaxOutput bounds the output and every string and list built on the
	// way, in bytes and items; DefaultMaxOutput when 0.
	MaxOutput int
	// MaxSteps bounds loop iterations and macro calls together;
	// DefaultMaxSteps when 0.
	MaxSteps int
}

// Render renders the template with vars as Python's
// template.render(**vars) in transformers' environment would, with the
// default Options.
func (t *Template) Render(vars map[string]any) (string, error) {
	return t.RenderOptions(vars, Options{})
}

// RenderOptions renders the template with vars and opts.
//
// transformers' apply_chat_template passes messages, tools (None without
// tools), documents (None), add_generation_prompt, the tokenizer's special
// tokens (bos_token, eos_token, ...) and any extra keyword arguments; see
// ChatVars. Values are converted as DecodeJSON and Dict describe; give
// messages and tools as *Dict or JSON to keep their key order.
func (t *Template) RenderOptions(vars map[string]any, opts Options) (out string, err error) {
	r := &renderer{t: t, opts: opts}
	if r.opts.MaxOutput <= 0 {
		r.opts.MaxOutput = DefaultMaxOutput
	}
	if r.opts.MaxSteps <= 0 {
		r.opts.MaxSteps = DefaultMaxSteps
	}
	if r.opts.Now == nil {
		r.opts.Now = time.Now
	}
	globals := &scope{vars: builtinGlobals()}
	for k, v := range opts.Globals {
		cv, err := fromGo(v, 0)
		if err != nil {
			return "", &Error{Template: t.name, Msg: fmt.Sprintf("global %q: %v", k, err)}
		}
		globals.vars[k] = cv
	}
	ctx := &scope{vars: make(map[string]any, len(vars)), parent: globals}
	for k, v := range vars {
		cv, err := fromGo(v, 0)
		if err != nil {
			return "", &Error{Template: t.name, Msg: fmt.Sprintf("variable %q: %v", k, err)}
		}
		ctx.vars[k] = cv
	}
	top := ctx.frame(t.unset)
	var b strings.Builder
	r.out = &b
	if err := r.exec(t.body, top); err != nil {
		return "", err
	}
	return b.String(), nil
}

// ChatVars are the variables transformers' apply_chat_template(messages,
// tools=tools, add_generation_prompt=..., **extra) gives a template:
// tools and documents are None unless set, and extra (special tokens such
// as bos_token, date_string, ...) is added as is.
func ChatVars(messages, tools any, addGenerationPrompt bool, extra map[string]any) map[string]any {
	v := make(map[string]any, len(extra)+4)
	for k, x := range extra {
		v[k] = x
	}
	v["messages"] = messages
	v["tools"] = tools
	v["documents"] = nil
	v["add_generation_prompt"] = addGenerationPrompt
	return v
}
