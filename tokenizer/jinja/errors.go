package jinja

import (
	"errors"
	"fmt"
)

// Error is a failure to parse or render a template: a construct outside the
// supported subset, a syntax error, a runtime error such as an undefined
// value's attribute, or the template's own raise_exception call.
type Error struct {
	Template string // the name given to Parse
	Line     int    // 1-based line of the template where it failed; 0 if unknown
	Msg      string // one sentence saying what failed
	// Raised marks an error the template raised itself with
	// raise_exception(Msg), as transformers' TemplateError.
	Raised bool
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("chat template %s: line %d: %s", e.Template, e.Line, e.Msg)
	}
	return fmt.Sprintf("chat template %s: %s", e.Template, e.Msg)
}

// errBreak and errContinue carry {% break %} and {% continue %} up to the
// enclosing loop; the parser guarantees there is one.
var (
	errBreak    = errors.New("break")
	errContinue = errors.New("continue")
)

// located is an error that already names its template line; evaluation
// errors without one get the line of the node being evaluated.
func located(err error) bool {
	var e *Error
	return errors.As(err, &e)
}
