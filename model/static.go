package model

import (
	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"

	"github.com/ragen-go/ragen/internal/cudagraph"
	"github.com/ragen-go/ragen/internal/torchrt"
)

// staticDecoder runs the decode steps of one Generate call on tensors whose
// shapes and addresses stay the same from the first step to the last, which
// is what a CUDA graph replays:
//   - the batch is never compacted: a finished row keeps decoding, and its
//     tokens are not read;
//   - each layer's new key and value go into the preallocated cache in
//     place, at the column held by the device tensor col;
//   - attention spans the cache's whole capacity under bias, which opens
//     one more column per step.
//
// Only the fed tokens come from the host (copied into ids before a step);
// the positions and the column advance on the device. The result equals
// the dynamic path's (Cache.write's growing views, compaction): the keys
// not yet written are masked with the dtype's minimum, whose softmax
// weight is exactly 0.
type staticDecoder struct {
	m     *CausalLM
	cache *Cache
	ids   *ts.Tensor       // [B, 1] int64: the tokens fed this step
	pos   *ts.Tensor       // [B, 1] int64: their rotary positions
	col   *ts.Tensor       // [1] int64: the cache column they are written to
	bias  *ts.Tensor       // [B, 1, 1, Cap]: 0 on real keys up to col, the dtype's minimum elsewhere
	graph *cudagraph.Graph // nil: every step runs eagerly
	out   *ts.Tensor       // with a graph: the captured step's logits [B, V]
	steps int
}

// newStaticDecoder prepares decoding after the prompts (mask, B×L, left-
// padded) were prefilled into cache; nextPos are the rows' next positions.
// With graphs, the second step is captured and every later one replayed.
func newStaticDecoder(m *CausalLM, cache *Cache, mask []int64, B, L int, nextPos []int64, graphs bool) (d *staticDecoder, err error) {
	defer torchrt.Catch(&err, "preparing the static decode step")
	dev := m.Device
	Cap := int(cache.Cap)
	keys := make([]int64, B*Cap) // [B, Cap]: the prompts' real tokens
	for b := range B {
		copy(keys[b*Cap:b*Cap+L], mask[b*L:(b+1)*L])
	}
	km := torchrt.Matrix(keys, int64(B), int64(Cap), dev)
	defer km.MustDrop()
	d = &staticDecoder{
		m: m, cache: cache,
		ids:  must(ts.Zeros([]int64{int64(B), 1}, gotch.Int64, dev)),
		pos:  torchrt.Matrix(nextPos, int64(B), 1, dev),
		col:  must(torchrt.Matrix([]int64{int64(L)}, 1, 1, dev).View([]int64{1}, true)),
		bias: attentionBias(km, 1, m.DType), // T = 1: causal is no constraint, only the key mask
	}
	if graphs {
		if d.graph, err = cudagraph.New(dev); err != nil {
			d.Drop()
			return nil, err
		}
	}
	for i := range cache.layers {
		cache.layers[i].col = d.col
	}
	return d, nil
}

// step feeds one token per row (toks, B of them) and returns the next
// logits [B, V], which the caller drops.
func (d *staticDecoder) step(toks []int64) *ts.Tensor {
	check(d.cache.advance(1))
	in := torchrt.Matrix(toks, int64(len(toks)), 1, gotch.CPU)
	torchrt.CopyInto(d.ids, in)
	in.MustDrop()
	var logits *ts.Tensor
	switch {
	case d.graph == nil:
		logits = d.run()
	case d.steps == 0: // warm-up, on the side stream: a real step
		check(d.graph.OnSideStream(func() (err error) {
			defer torchrt.Catch(&err, "static decode step (warm-up)")
			logits = d.run()
			return nil
		}))
	case d.steps == 1: // captured (not run), then replayed
		check(d.graph.Capture(func() (err error) {
			defer torchrt.Catch(&err, "static decode step (capture)")
			d.out = d.run()
			return nil
		}))
		fallthrough
	default:
		check(d.graph.Replay())
		logits = must(d.out.ShallowClone())
	}
	d.steps++
	d.cache.Len++
	return logits
}

// run is the step's tensor work, all of it in place on the decoder's
// tensors or in fresh ones (no host reads), so that it can be captured.
func (d *staticDecoder) run() *ts.Tensor {
	check(d.bias.IndexFill_(3, d.col, ts.FloatScalar(0))) // the column this step writes becomes a key
	logits, err := d.m.LastLogits(Inputs{IDs: d.ids, Positions: d.pos, Bias: d.bias}, d.cache)
	check(err)
	check(d.pos.AddScalar_(ts.IntScalar(1)))
	check(d.col.AddScalar_(ts.IntScalar(1)))
	return logits
}

// Drop frees the decoder's tensors and graph and returns the cache to
// ordinary (dynamic) writes.
func (d *staticDecoder) Drop() {
	for i := range d.cache.layers {
		d.cache.layers[i].col = nil
	}
	d.graph.Free()
	dropAll(d.ids, d.pos, d.col, d.bias, d.out)
}

// static tells whether the cache is being written by a staticDecoder.
func (c *Cache) static() bool { return len(c.layers) > 0 && c.layers[0].col != nil }

// checkDecodeOptions refuses what the device cannot do before any work.
func (m *CausalLM) checkDecodeOptions(o GenerateOptions) error {
	if !o.CUDAGraphs {
		return nil
	}
	return cudagraph.Available(m.Device)
}
