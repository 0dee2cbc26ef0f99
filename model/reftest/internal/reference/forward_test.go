package reference

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/ragen-go/ragen/model/safetensors"
)

// tinyModel writes a random tiny checkpoint into a temporary folder and
// loads it.
func tinyModel(t *testing.T, tied bool, shardBytes int64) (*Model, string) {
	t.Helper()
	dir := t.TempDir()
	if err := RandomCheckpoint(dir, TinyConfig(), 7, tied, shardBytes); err != nil {
		t.Fatal(err)
	}
	return loadDir(t, dir), dir
}

func loadDir(t *testing.T, dir string) *Model {
	t.Helper()
	cfg, err := LoadConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	ck, err := safetensors.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	m, err := Load(cfg, ck)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func forward(t *testing.T, m *Model, ids, mask [][]int) [][][]float32 {
	t.Helper()
	logits, err := m.Forward(ids, mask)
	if err != nil {
		t.Fatal(err)
	}
	return logits
}

// maxDiff is the largest |a − b| over two logit rows.
func maxDiff(a, b []float32) float64 {
	var d float64
	for i := range a {
		d = max(d, math.Abs(float64(a[i])-float64(b[i])))
	}
	return d
}

var seq = []int{5, 17, 42, 3, 63, 0, 29, 11}

func TestForwardShapesFinite(t *testing.T) {
	m, _ := tinyModel(t, true, 0)
	logits := forward(t, m, [][]int{seq, seq}, nil)
	if len(logits) != 2 || len(logits[0]) != len(seq) || len(logits[0][0]) != 64 {
		t.Fatalf("logits shape [%d][%d][%d]", len(logits), len(logits[0]), len(logits[0][0]))
	}
	var spread float64
	for _, row := range logits[0] {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, v := range row {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				t.Fatalf("non-finite logit %g", v)
			}
			lo, hi = min(lo, float64(v)), max(hi, float64(v))
		}
		spread = max(spread, hi-lo)
	}
	// The random weights are scaled so that logits are of order one, which
	// is what makes the equivalence tests below sensitive.
	if spread < 1 {
		t.Errorf("logits span only %g: the test model is too close to uniform", spread)
	}
}

func TestLeftPaddingMatchesUnpadded(t *testing.T) {
	m, _ := tinyModel(t, true, 0)
	const pad = 3
	padded := append([]int{9, 9, 9}, seq...) // pad ids are arbitrary: masked
	mask := append([]int{0, 0, 0}, ones(len(seq))...)
	short := seq[:5]
	paddedShort := append([]int{1, 2, 3, 4, 4, 4}, short...)
	maskShort := append(make([]int, 6), ones(len(short))...)
	got := forward(t, m, [][]int{padded, paddedShort}, [][]int{mask, maskShort})
	want := forward(t, m, [][]int{seq}, nil)
	wantShort := forward(t, m, [][]int{short}, nil)
	for i := range seq {
		if d := maxDiff(got[0][pad+i], want[0][i]); d > 1e-5 {
			t.Errorf("padded position %d differs from unpadded by %g", i, d)
		}
	}
	for i := range short {
		if d := maxDiff(got[1][6+i], wantShort[0][i]); d > 1e-5 {
			t.Errorf("batch row 1, position %d differs from its single run by %g", i, d)
		}
	}
	// Shifting positions instead of counting from the first real token is
	// what a wrong position id would do: it must be visible.
	shifted := forward(t, m, [][]int{padded}, nil)
	if d := maxDiff(shifted[0][pad+2], want[0][2]); d < 1e-3 {
		t.Errorf("attending the padding changed logits by only %g", d)
	}
}

func TestCausal(t *testing.T) {
	m, _ := tinyModel(t, false, 0)
	changed := append([]int(nil), seq...)
	changed[5] = 50
	a := forward(t, m, [][]int{seq}, nil)
	b := forward(t, m, [][]int{changed}, nil)
	for i := range 5 {
		if d := maxDiff(a[0][i], b[0][i]); d != 0 {
			t.Errorf("changing token 5 changed the logits at %d by %g", i, d)
		}
	}
	if d := maxDiff(a[0][5], b[0][5]); d < 1e-3 {
		t.Errorf("changing token 5 changed its own logits by only %g", d)
	}
}

func TestShardedMatchesSingle(t *testing.T) {
	single, _ := tinyModel(t, false, 0)
	sharded, dir := tinyModel(t, false, 20_000) // ~90 KB of weights: several shards
	if _, err := os.Stat(filepath.Join(dir, safetensors.IndexFileName)); err != nil {
		t.Fatalf("expected a sharded checkpoint: %v", err)
	}
	a := forward(t, single, [][]int{seq}, nil)
	b := forward(t, sharded, [][]int{seq}, nil)
	for i := range seq {
		if d := maxDiff(a[0][i], b[0][i]); d != 0 {
			t.Errorf("position %d: sharded and single-file logits differ by %g", i, d)
		}
	}
}

func TestForwardRejects(t *testing.T) {
	m, _ := tinyModel(t, true, 0)
	bad := []struct {
		name      string
		ids, mask [][]int
	}{
		{"ragged", [][]int{{1, 2}, {1}}, nil},
		{"out of vocabulary", [][]int{{1, 64}}, nil},
		{"negative id", [][]int{{-1}}, nil},
		{"mask rows", [][]int{{1}}, [][]int{{1}, {1}}},
		{"mask width", [][]int{{1, 2}}, [][]int{{1}}},
		{"mask value", [][]int{{1, 2}}, [][]int{{1, 2}}},
	}
	for _, c := range bad {
		if _, err := m.Forward(c.ids, c.mask); err == nil {
			t.Errorf("%s: Forward succeeded", c.name)
		}
	}
}

func ones(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = 1
	}
	return s
}
