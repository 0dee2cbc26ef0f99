package model

import (
	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"

	"github.com/ragen-go/ragen/internal/torchrt"
)

// How the model calls libtorch. A forward function holds its temporaries
// in a scope (torchrt.Scope: `y := s.Op(x.Mul(w, false))`, all dropped on
// return) and hands its result to the caller with must. Both panic with a
// *torchrt.OpError when an op fails; public entry points recover it into an
// ordinary error with `defer torchrt.Catch(&err, what)`, so a failed op
// never exits the process (gotch's own Must* variants call log.Fatal) and
// the trainer can still save its checkpoint.

func must(t *ts.Tensor, err error) *ts.Tensor                   { return torchrt.Must(t, err) }
func must2(a, b *ts.Tensor, err error) (*ts.Tensor, *ts.Tensor) { return torchrt.Must2(a, b, err) }
func check(err error)                                           { torchrt.Check(err) }

// scope holds a computation's temporaries and drops them together.
type scope = torchrt.Scope

// dropAll frees tensors that may be nil.
func dropAll(xs ...*ts.Tensor) {
	for _, x := range xs {
		if x != nil {
			x.MustDrop()
		}
	}
}

// size, deviceOf and contiguous replace gotch's MustSize, MustDevice and
// MustIsContiguous, which exit the process on failure.
func size(t *ts.Tensor) []int64          { return torchrt.Size(t) }
func deviceOf(t *ts.Tensor) gotch.Device { return torchrt.DeviceOf(t) }

func contiguous(t *ts.Tensor) bool {
	c, err := t.IsContiguous()
	check(err)
	return c
}
