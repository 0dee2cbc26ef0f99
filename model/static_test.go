package model

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/sugarme/gotch"

	"github.com/ragen-go/ragen/internal/torchrt"
)

// staticTol bounds the log-probability difference between static and
// dynamic decoding in fp32: the static step attends over the whole
// capacity (the unwritten keys weigh exactly 0) and never compacts the
// batch, so its sums run in another order and matrix shapes.
const staticTol = 1e-5

// staticPrompts is a left-padded batch of several lengths (1 to 20), so
// most rows start with padding and every row's first key column differs.
func staticPrompts() [][]int {
	lens := []int{20, 1, 7, 13, 4}
	out := make([][]int, len(lens))
	for b, n := range lens {
		for j := range n {
			out[b] = append(out[b], 2+(b*31+j*17)%60)
		}
	}
	return out
}

// stopAfter ends sequence i after 3+3i tokens, so rows finish at different
// steps: the dynamic path compacts its batch on the way, the static one
// keeps every row.
func stopAfter(seq int, ids []int) bool { return len(ids) >= 3+3*seq }

func compareGenerations(t *testing.T, what string, got, want []Generation) float64 {
	t.Helper()
	worst := 0.0
	for i := range want {
		if !reflect.DeepEqual(got[i].IDs, want[i].IDs) || got[i].Reason != want[i].Reason {
			t.Fatalf("%s: sequence %d: static %v (%s), dynamic %v (%s)", what, i, got[i].IDs, got[i].Reason, want[i].IDs, want[i].Reason)
		}
		d := maxAbsDiff(got[i].LogProbs, want[i].LogProbs)
		worst = math.Max(worst, d)
		if d > staticTol {
			t.Fatalf("%s: sequence %d: log-probs differ by %.3g (tolerance %g)", what, i, d, staticTol)
		}
	}
	return worst
}

// Greedy generation through the static cache gives the dynamic cache's
// ids exactly and its log-probabilities within staticTol, for a left-padded
// batch of several lengths with rows stopping at different steps, on the
// matmul path and (where libtorch has it) SDPA, and across the turns of a
// session, whose later prompts reuse cached keys.
func TestStaticCacheEqualsDynamic(t *testing.T) {
	dir, _ := writeTiny(t, false, 0)
	m := loadTiny(t, dir)
	paths := []bool{false}
	if torchrt.HasSDPA() {
		paths = append(paths, true)
	} else {
		t.Log("this libtorch has no scaled_dot_product_attention: the matmul path only")
	}
	prompts := staticPrompts()
	for _, sdpa := range paths {
		onPath(t, m, sdpa, func() {
			name := map[bool]string{false: "matmul", true: "sdpa"}[sdpa]
			for _, stop := range []bool{false, true} {
				o := GenerateOptions{MaxNewTokens: 24}
				if stop {
					o.Stop = stopAfter
				}
				dyn, err := m.Generate(prompts, o)
				if err != nil {
					t.Fatal(err)
				}
				o.StaticCache = true
				st, err := m.Generate(prompts, o)
				if err != nil {
					t.Fatal(err)
				}
				what := fmt.Sprintf("%s, rows stopping early %v", name, stop)
				t.Logf("%s: ids equal, log-probs within %.2g", what, compareGenerations(t, what, st, dyn))
			}
			// Two turns of a session: the second prompt is the first, its
			// answer and a reply.
			var gens [2][]Generation
			for k, static := range []bool{false, true} {
				sess := NewSession()
				o := GenerateOptions{MaxNewTokens: 6, Session: sess, StaticCache: static}
				first, err := m.Generate(prompts, o)
				if err != nil {
					t.Fatal(err)
				}
				next := make([][]int, len(prompts))
				for i, p := range prompts {
					next[i] = append(append(append([]int(nil), p...), first[i].IDs...), 5, 9, 11)
				}
				if gens[k], err = m.Generate(next, o); err != nil {
					t.Fatal(err)
				}
				sess.Drop()
			}
			what := name + ", second turn of a session"
			t.Logf("%s: ids equal, log-probs within %.2g", what, compareGenerations(t, what, gens[1], gens[0]))
		})
	}
}

