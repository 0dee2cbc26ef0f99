package model

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"
)

// TopLayers picks the top k decoder layers, the final norm and a critic's
// head; 0 picks everything, and k beyond the model is an error.
func TestTopLayers(t *testing.T) {
	dir, cfg := writeTiny(t, false, 0) // 2 layers, untied
	m := loadTiny(t, dir)
	all := m.Params()
	got, err := TopLayers(all, cfg.NumHiddenLayers, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range got {
		if !strings.HasPrefix(p.Name, "model.layers.1.") && p.Name != "model.norm.weight" {
			t.Errorf("TopLayers(1) includes %s", p.Name)
		}
	}
	if want := 1 + 12; len(got) != want { // layer 1 (9 weights, 3 biases) and the final norm
		t.Errorf("TopLayers(1) has %d weights, want %d", len(got), want)
	}
	if every, _ := TopLayers(all, cfg.NumHiddenLayers, 0); len(every) != len(all) {
		t.Errorf("TopLayers(0) has %d of %d weights", len(every), len(all))
	}
	if _, err := TopLayers(all, cfg.NumHiddenLayers, 3); err == nil || !strings.Contains(err.Error(), "train_layers 3") {
		t.Errorf("TopLayers(3) of a 2-layer model: %v", err)
	}
}

// With only the top layer trainable, its gradients are the ones a full
// backward gives it, and nothing below (nor the tied head) gets one.
func TestTopLayersGradients(t *testing.T) {
	dir, cfg := writeTiny(t, true, 0)
	ids, mask, L := batch(testSeqs)
	defer dropAll(ids, mask)
	B := int64(len(testSeqs))
	a := must(ts.Randn([]int64{B, int64(L - 1)}, gotch.Float, gotch.CPU))
	defer a.MustDrop()
	grads := func(k int) map[string][]float32 {
		m := loadTiny(t, dir)
		train, err := TopLayers(m.Params(), cfg.NumHiddenLayers, k)
		if err != nil {
			t.Fatal(err)
		}
		if err := SetTrainable(train, true); err != nil {
			t.Fatal(err)
		}
		sc, err := m.ScoreForTraining(ids, mask, nil, 4)
		if err != nil {
			t.Fatal(err)
		}
		loss := must(must(sc.LogProbs.Mul(a, false)).Sum(gotch.Float, true))
		check(loss.Backward())
		loss.MustDrop()
		if err := sc.Backward(); err != nil {
			t.Fatal(err)
		}
		sc.Drop()
		out := map[string][]float32{}
		for _, p := range m.Params() {
			if g := gradOrNil(p.T); g != nil {
				out[p.Name] = Float32s(g)
				g.MustDrop()
			}
		}
		return out
	}
	full, top := grads(0), grads(1)
	var names []string
	for n := range top {
		names = append(names, n)
	}
	slices.Sort(names)
	if len(names) != 13 || !strings.HasPrefix(names[0], "model.layers.1.") {
		t.Fatalf("gradients reached %v; want layer 1 and the final norm only", names)
	}
	worst := 0.0
	for _, n := range names {
		for i, g := range top[n] {
			worst = math.Max(worst, math.Abs(float64(g-full[n][i])))
		}
	}
	if worst > 1e-6 {
		t.Fatalf("the top layer's gradients differ from the full backward's by %.3g", worst)
	}
}

// A batch that repeats prompts prefills each distinct prompt once: its
// greedy continuations and log-probabilities are each prompt's alone.
func TestGenerateSharedPrefill(t *testing.T) {
	dir, _ := writeTiny(t, true, 0)
	m := loadTiny(t, dir)
	p1, p2 := []int{3, 9, 12, 4}, []int{5, 7}
	opt := GenerateOptions{MaxNewTokens: 6}
	batch, err := m.Generate([][]int{p1, p2, p1, p1, p2}, opt)
	if err != nil {
		t.Fatal(err)
	}
	if first, of := distinctRows([]int64{1, 2, 1, 2, 3, 3}, []int64{1, 1, 1, 1, 1, 1}, 3, 2); !slices.Equal(first, []int{0, 2}) || !slices.Equal(of, []int64{0, 0, 1}) {
		t.Errorf("distinctRows = %v, %v", first, of)
	}
	for i, p := range [][]int{p1, p2, p1, p1, p2} {
		alone, err := m.Generate([][]int{p}, opt)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(batch[i].IDs, alone[0].IDs) {
			t.Fatalf("row %d: %v in the batch, %v alone", i, batch[i].IDs, alone[0].IDs)
		}
		for j := range alone[0].LogProbs {
			if d := math.Abs(float64(batch[i].LogProbs[j] - alone[0].LogProbs[j])); d > 1e-5 {
				t.Fatalf("row %d token %d: log-prob %v in the batch, %v alone", i, j, batch[i].LogProbs[j], alone[0].LogProbs[j])
			}
		}
	}
}
