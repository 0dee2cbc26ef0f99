package model

import (
	"fmt"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"

	"github.com/ragen-go/ragen/internal/torchrt"
)

// Cache is a preallocated key/value cache for every layer. Sequences of a
// batch share the time axis (prompts are left-padded), so one write offset
// serves the whole batch.
type Cache struct {
	layers []layerKV
	Len    int64 // positions filled
	Cap    int64 // positions allocated
}

type layerKV struct {
	K, V *ts.Tensor // [B, nKV, Cap, hd]
	// col, in static decoding (staticDecoder), is the [1] int64 device
	// tensor holding the column to write; nil otherwise.
	col *ts.Tensor
}

// NewCache allocates a cache for batch sequences of up to capacity tokens.
func NewCache(cfg Config, batch, capacity int64, dtype gotch.DType, dev gotch.Device) (c *Cache, err error) {
	defer torchrt.Catch(&err, "allocating the kv cache")
	c = &Cache{Cap: capacity}
	shape := []int64{batch, int64(cfg.NumKeyValueHeads), capacity, int64(cfg.HeadDimension())}
	for range cfg.NumHiddenLayers {
		c.layers = append(c.layers, layerKV{
			K: must(ts.Zeros(shape, dtype, dev)),
			V: must(ts.Zeros(shape, dtype, dev)),
		})
	}
	return c, nil
}

// write stores k, v [B, nKV, T, hd] at [start, start+T) and returns views of
// positions [0, start+T). In static decoding (col set) it stores the one
// position at column col and returns views of the whole capacity, so the
// shapes do not depend on the step.
func (l *layerKV) write(k, v *ts.Tensor, start int64) (*ts.Tensor, *ts.Tensor) {
	if l.col != nil {
		check(l.K.IndexCopy_(2, l.col, k))
		check(l.V.IndexCopy_(2, l.col, v))
		Cap := size(l.K)[2]
		return must(l.K.Narrow(2, 0, Cap, false)), must(l.V.Narrow(2, 0, Cap, false))
	}
	T := size(k)[2]
	for _, p := range [2][2]*ts.Tensor{{l.K, k}, {l.V, v}} {
		dst := must(p[0].Narrow(2, start, T, false))
		torchrt.CopyInto(dst, p[1])
		dst.MustDrop()
	}
	return must(l.K.Narrow(2, 0, start+T, false)), must(l.V.Narrow(2, 0, start+T, false))
}

// Keep compacts the cache to the given batch rows (finished sequences stop
// costing memory and compute).
func (c *Cache) Keep(rows *ts.Tensor) (err error) {
	defer torchrt.Catch(&err, "compacting the kv cache")
	for i := range c.layers {
		l := &c.layers[i]
		l.K = must(l.K.IndexSelect(0, rows, true))
		l.V = must(l.V.IndexSelect(0, rows, true))
	}
	return nil
}

// view returns a cache over batch rows [lo, lo+n) that shares this one's
// memory: writes through it land in these rows. Its Len starts at c.Len
// and advances on its own; its Drop frees only the views.
func (c *Cache) view(lo, n int64) *Cache {
	v := &Cache{Len: c.Len, Cap: c.Cap}
	for _, l := range c.layers {
		v.layers = append(v.layers, layerKV{K: must(l.K.Narrow(0, lo, n, false)), V: must(l.V.Narrow(0, lo, n, false))})
	}
	return v
}

// Drop frees the cache.
func (c *Cache) Drop() {
	for _, l := range c.layers {
		dropAll(l.K, l.V)
	}
	c.layers = nil
}

func (c *Cache) layer(i int) *layerKV {
	if c == nil {
		return nil
	}
	return &c.layers[i]
}

// begin starts a forward over T new tokens: it checks the cache has room
// for them and returns where they start, and done, which counts them in
// once the forward has written them. Without a cache they start at 0. A
// static decode step's position lives on the device, and its decoder
// counts the host side (staticDecoder.step).
func (c *Cache) begin(T int64) (start int64, done func()) {
	if c == nil || c.static() {
		return 0, func() {}
	}
	check(c.advance(T))
	return c.Len, func() { c.Len += T }
}

func (c *Cache) advance(T int64) error {
	if c.Len+T > c.Cap {
		return fmt.Errorf("kv cache overflow: %d positions filled, %d more, capacity %d", c.Len, T, c.Cap)
	}
	return nil
}
