// Package cpurow runs one decoding step of a Llama/Qwen2 decoder stack, a
// new token for each sequence (row) of a batch, in fp32 on the CPU, as a
// few plain loops and BLAS products over the weights' own memory.
//
// A decoding step through libtorch's eager ops creates about 74 tensors a
// layer around its products (norms, rotary, reshapes, the attention's
// views), each a few microseconds of dispatch and allocation: at batch 1
// that was half of a token's time (docs/benchmarks.md, "The levers,
// measured"). This step keeps the products (the cblas_sgemv and
// cblas_sgemm libtorch's own calls reach) and does the rest in one call.
// model.Backbone takes it for a no-grad fp32 decoding step on the CPU,
// and its tests check it against the eager layers.
package cpurow

/*
#cgo CFLAGS: -O2
#cgo LDFLAGS: -ldl -lm
#include "cpurow.h"
*/
import "C"

import (
	"errors"
	"sync"
	"unsafe"
)

// Proj is a linear map y = W·x + b: W [out, in] row-major, B [out] or nil.
type Proj struct {
	W, B unsafe.Pointer
}

// Layer is one decoder layer's weights, all fp32 and contiguous, in C
// memory (libtorch's). Its caches are set per step (Table.SetCache).
type Layer struct {
	InNorm, PostNorm           unsafe.Pointer
	Q, K, V, O, Gate, Up, Down Proj
}

// Shape is the stack's shape.
type Shape struct {
	D, NHeads, NKVHeads, HeadDim, Inter, Cap int64
	Eps                                      float32
}

var (
	initOnce sync.Once
	haveBLAS bool
)

// Available reports whether the BLAS libtorch loaded exports cblas_sgemv
// and cblas_sgemm (Debian's OpenBLAS does); without them the step cannot
// run.
func Available() bool {
	initOnce.Do(func() { haveBLAS = C.cpurow_init() != 0 })
	return haveBLAS
}

func proj(p Proj) C.cpurow_proj {
	return C.cpurow_proj{w: (*C.float)(p.W), b: (*C.float)(p.B)}
}

// Table is the layers in the C layout, built once per set of weights.
type Table struct {
	layers []C.cpurow_layer
}

// NewTable lays the layers out for Step.
func NewTable(layers []Layer) *Table {
	t := &Table{layers: make([]C.cpurow_layer, len(layers))}
	for i, l := range layers {
		t.layers[i] = C.cpurow_layer{
			in_norm: (*C.float)(l.InNorm), post_norm: (*C.float)(l.PostNorm),
			q: proj(l.Q), k: proj(l.K), v: proj(l.V), o: proj(l.O),
			gate: proj(l.Gate), up: proj(l.Up), down: proj(l.Down),
		}
	}
	return t
}

// SetCache points layer i at its key and value caches [rows, nKV, Cap, hd],
// fp32 and contiguous.
func (t *Table) SetCache(i int, k, v unsafe.Pointer) {
	t.layers[i].kcache, t.layers[i].vcache = (*C.float)(k), (*C.float)(v)
}

// Step runs the layers on the hidden states x [rows, D] in place, one
// new token per sequence, all at position pos of the caches: the keys and
// values go to column pos, and each row attends over columns [0, pos]
// with its additive bias, bias [rows, pos+1]. cos and sin [rows, HeadDim]
// are the tokens' rotary angles. The caller checks shapes, dtypes and
// contiguity; Available must be true.
func Step(sh Shape, t *Table, rows int64, x, cos, sin, bias unsafe.Pointer, pos int64) error {
	if len(t.layers) == 0 {
		return nil
	}
	cs := C.cpurow_shape{
		d: C.int64_t(sh.D), n_heads: C.int64_t(sh.NHeads), n_kv_heads: C.int64_t(sh.NKVHeads),
		head_dim: C.int64_t(sh.HeadDim), inter: C.int64_t(sh.Inter), cap: C.int64_t(sh.Cap),
		eps: C.float(sh.Eps),
	}
	if C.cpurow_step(&cs, &t.layers[0], C.int(len(t.layers)), C.int64_t(rows), (*C.float)(x),
		(*C.float)(cos), (*C.float)(sin), (*C.float)(bias), C.int64_t(pos)) != 0 {
		return errors.New("cpurow: out of memory for a decoding step's scratch")
	}
	return nil
}
