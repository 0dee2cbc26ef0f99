package jinja

import (
	"fmt"
	"strings"
)

// scope holds the variables of one level: the globals, the render's
// variables, the template's top level, one for-loop iteration, a macro
// call or a with block. As in Jinja, a set inside a loop or macro stays
// there: that is what namespace() is for.
type scope struct {
	vars   map[string]any
	parent *scope
}

func (s *scope) lookup(name string) (any, bool) {
	for ; s != nil; s = s.parent {
		if v, ok := s.vars[name]; ok {
			if _, isUnset := v.(unsetVar); isUnset {
				return &undefined{name: name}, true
			}
			return v, true
		}
	}
	return nil, false
}

func (s *scope) child() *scope { return &scope{vars: map[string]any{}, parent: s} }

// unsetVar marks a name that starts its frame unset (symbols.go).
type unsetVar struct{}

// frame is a child scope for a new Jinja frame, with its unset names.
func (s *scope) frame(unset []string) *scope {
	c := s.child()
	for _, n := range unset {
		c.vars[n] = unsetVar{}
	}
	return c
}

// renderer is the state of one render.
type renderer struct {
	t     *Template
	opts  Options
	out   *strings.Builder
	steps int
	calls int // nesting of macro calls
}

// fail is an error at line, unless err already names one.
func (r *renderer) fail(line int, err error) error {
	if err == nil || located(err) || err == errBreak || err == errContinue {
		return err
	}
	if re, ok := err.(*raisedError); ok {
		return &Error{Template: r.t.name, Line: line, Msg: re.msg, Raised: true}
	}
	return &Error{Template: r.t.name, Line: line, Msg: err.Error()}
}

// write appends s to the output, within MaxOutput.
func (r *renderer) write(s string) error {
	if err := r.checkSize(r.out.Len() + len(s)); err != nil {
		return err
	}
	r.out.WriteString(s)
	return nil
}

// checkSize bounds strings and output at MaxOutput bytes.
func (r *renderer) checkSize(n int) error {
	if n > r.opts.MaxOutput || n < 0 {
		return fmt.Errorf("the output would exceed %d bytes (Options.MaxOutput)", r.opts.MaxOutput)
	}
	return nil
}

// checkItems bounds lists at MaxOutput items.
func (r *renderer) checkItems(n int) error {
	if n > r.opts.MaxOutput || n < 0 {
		return fmt.Errorf("a list would exceed %d items (Options.MaxOutput)", r.opts.MaxOutput)
	}
	return nil
}

// step counts a loop iteration or macro call against MaxSteps.
func (r *renderer) step() error {
	r.steps++
	if r.steps > r.opts.MaxSteps {
		return fmt.Errorf("the template ran more than %d loop iterations and macro calls (Options.MaxSteps)", r.opts.MaxSteps)
	}
	return nil
}
