package model

import (
	"reflect"
	"testing"

	"github.com/ragen-go/ragen/internal/cpurow"
)

// withRowSteps runs fn with the single-row decoding step on or off and
// returns how many steps took it.
func withRowSteps(on bool, fn func()) int {
	prev, n := rowSteps, rowStepsTaken
	rowSteps = on
	defer func() { rowSteps = prev }()
	fn()
	return rowStepsTaken - n
}

// The row decoding step (cpurow) is the eager layers' math: Qwen2's q/k/v
// biases, grouped-query attention, tied and untied heads, a left-padded
// batch that shrinks as its sequences stop, down to one sequence whose
// keys are still left-padded (the additive bias then masks some of them),
// and single sequences.
// Greedy ids agree exactly and log-probs to fp32 rounding (1e-5).
func TestRowStepMatchesEagerLayers(t *testing.T) {
	if !cpurow.Available() {
		t.Skip("this libtorch's BLAS exports no cblas_sgemv, so decoding keeps the eager layers")
	}
	for _, tied := range []bool{false, true} {
		dir, cfg := writeTiny(t, tied, 0)
		if cfg.NumAttentionHeads == cfg.NumKeyValueHeads {
			t.Fatal("the tiny config should group query heads")
		}
		m := loadTiny(t, dir)
		// Sequences 0 and 1 stop after 2 and 4 tokens, so sequence 2, a
		// 1-token prompt left-padded to 7, decodes its last 5 tokens alone;
		// alone, each decodes at batch 1 throughout.
		stop := func(seq int, ids []int) bool { return seq == 0 && len(ids) == 2 || seq == 1 && len(ids) == 4 }
		opt := GenerateOptions{MaxNewTokens: 9, Stop: stop}
		prompts := [][]int{testSeqs[0], testSeqs[1], testSeqs[2]}
		var eager, row [][]Generation
		run := func(out *[][]Generation) {
			g, err := m.Generate(prompts, opt)
			if err != nil {
				t.Fatal(err)
			}
			*out = append(*out, g)
			for _, p := range prompts {
				g, err := m.Generate([][]int{p}, GenerateOptions{MaxNewTokens: 9})
				if err != nil {
					t.Fatal(err)
				}
				*out = append(*out, g)
			}
		}
		if n := withRowSteps(false, func() { run(&eager) }); n != 0 {
			t.Fatalf("tied=%v: %d row steps with them switched off", tied, n)
		}
		n := withRowSteps(true, func() { run(&row) })
		// Each of the 4 calls decodes 8 steps after its prefill, the batch
		// at 3, 2 and then 1 rows; the 1-token prompt's prefill alone is
		// a step of one token too.
		if n != 4*8+1 {
			t.Fatalf("tied=%v: %d decoding steps took the row step, want all 33", tied, n)
		}
		for c := range eager {
			for i := range eager[c] {
				e, r := eager[c][i], row[c][i]
				if !reflect.DeepEqual(e.IDs, r.IDs) || e.Reason != r.Reason {
					t.Fatalf("tied=%v call %d seq %d: eager %v (%s), row %v (%s)", tied, c, i, e.IDs, e.Reason, r.IDs, r.Reason)
				}
				if d := maxAbsDiff(e.LogProbs, r.LogProbs); d > 1e-5 {
					t.Fatalf("tied=%v call %d seq %d: log-probs differ by %.3g", tied, c, i, d)
				}
			}
		}
	}
}

// A model with LoRA adapters decodes through the eager layers, which add
// the adapters' term; the row step would leave it out.
func TestRowStepSkipsAdapters(t *testing.T) {
	dir, _ := writeTiny(t, false, 0)
	m := loadTiny(t, dir)
	if err := m.AddLoRA(loraTest(1)); err != nil {
		t.Fatal(err)
	}
	n := withRowSteps(true, func() {
		if _, err := m.Generate([][]int{testSeqs[0]}, GenerateOptions{MaxNewTokens: 4}); err != nil {
			t.Fatal(err)
		}
	})
	if n != 0 {
		t.Fatalf("%d decoding steps of a LoRA model took the row step", n)
	}
}
