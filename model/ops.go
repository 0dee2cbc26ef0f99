package model

import (
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/libtch"
	"github.com/sugarme/gotch/ts"
)

// The forward code calls gotch's error-returning ops through must, which
// turns a failure into a panic carrying a torchError. Public entry points
// recover it into an ordinary error with catch, so a failed op never exits
// the process (gotch's own Must* variants call log.Fatal) and the trainer
// can still save its checkpoint.

// torchError is a libtorch failure raised inside a forward pass.
type torchError struct {
	err   error
	stack []byte
}

func (e *torchError) Error() string { return e.err.Error() }
func (e *torchError) Unwrap() error { return e.err }

// must returns t or panics with a torchError.
func must(t *ts.Tensor, err error) *ts.Tensor {
	if err != nil {
		panic(&torchError{err: err, stack: debug.Stack()})
	}
	return t
}

// must2 is must for ops with two outputs.
func must2(a, b *ts.Tensor, err error) (*ts.Tensor, *ts.Tensor) {
	if err != nil {
		panic(&torchError{err: err, stack: debug.Stack()})
	}
	return a, b
}

// check panics with a torchError when err is not nil.
func check(err error) {
	if err != nil {
		panic(&torchError{err: err, stack: debug.Stack()})
	}
}

// catch recovers a torchError panic into *errp, prefixed with what was
// being done. Other panics (programmer errors) keep unwinding.
func catch(errp *error, what string) {
	r := recover()
	if r == nil {
		return
	}
	var te *torchError
	if e, ok := r.(error); ok && errors.As(e, &te) {
		*errp = fmt.Errorf("%s: %w", what, te.err)
		return
	}
	panic(r)
}

// scope collects the temporaries of one computation so they can be dropped
// together: gotch tensors live in C memory that the Go GC cannot weigh.
type scope struct{ held []*ts.Tensor }

// keep registers t for dropping and returns it.
func (s *scope) keep(t *ts.Tensor) *ts.Tensor {
	s.held = append(s.held, t)
	return t
}

// drop frees every kept tensor.
func (s *scope) drop() {
	for _, t := range s.held {
		t.MustDrop()
	}
	s.held = s.held[:0]
}

// dropAll frees tensors that may be nil.
func dropAll(xs ...*ts.Tensor) {
	for _, x := range xs {
		if x != nil {
			x.MustDrop()
		}
	}
}

// copyInto copies src into dst in place (dst.copy_(src)); gotch's own
// Copy_ exits the process on failure.
func copyInto(dst, src *ts.Tensor) {
	libtch.AtCopy_(libtch.Ctensor(dst.Ctensor()), libtch.Ctensor(src.Ctensor()))
	check(ts.TorchErr())
}

// size, deviceOf and contiguous replace gotch's MustSize, MustDevice and
// MustIsContiguous, which exit the process on failure.
func size(t *ts.Tensor) []int64 {
	s, err := t.Size()
	check(err)
	return s
}

func deviceOf(t *ts.Tensor) gotch.Device {
	d, err := t.Device()
	check(err)
	return d
}

func contiguous(t *ts.Tensor) bool {
	c, err := t.IsContiguous()
	check(err)
	return c
}
