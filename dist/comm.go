package dist

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"

	"github.com/ragen-go/ragen/dist/c10d"
	"github.com/ragen-go/ragen/internal/torchrt"
)

// Comm is this process's view of the job: its rank and the process group.
// A nil *Comm is a job of one process: every collective is then the
// identity, so callers need no special case.
type Comm struct {
	env   Env
	store *c10d.Store
	group *c10d.Group
}

// Options configure Init.
type Options struct {
	Timeout time.Duration // rendezvous and per-collective limit; 0 = 10 minutes
	Backend c10d.Backend  // Gloo for CPU tensors, NCCL for CUDA
}

// BucketBytes is the size of the flat buffers gradients are summed in
// (DDP's default bucket, 25 MiB).
const BucketBytes = 25 << 20

// Init joins the job e describes: rank 0 serves the TCPStore at
// MASTER_ADDR:MASTER_PORT, every rank connects and builds the process
// group. A job of one process returns nil (see Comm).
func Init(e Env, o Options) (*Comm, error) {
	if !e.Distributed() {
		return nil, nil
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Minute
	}
	st, err := c10d.NewStore(e.MasterAddr, e.MasterPort, e.WorldSize, e.Rank == 0, o.Timeout)
	if err != nil {
		return nil, fmt.Errorf("rank %d of %d: joining the job at %s:%d (MASTER_ADDR, MASTER_PORT): %w", e.Rank, e.WorldSize, e.MasterAddr, e.MasterPort, err)
	}
	g, err := c10d.NewGroup(st, o.Backend, e.Rank, e.WorldSize, o.Timeout)
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("rank %d of %d: %w", e.Rank, e.WorldSize, err)
	}
	return &Comm{env: e, store: st, group: g}, nil
}

// Rank is this process's rank (0 for a nil Comm).
func (c *Comm) Rank() int {
	if c == nil {
		return 0
	}
	return c.env.Rank
}

// World is the number of processes (1 for a nil Comm).
func (c *Comm) World() int {
	if c == nil {
		return 1
	}
	return c.env.WorldSize
}

// Main tells whether this is rank 0, the one that writes the run's files.
func (c *Comm) Main() bool { return c.Rank() == 0 }

// Close leaves the job.
func (c *Comm) Close() {
	if c == nil {
		return
	}
	c.group.Close()
	c.store.Close()
}

// wrap names the rank and says what a failed collective usually means.
func (c *Comm) wrap(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("rank %d of %d: %s failed (another rank died, timed out or disagrees): %w", c.Rank(), c.World(), what, err)
}

// reduceFloat64s reduces v elementwise across ranks with op, in place.
func (c *Comm) reduceFloat64s(what string, v []float64, op c10d.Op) error {
	if c == nil || len(v) == 0 {
		return nil
	}
	t, err := ts.OfSlice(v)
	if err != nil {
		return err
	}
	defer t.MustDrop()
	if err := c.group.AllReduce(t, op); err != nil {
		return c.wrap(what, err)
	}
	copy(v, t.Float64Values(false))
	return nil
}

// Sum adds v elementwise over the ranks, in place.
func (c *Comm) Sum(what string, v ...*float64) error {
	if c == nil {
		return nil
	}
	buf := make([]float64, len(v))
	for i, p := range v {
		buf[i] = *p
	}
	if err := c.reduceFloat64s(what, buf, c10d.Sum); err != nil {
		return err
	}
	for i, p := range v {
		*p = buf[i]
	}
	return nil
}

// SumSlice adds v elementwise over the ranks, in place.
func (c *Comm) SumSlice(what string, v []float64) error { return c.reduceFloat64s(what, v, c10d.Sum) }

// Any tells whether flag is true on some rank.
func (c *Comm) Any(what string, flag bool) (bool, error) {
	v := []float64{0}
	if flag {
		v[0] = 1
	}
	err := c.reduceFloat64s(what, v, c10d.Max)
	return v[0] > 0, err
}

// GatherBytes gives every rank every rank's b, in rank order.
func (c *Comm) GatherBytes(what string, b []byte) ([][]byte, error) {
	if c == nil {
		return [][]byte{b}, nil
	}
	lens := make([]float64, c.World())
	lens[c.Rank()] = float64(len(b))
	if err := c.SumSlice(what+" (sizes)", lens); err != nil {
		return nil, err
	}
	n := 0
	for _, l := range lens {
		n = max(n, int(l))
	}
	pad := make([]byte, max(n, 1))
	copy(pad, b)
	in, err := ts.OfSlice(pad)
	if err != nil {
		return nil, err
	}
	defer in.MustDrop()
	out, err := ts.Zeros([]int64{int64(c.World()), int64(len(pad))}, gotch.Uint8, gotch.CPU)
	if err != nil {
		return nil, err
	}
	defer out.MustDrop()
	if err := c.group.AllGather(in, out); err != nil {
		return nil, c.wrap(what, err)
	}
	all := out.Vals().([]uint8)
	parts := make([][]byte, c.World())
	for r := range parts {
		parts[r] = bytes.Clone(all[r*len(pad) : r*len(pad)+int(lens[r])])
	}
	return parts, nil
}

// AllReduceGrads averages-by-sum the gradients of params: each rank's loss
// is already scaled by its share of the global batch, so the sum is the
// gradient of the whole batch.
func (c *Comm) AllReduceGrads(params []*ts.Tensor) error {
	if c == nil {
		return nil
	}
	return c.wrap("gradient all-reduce", c.group.AllReduceGrads(params, BucketBytes))
}

// Broadcast copies rank 0's tensors into every rank's (weights at start).
func (c *Comm) Broadcast(what string, tensors []*ts.Tensor) error {
	if c == nil {
		return nil
	}
	return c.wrap(what, c.group.Broadcast(tensors, 0))
}

// Barrier waits for every rank.
func (c *Comm) Barrier(what string) error {
	if c == nil {
		return nil
	}
	return c.wrap(what, c.group.Barrier())
}

// ErrDiverged is returned by CheckSame when the ranks' weights differ.
var ErrDiverged = errors.New("the ranks' weights differ")

// Checksum is an FNV-1a hash of the tensors' bytes, in order.
func Checksum(tensors []*ts.Tensor) (uint64, error) {
	h := fnv.New64a()
	for i, t := range tensors {
		b, err := torchrt.TensorBytes(t, t.DType())
		if err != nil {
			return 0, fmt.Errorf("checksum of tensor %d: %w", i, err)
		}
		h.Write(b)
	}
	return h.Sum64(), nil
}

// CheckSame hashes the tensors on every rank and compares: identical
// weights on every rank is data parallelism's invariant, and a silent
// divergence (a nondeterministic op, a missed all-reduce) would otherwise
// train W different models. It returns the hash.
func (c *Comm) CheckSame(what string, tensors []*ts.Tensor) (uint64, error) {
	sum, err := Checksum(tensors)
	if err != nil || c == nil {
		return sum, err
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], sum)
	parts, err := c.GatherBytes("checksum of "+what, b[:])
	if err != nil {
		return 0, err
	}
	for r, p := range parts {
		if got := binary.LittleEndian.Uint64(p); got != sum {
			return 0, fmt.Errorf("%w: %s hash %016x on rank %d, %016x on rank %d", ErrDiverged, what, sum, c.Rank(), got, r)
		}
	}
	return sum, nil
}
