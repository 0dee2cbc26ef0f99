package model

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/ragen-go/ragen/model/reference"
	"github.com/ragen-go/ragen/model/safetensors"
)

// Two independent implementations must agree: the gotch model and the
// plain-Go reference, on tied and untied, single-file and sharded
// checkpoints, at every non-padding position of a left-padded batch.
func TestLogitsMatchReference(t *testing.T) {
	for _, tc := range []struct {
		name  string
		tied  bool
		shard int64
	}{{"untied", false, 0}, {"tied", true, 0}, {"untied-sharded", false, 20_000}, {"tied-sharded", true, 20_000}} {
		t.Run(tc.name, func(t *testing.T) {
			dir, _ := writeTiny(t, tc.tied, tc.shard)
			if tc.shard > 0 {
				if _, err := os.Stat(filepath.Join(dir, "model.safetensors.index.json")); err != nil {
					t.Fatalf("sharded checkpoint has no index: %v", err)
				}
			}
			ck, err := safetensors.OpenDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer ck.Close()
			rcfg, err := reference.LoadConfig(dir)
			if err != nil {
				t.Fatal(err)
			}
			ref, err := reference.Load(rcfg, ck)
			if err != nil {
				t.Fatal(err)
			}
			ids, mask := padded(testSeqs)
			want, err := ref.Forward(ids, mask)
			if err != nil {
				t.Fatal(err)
			}
			got := fullLogits(t, loadTiny(t, dir), testSeqs)
			worst := 0.0
			for b := range ids {
				for j := range ids[b] {
					if mask[b][j] == 1 {
						worst = math.Max(worst, maxAbsDiff(got[b][j], want[b][j]))
					}
				}
			}
			t.Logf("max |logit difference| = %.2g", worst)
			if worst > 1e-4 {
				t.Fatalf("gotch and reference logits differ by %.3g (> 1e-4)", worst)
			}
		})
	}
}

// padded returns the plain-slice left-padded batch the reference takes.
func padded(seqs [][]int) ([][]int, [][]int) {
	L := 0
	for _, s := range seqs {
		L = max(L, len(s))
	}
	ids, mask := make([][]int, len(seqs)), make([][]int, len(seqs))
	for b, s := range seqs {
		ids[b], mask[b] = make([]int, L), make([]int, L)
		for j, id := range s {
			ids[b][L-len(s)+j], mask[b][L-len(s)+j] = id, 1
		}
	}
	return ids, mask
}
