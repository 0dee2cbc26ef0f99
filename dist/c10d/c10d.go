// Package c10d binds the few pieces of libtorch's distributed engine that
// data-parallel training needs: the TCPStore rendezvous and a process group
// (Gloo on CPU, NCCL on CUDA builds) with all-reduce, broadcast,
// all-gather and barrier. gotch exposes none of it; shim.cpp does, compiled
// by cgo beside gotch with the flags scripts/gotchprep writes into
// cgo_flags.go for the libtorch it prepared.
package c10d

// #include <stdlib.h>
// #include "shim.h"
import "C"

import (
	"errors"
	"fmt"
	"time"
	"unsafe"

	"github.com/sugarme/gotch/ts"
)

// Op is a reduction.
type Op int

// The reductions, numbered as shim.h does.
const (
	Sum Op = iota
	Max
	Min
	Product
)

// Backend selects the process group's implementation.
type Backend int

// The backends: Gloo (CPU tensors) and NCCL (CUDA tensors).
const (
	Gloo Backend = iota
	NCCL
)

func (b Backend) String() string {
	if b == NCCL {
		return "nccl"
	}
	return "gloo"
}

// HasGloo tells whether this build links ProcessGroupGloo: only when the
// libtorch it was prepared for ships gloo's headers (see scripts/gotchprep,
// shimheaders.go).
func HasGloo() bool { return C.rg_has_gloo() != 0 }

// HasNCCL tells whether this build links ProcessGroupNCCL.
func HasNCCL() bool { return C.rg_has_nccl() != 0 }

// check turns the shim's error message into a Go error and frees it.
func check(what string, msg *C.char) error {
	if msg == nil {
		return nil
	}
	defer C.free(unsafe.Pointer(msg))
	return fmt.Errorf("c10d %s: %s", what, C.GoString(msg))
}

// Store is a c10d::TCPStore: the key-value server rank 0 hosts and every
// rank meets at.
type Store struct{ p C.rg_store }

// NewStore serves (server true) or connects to the store at host:port for
// world processes; it waits up to timeout for all of them to join.
func NewStore(host string, port, world int, server bool, timeout time.Duration) (*Store, error) {
	h := C.CString(host)
	defer C.free(unsafe.Pointer(h))
	s := &Store{}
	srv := C.int(0)
	if server {
		srv = 1
	}
	if err := check(fmt.Sprintf("store %s:%d", host, port), C.rg_store_new(h, C.int(port), C.int(world), srv, C.int64_t(timeout.Milliseconds()), &s.p)); err != nil {
		return nil, err
	}
	return s, nil
}

// Set stores value under key.
func (s *Store) Set(key string, value []byte) error {
	k := C.CString(key)
	defer C.free(unsafe.Pointer(k))
	var p unsafe.Pointer
	if len(value) > 0 {
		p = unsafe.Pointer(&value[0])
	}
	return check("store set "+key, C.rg_store_set(s.p, k, p, C.size_t(len(value))))
}

// Get waits (up to the store's timeout) for key and returns its value.
func (s *Store) Get(key string) ([]byte, error) {
	k := C.CString(key)
	defer C.free(unsafe.Pointer(k))
	var data unsafe.Pointer
	var n C.size_t
	if err := check("store get "+key, C.rg_store_get(s.p, k, &data, &n)); err != nil {
		return nil, err
	}
	defer C.free(data)
	return C.GoBytes(data, C.int(n)), nil
}

// Close releases the store (the server stops when its last user does).
func (s *Store) Close() {
	if s != nil && s.p != nil {
		C.rg_store_free(s.p)
		s.p = nil
	}
}

// Group is a c10d process group. Its collectives block until done and
// return an error when a peer is gone or the group's timeout passes.
type Group struct {
	p           C.rg_group
	rank, world int
}

// NewGroup builds the process group of rank among world processes over s.
func NewGroup(s *Store, b Backend, rank, world int, timeout time.Duration) (*Group, error) {
	g := &Group{rank: rank, world: world}
	if err := check("process group ("+b.String()+")", C.rg_group_new(s.p, C.int(b), C.int(rank), C.int(world), C.int64_t(timeout.Milliseconds()), &g.p)); err != nil {
		return nil, err
	}
	return g, nil
}

// Rank and World are the group's rank and size.
func (g *Group) Rank() int  { return g.rank }
func (g *Group) World() int { return g.world }

func handle(t *ts.Tensor) (unsafe.Pointer, error) {
	if t == nil || t.Ctensor() == nil {
		return nil, errors.New("c10d: nil tensor")
	}
	return t.Ctensor(), nil
}

func handles(tensors []*ts.Tensor) ([]unsafe.Pointer, error) {
	hs := make([]unsafe.Pointer, len(tensors))
	for i, t := range tensors {
		h, err := handle(t)
		if err != nil {
			return nil, fmt.Errorf("tensor %d: %w", i, err)
		}
		hs[i] = h
	}
	return hs, nil
}

// cArray copies handles into C memory: cgo forbids passing Go memory that
// holds pointers (the handles point into C++ memory, but cgocheck cannot
// know).
func cArray(hs []unsafe.Pointer) (*unsafe.Pointer, func()) {
	if len(hs) == 0 {
		return nil, func() {}
	}
	arr := (*[1 << 28]unsafe.Pointer)(C.malloc(C.size_t(len(hs)) * C.size_t(unsafe.Sizeof(unsafe.Pointer(nil)))))[:len(hs):len(hs)]
	copy(arr, hs)
	return &arr[0], func() { C.free(unsafe.Pointer(&arr[0])) }
}

// AllReduce reduces t in place across the group.
func (g *Group) AllReduce(t *ts.Tensor, op Op) error {
	h, err := handle(t)
	if err != nil {
		return err
	}
	return check("all-reduce", C.rg_allreduce(g.p, h, C.int(op)))
}

// AllReduceGrads sums the gradients of params across the group in place,
// in flat buckets of at most bucketBytes; a parameter without a gradient
// gets a zero one first, so every rank runs the same collectives.
func (g *Group) AllReduceGrads(params []*ts.Tensor, bucketBytes int64) error {
	hs, err := handles(params)
	if err != nil {
		return err
	}
	arr, free := cArray(hs)
	defer free()
	return check("gradient all-reduce", C.rg_allreduce_grads(g.p, arr, C.int(len(hs)), C.int64_t(bucketBytes)))
}

// Broadcast copies root's tensors into every rank's, in place.
func (g *Group) Broadcast(tensors []*ts.Tensor, root int) error {
	hs, err := handles(tensors)
	if err != nil {
		return err
	}
	arr, free := cArray(hs)
	defer free()
	return check("broadcast", C.rg_broadcast(g.p, arr, C.int(len(hs)), C.int(root)))
}

// AllGather fills out, contiguous with shape [world, in's shape...], with
// every rank's in.
func (g *Group) AllGather(in, out *ts.Tensor) error {
	hi, err := handle(in)
	if err != nil {
		return err
	}
	ho, err := handle(out)
	if err != nil {
		return err
	}
	return check("all-gather", C.rg_allgather(g.p, hi, ho))
}

// Barrier returns when every rank has reached it.
func (g *Group) Barrier() error { return check("barrier", C.rg_barrier(g.p)) }

// Close releases the group.
func (g *Group) Close() {
	if g != nil && g.p != nil {
		C.rg_group_free(g.p)
		g.p = nil
	}
}
