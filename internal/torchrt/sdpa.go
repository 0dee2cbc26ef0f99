package torchrt

import (
	"sync"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/prepared"
	"github.com/sugarme/gotch/ts"
)

var (
	sdpaOnce sync.Once
	sdpaOK   bool
)

// HasSDPA tells whether the linked libtorch has scaled_dot_product_attention
// (2.x); against 1.13 gotch's wrapper is stubbed. Decided once, by calling it
// on a tiny input.
func HasSDPA() bool {
	sdpaOnce.Do(func() { sdpaOK = probeSDPA() == nil })
	return sdpaOK
}

func probeSDPA() error {
	q, err := ts.Ones([]int64{1, 1, 2, 4}, gotch.Float, gotch.CPU)
	if err != nil {
		return err
	}
	defer q.MustDrop()
	out, err := ts.ScaledDotProductAttention(q, q, q, ts.None, 0, false, nil)
	if err != nil {
		return err
	}
	return out.Drop()
}

// stubList is the list of stubbed wrappers as prepared.
func stubList() string { return prepared.StubbedList }
