package torchrt

import (
	"runtime"
	"testing"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"
)

// gotch v0.9.1 as published leaks its C.malloc(0) output slot on every op
// (at least 32 bytes of glibc heap each, so 32 MB per million ops). The
// prepared copy sizes and frees the slots: a million ops must leave the
// resident set flat.
func TestMillionOpsResidentMemoryFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("a million ops take a few seconds")
	}
	x := ts.MustOnes([]int64{4}, gotch.Float, gotch.CPU)
	defer x.MustDrop()
	run := func(n int) {
		for i := 0; i < n; i++ {
			y, err := x.Add(x, false)
			if err != nil {
				t.Fatal(err)
			}
			y.MustDrop()
		}
		runtime.GC()
	}
	run(100_000) // warm up allocator pools and gotch's bookkeeping
	before := ReadMemory().Resident
	run(1_000_000)
	after := ReadMemory().Resident
	growth := after - before
	t.Logf("resident before %.1f MB, after a million ops %.1f MB (growth %.2f MB)", mb(before), mb(after), mb(growth))
	if before == 0 {
		t.Fatal("could not read the resident set from /proc/self/status")
	}
	if growth > 8<<20 {
		t.Fatalf("resident memory grew by %.1f MB over a million ops: a per-op leak", mb(growth))
	}
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }

// EmbeddingBag has four outputs: gotch as published writes 32 bytes into a
// zero-size block for it. With sized slots the outputs are intact.
func TestFourOutputOp(t *testing.T) {
	weight := ts.MustOfSlice([]float32{1, 2, 3, 10, 20, 30, 100, 200, 300}).MustView([]int64{3, 3}, true)
	indices := ts.MustOfSlice([]int64{0, 2, 1})
	offsets := ts.MustOfSlice([]int64{0, 2})
	for i := 0; i < 10_000; i++ {
		out, o1, o2, o3, err := ts.EmbeddingBag(weight, indices, offsets, false, 0, false, ts.None, false)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			// bag 0 = rows 0 and 2 summed, bag 1 = row 1 (mode 0 = sum).
			want := []float64{101, 202, 303, 10, 20, 30}
			got := out.Float64Values()
			for j := range want {
				if got[j] != want[j] {
					t.Fatalf("embedding_bag = %v, want %v", got, want)
				}
			}
		}
		for _, o := range []*ts.Tensor{out, o1, o2, o3} {
			o.MustDrop()
		}
	}
}

// gotch's in-place ops swapped in the handle libtorch returns without
// freeing the old one, which kept a dropped tensor's storage alive (4 MB a
// call here). The prepared copy frees it.
func TestInPlaceOpsFreeTheirHandle(t *testing.T) {
	run := func(n int) {
		for i := 0; i < n; i++ {
			x, err := ts.Zeros([]int64{1 << 20}, gotch.Float, gotch.CPU) // 4 MB
			if err != nil {
				t.Fatal(err)
			}
			if err := x.AddScalar_(ts.FloatScalar(2)); err != nil {
				t.Fatal(err)
			}
			if err := x.MulScalar_(ts.FloatScalar(3)); err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				if v, _ := x.Float64Value([]int64{7}); v != 6 {
					t.Fatalf("(0+2)·3 = %v", v)
				}
			}
			x.MustDrop()
		}
		runtime.GC()
	}
	run(20)
	before := ReadMemory().Resident
	run(200)
	growth := ReadMemory().Resident - before
	t.Logf("resident growth over 200 in-place pairs on 4 MB tensors: %.1f MB", mb(growth))
	if growth > 64<<20 {
		t.Fatalf("resident memory grew by %.0f MB: in-place ops keep dropped tensors alive", mb(growth))
	}
}
