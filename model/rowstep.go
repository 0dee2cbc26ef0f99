package model

import (
	"os"
	"slices"
	"unsafe"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"

	"github.com/ragen-go/ragen/internal/cpurow"
	"github.com/ragen-go/ragen/internal/torchrt"
)

// rowSteps switches the row decoding step (cpurow) on; tests and
// $RAGEN_EAGER_DECODE=1 (for benchmarks against the eager layers) switch
// it off.
var rowSteps = os.Getenv("RAGEN_EAGER_DECODE") != "1"

// rowStepsTaken counts the steps rowStep ran, for the tests.
var rowStepsTaken int

// rowTable is the layers' weights laid out for cpurow, with the tensors
// they were read from: while the backbone holds the same tensors, the
// table holds their memory.
type rowTable struct {
	from  []*ts.Tensor
	table *cpurow.Table
}

// rowStep runs the decoder layers of Backbone.Forward on x [B, 1, d] in
// place, in one cpurow call, when this is a decoding step it can take:
// one new token per sequence with a KV cache, fp32 on the CPU, autograd
// off, no LoRA adapter, every tensor contiguous, and a BLAS that exports
// cblas_sgemv and cblas_sgemm. It reports whether it did; otherwise the
// eager layers run.
// The math is the eager layers' (TestRowStepMatchesEagerLayers).
func (m *Backbone) rowStep(x, cos, sin, bias *ts.Tensor, cache *Cache, start int64) bool {
	if !rowSteps || cache == nil || cache.static() || m.DType != gotch.Float || m.Device.IsCuda() ||
		len(m.Layers) == 0 || !cpurow.Available() {
		return false
	}
	d, hd, S, B := int64(m.Cfg.HiddenSize), int64(m.Cfg.HeadDimension()), start+1, size(x)[0]
	if !shaped(x, B, 1, d) || !shaped(cos, B, 1, 1, hd) || !shaped(sin, B, 1, 1, hd) || !shaped(bias, B, 1, 1, S) {
		return false
	}
	if on, err := torchrt.GradEnabled(); err != nil || on {
		return false
	}
	t := m.rowLayers()
	if t == nil {
		return false
	}
	a := m.Layers[0].Attn
	// One capacity serves every layer's cache in cpurow: each must have it.
	sh := cpurow.Shape{D: d, NHeads: a.NHeads, NKVHeads: a.NKVHeads, HeadDim: hd,
		Inter: int64(m.Cfg.IntermediateSize), Cap: size(cache.layer(0).K)[2], Eps: float32(m.Layers[0].InputNorm.Eps)}
	if S > sh.Cap {
		return false
	}
	for i := range m.Layers {
		l := cache.layer(i)
		if !shaped(l.K, B, a.NKVHeads, sh.Cap, hd) || !shaped(l.V, B, a.NKVHeads, sh.Cap, hd) {
			return false
		}
		t.SetCache(i, l.K.MustDataPtr(), l.V.MustDataPtr())
	}
	check(cpurow.Step(sh, t, B, x.MustDataPtr(), cos.MustDataPtr(), sin.MustDataPtr(), bias.MustDataPtr(), start))
	rowStepsTaken++
	return true
}

// rowLayers returns the layers' cpurow table, rebuilt when a weight tensor
// has been replaced since, or nil when a layer does not fit it (an
// adapter, a non-contiguous or non-fp32 weight, other norms' eps).
func (m *Backbone) rowLayers() *cpurow.Table {
	var from []*ts.Tensor
	for i := range m.Layers {
		l := &m.Layers[i]
		from = append(from, l.InputNorm.Weight, l.PostAttnNorm.Weight)
		for _, p := range l.projections() {
			if p.lin.LoRA != nil {
				return nil
			}
			from = append(from, p.lin.Weight, p.lin.Bias)
		}
	}
	if r := m.row; r != nil && slices.Equal(r.from, from) {
		return r.table
	}
	eps := m.Layers[0].InputNorm.Eps
	layers := make([]cpurow.Layer, len(m.Layers))
	for i := range m.Layers {
		l := &m.Layers[i]
		if l.InputNorm.Eps != eps || l.PostAttnNorm.Eps != eps {
			return nil
		}
		var p [7]cpurow.Proj
		for j, pr := range l.projections() { // q, k, v, o, gate, up, down
			var ok bool
			if p[j], ok = rowProj(pr.lin); !ok {
				return nil
			}
		}
		in, ok1 := rowData(l.InputNorm.Weight)
		post, ok2 := rowData(l.PostAttnNorm.Weight)
		if !ok1 || !ok2 {
			return nil
		}
		layers[i] = cpurow.Layer{InNorm: in, PostNorm: post,
			Q: p[0], K: p[1], V: p[2], O: p[3], Gate: p[4], Up: p[5], Down: p[6]}
	}
	m.row = &rowTable{from: from, table: cpurow.NewTable(layers)}
	return m.row.table
}

func rowProj(l *Linear) (cpurow.Proj, bool) {
	w, ok := rowData(l.Weight)
	if !ok || len(size(l.Weight)) != 2 {
		return cpurow.Proj{}, false
	}
	p := cpurow.Proj{W: w}
	if l.Bias != nil {
		if p.B, ok = rowData(l.Bias); !ok {
			return cpurow.Proj{}, false
		}
	}
	return p, true
}

// rowData is t's memory when t is a contiguous fp32 CPU tensor.
func rowData(t *ts.Tensor) (unsafe.Pointer, bool) {
	if t.DType() != gotch.Float || deviceOf(t).IsCuda() || !t.MustIsContiguous() {
		return nil, false
	}
	return t.MustDataPtr(), true
}

// shaped reports whether t is a contiguous fp32 tensor of exactly this shape.
func shaped(t *ts.Tensor, shape ...int64) bool {
	return slices.Equal(size(t), shape) && t.DType() == gotch.Float && t.MustIsContiguous()
}
