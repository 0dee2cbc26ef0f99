package torchrt

import (
	"slices"
	"strings"
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
// (2.x). Against 1.13 gotch's wrapper is stubbed, which the prepared stub
// list says without a call; otherwise it is decided once by calling it on a
// tiny input.
func HasSDPA() bool {
	sdpaOnce.Do(func() {
		sdpaOK = !stubbed("atg_scaled_dot_product_attention") && probeSDPA() == nil
	})
	return sdpaOK
}

// probeSDPA calls SDPA on a tiny input. The mask is explicit, as the
// model's is: gotch passes ts.None as an engaged optional holding an
// undefined tensor, which libtorch 2.1's SDPA rejects ("Expected attn_mask
// dtype to be bool or to match query dtype").
func probeSDPA() error {
	q, err := ts.Ones([]int64{1, 1, 2, 4}, gotch.Float, gotch.CPU)
	if err != nil {
		return err
	}
	defer q.MustDrop()
	mask, err := ts.Zeros([]int64{1, 1, 2, 2}, gotch.Float, gotch.CPU)
	if err != nil {
		return err
	}
	defer mask.MustDrop()
	out, err := ts.ScaledDotProductAttention(q, q, q, mask, 0, false, nil)
	if err != nil {
		return err
	}
	return out.Drop()
}

// stubbed tells whether gotchprep stubbed the C wrapper named name (an
// atg_ function) because the linked libtorch lacks the op.
func stubbed(name string) bool {
	return slices.Contains(strings.Split(prepared.StubbedList, "\n"), name)
}