// The static cache's memory stays where it was allocated for the whole
// generation, which is what lets a CUDA graph replay its writes; and the
// decoder hands the cache back to ordinary writes when it is done.
func TestStaticDecodeKeepsItsTensors(t *testing.T) {
	dir, _ := writeTiny(t, false, 0)
	m := loadTiny(t, dir)
	prompts := staticPrompts()
	ok := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	ok(torchrt.NoGrad(func() (err error) {
		defer torchrt.Catch(&err, "static decode")
		B, L := len(prompts), 20
		ids, mask, _ := batch(prompts)
		defer dropAll(ids, mask)
		cache, err := NewCache(m.Cfg, int64(B), int64(L+8), m.DType, m.Device)
		ok(err)
		defer cache.Drop()
		logits := m.prefill(Int64s(ids), Int64s(mask), B, L, L, cache)
		logits.MustDrop()
		next := make([]int64, B)
		for b, p := range prompts {
			next[b] = int64(len(p))
		}
		d, err := newStaticDecoder(m, cache, Int64s(mask), B, L, next, false)
		ok(err)
		kAt := func() uintptr {
			p, err := cache.layers[1].K.DataPtr()
			ok(err)
			return uintptr(p)
		}
		k0, bias0 := kAt(), size(d.bias)
		for step := range 7 {
			toks := make([]int64, B)
			for b := range toks {
				toks[b] = int64(3 + step + b)
			}
			l := d.step(toks)
			if sh := size(l); !reflect.DeepEqual(sh, []int64{int64(B), int64(m.Cfg.VocabSize)}) {
				t.Fatalf("step %d: logits %v", step, sh)
			}
			l.MustDrop()
			if kAt() != k0 || !reflect.DeepEqual(size(d.bias), bias0) {
				t.Fatalf("step %d: the cache moved or the mask changed shape", step)
			}
		}
		if cache.Len != int64(L+7) {
			t.Fatalf("cache.Len = %d after 7 steps past %d", cache.Len, L)
		}
		if got := Int64s(d.col); got[0] != int64(L+7) {
			t.Fatalf("the device-side column is %d, want %d", got[0], L+7)
		}
		// One step too many overflows with an error, not a write past the end.
		l := d.step(make([]int64, B))
		l.MustDrop()
		func() {
			var err error
			defer func() {
				if err == nil || !strings.Contains(err.Error(), "kv cache overflow") {
					t.Errorf("a step past the capacity: err = %v, want the overflow error", err)
				}
			}()
			defer torchrt.Catch(&err, "overflow")
			d.step(make([]int64, B)).MustDrop()
		}()
		d.Drop()
		if cache.static() {
			t.Fatal("the cache still writes statically after the decoder was dropped")
		}
		return nil
	}))
}

// Asking for CUDA graphs on the CPU is an error before any work, naming
// what is missing; it does not panic.
func TestCUDAGraphsOnCPUIsAnError(t *testing.T) {
	dir, _ := writeTiny(t, false, 0)
	m := loadTiny(t, dir)
	if m.Device != gotch.CPU {
		t.Skip("the model is not on the CPU")
	}
	out, err := m.Generate(staticPrompts(), GenerateOptions{MaxNewTokens: 4, CUDAGraphs: true})
	if err == nil || out != nil {
		t.Fatalf("CUDA graphs on the CPU: %v, %v; want an error", out, err)
	}
	if !strings.Contains(err.Error(), "CUDA graphs need a CUDA build of libtorch and a CUDA device; this is the CPU") {
		t.Fatalf("error %q does not say what CUDA graphs need", err)
	}
}
