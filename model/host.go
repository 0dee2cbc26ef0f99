package model

import (
	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"
)

// Host copies: small tensors (sampled ids, their log-probabilities) come
// back to Go slices. gotch's Float64Values and friends leave a converted
// copy for the GC to find; these drop theirs.

func onCPU(t *ts.Tensor, dt gotch.DType) (*ts.Tensor, bool) {
	dev := deviceOf(t)
	if !dev.IsCuda() && t.DType() == dt && contiguous(t) {
		return t, false
	}
	c := must(t.ToDevice(gotch.CPU, dt, false, false, false))
	return must(c.Contiguous(true)), true
}

// Int64s copies a tensor's elements as int64.
func Int64s(t *ts.Tensor) []int64 {
	c, owned := onCPU(t, gotch.Int64)
	out := make([]int64, c.Numel())
	if len(out) > 0 {
		check(c.CopyData(out, uint(len(out))))
	}
	if owned {
		c.MustDrop()
	}
	return out
}

// Float32s copies a tensor's elements as float32.
func Float32s(t *ts.Tensor) []float32 {
	c, owned := onCPU(t, gotch.Float)
	out := make([]float32, c.Numel())
	if len(out) > 0 {
		check(c.CopyData(out, uint(len(out))))
	}
	if owned {
		c.MustDrop()
	}
	return out
}
