package torchrt

import (
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/sugarme/gotch/ts"
)

// Tensor code calls gotch's error-returning ops through Must and Check,
// which turn a failure into a panic carrying an *OpError; each exported
// entry point recovers it into an ordinary error with `defer Catch(&err,
// what)`. gotch's own Must* variants call log.Fatal, which would exit before
// a trainer could save its checkpoint.

// OpError is a libtorch failure raised inside tensor code.
type OpError struct {
	Err   error
	Stack []byte // where it was raised, for debugging
}

func (e *OpError) Error() string { return e.Err.Error() }
func (e *OpError) Unwrap() error { return e.Err }

// Check panics with an *OpError when err is not nil.
func Check(err error) {
	if err != nil {
		panic(&OpError{Err: err, Stack: debug.Stack()})
	}
}

// Must returns t, or panics with an *OpError.
func Must(t *ts.Tensor, err error) *ts.Tensor {
	Check(err)
	return t
}

// Must2 is Must for ops with two outputs.
func Must2(a, b *ts.Tensor, err error) (*ts.Tensor, *ts.Tensor) {
	Check(err)
	return a, b
}

// Catch, deferred, recovers an *OpError panic into *errp, prefixed with what
// was being done. Other panics (programmer errors) keep unwinding.
func Catch(errp *error, what string) {
	r := recover()
	if r == nil {
		return
	}
	var oe *OpError
	if e, ok := r.(error); ok && errors.As(e, &oe) {
		*errp = fmt.Errorf("%s: %w", what, oe.Err)
		return
	}
	panic(r)
}
