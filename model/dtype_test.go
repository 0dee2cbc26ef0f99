package model

import (
	"testing"

	"github.com/sugarme/gotch"
)

// The same checkpoint held in bf16 gives the fp32 logits to bf16 precision,
// and generates on the bf16 path.
func TestBF16MatchesFP32(t *testing.T) {
	dir, _ := writeTiny(t, false, 0)
	want := fullLogits(t, loadTiny(t, dir), testSeqs)
	m, err := LoadCausalLM(dir, Options{Device: gotch.CPU, DType: gotch.BFloat16})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Drop()
	if m.Embed.DType() != gotch.BFloat16 {
		t.Fatalf("weights held as %v, want bf16", m.Embed.DType())
	}
	got := fullLogits(t, m, testSeqs)
	ids, mask := padded(testSeqs)
	worst := 0.0
	for b := range ids {
		for j := range ids[b] {
			if mask[b][j] == 1 {
				worst = max(worst, maxAbsDiff(got[b][j], want[b][j]))
			}
		}
	}
	t.Logf("bf16 vs fp32: max |logit difference| = %.3g", worst)
	if worst > 0.15 {
		t.Fatalf("bf16 logits differ from fp32 by %.3g", worst)
	}
	if _, err := m.Generate(testSeqs, GenerateOptions{MaxNewTokens: 4}); err != nil {
		t.Fatal(err)
	}
	if dt, err := ParseDType("auto", gotch.CPU); err != nil || dt != gotch.Float {
		t.Fatalf("auto dtype on the CPU = %v, %v; want fp32", dt, err)
	}
	if dt, _ := ParseDType("auto", gotch.CudaBuilder(0)); dt != gotch.BFloat16 {
		t.Fatalf("auto dtype on a GPU = %v, want bf16", dt)
	}
}
