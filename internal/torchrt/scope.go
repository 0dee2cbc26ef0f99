package torchrt

import (
	"slices"

	"github.com/sugarme/gotch/ts"
)

// Scope owns the temporaries of one computation and drops them together:
// gotch tensors live in C memory that the Go GC cannot weigh. It is the one
// way tensor code here holds a temporary:
//
//	var s torchrt.Scope
//	defer s.Drop()
//	y := s.Op(x.Matmul(w, false))  // an op's result, held by s
//	h := s.Keep(layer.Forward(y))  // a tensor made elsewhere, now held by s
//	return s.Release(out)          // the result outlives the scope
//
// Op panics with an *OpError when the op failed (see Check); the exported
// entry point recovers it with `defer Catch(&err, what)`.
type Scope struct{ held []*ts.Tensor }

// Op holds the result of a gotch op, or panics with its error.
func (s *Scope) Op(t *ts.Tensor, err error) *ts.Tensor {
	Check(err)
	return s.Keep(t)
}

// Keep holds t, a tensor its caller owns, for dropping, and returns it.
func (s *Scope) Keep(t *ts.Tensor) *ts.Tensor {
	s.held = append(s.held, t)
	return t
}

// Release takes t out of the scope: it outlives the computation and the
// caller owns it.
func (s *Scope) Release(t *ts.Tensor) *ts.Tensor {
	if i := slices.Index(s.held, t); i >= 0 {
		s.held = slices.Delete(s.held, i, i+1)
	}
	return t
}

// Drop frees every tensor still held, newest first.
func (s *Scope) Drop() {
	for i := len(s.held) - 1; i >= 0; i-- {
		s.held[i].MustDrop()
	}
	s.held = s.held[:0]
}
