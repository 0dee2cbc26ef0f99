package bench

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func sampleReport() *Report {
	r := &Report{
		Model:    ModelInfo{Source: "50m", Parameters: 50_700_000, Hidden: 512, Layers: 12, Heads: 8, KVHeads: 2, Intermediate: 2304, Vocab: 618, DType: "fp32", Device: "cpu"},
		Runtime:  RuntimeInfo{Libtorch: "1.13.0", TorchThreads: 1, BLASThreads: 2, Cores: 2},
		Peak:     map[string]Peak{"fp32": {FLOPPerS: 200e9, TorchThreads: 1, TorchFLOPPerS: 199e9}},
		Baseline: &BaselineInfo{Python: "3.11.2", Torch: "1.13.0", Threads: 1},
	}
	res := Result{Name: "decode", Label: "decode 31 tokens", Batch: 64, Tokens: 1984, FLOPs: 2e11}
	res.Ours = measure(2, res.Tokens, res.FLOPs, 200e9)
	res.setTorch(4, memoryFigures{PeakRSS: 1 << 30}, 200e9)
	r.Results = append(r.Results, res)
	r.Results = append(r.Results, Result{Name: "rollout", Label: "rollout", Batch: 32, Tokens: 100, Ours: measure(10, 100, 1e12, 200e9),
		Details: map[string]float64{"env_tokenizer_share": 0.01, "env_tokenizer_seconds": 0.1, "generate_seconds": 9.9}})
	return r
}

// The rates follow from tokens, FLOPs and seconds, the ratio is ours over
// the baseline's, and the JSON has the documented keys.
func TestReportJSONShape(t *testing.T) {
	var buf bytes.Buffer
	if err := sampleReport().WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Model   map[string]any            `json:"model"`
		Runtime map[string]any            `json:"runtime"`
		Peak    map[string]map[string]any `json:"peak"`
		Results []struct {
			Name  string             `json:"name"`
			Batch int                `json:"batch"`
			Ours  map[string]float64 `json:"ours"`
			Torch map[string]float64 `json:"torch"`
			Ratio float64            `json:"ratio_vs_torch"`
		} `json:"results"`
		Baseline map[string]any `json:"baseline"`
	}
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"source", "parameters", "dtype", "device", "vocab_size"} {
		if _, ok := got.Model[k]; !ok {
			t.Errorf("model has no %q", k)
		}
	}
	if got.Peak["fp32"]["flop_per_s"] != 200e9 || got.Baseline["torch"] != "1.13.0" || got.Runtime["blas_threads"] != 2.0 {
		t.Errorf("peak, baseline or runtime wrong: %+v %+v %+v", got.Peak, got.Baseline, got.Runtime)
	}
	d := got.Results[0]
	want := map[string]float64{"seconds": 2, "tokens_per_s": 992, "flop_per_s": 1e11, "mfu": 0.5, "peak_rss_bytes": 0}
	for k, v := range want {
		if x, ok := d.Ours[k]; !ok || x != v {
			t.Errorf("ours.%s = %v (present %v), want %v", k, x, ok, v)
		}
	}
	if d.Torch["tokens_per_s"] != 496 || d.Torch["peak_rss_bytes"] != 1<<30 || d.Ratio != 2 {
		t.Errorf("baseline side %+v, ratio %v; want 496 tokens/s and ratio 2", d.Torch, d.Ratio)
	}
	if got.Results[1].Torch != nil || got.Results[1].Ratio != 0 {
		t.Errorf("a result without a baseline run has torch %+v ratio %v", got.Results[1].Torch, got.Results[1].Ratio)
	}
}

func TestReportTable(t *testing.T) {
	var buf bytes.Buffer
	if err := sampleReport().WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"50m: 50.7M parameters", "fp32 200.0 GFLOP/s", "PyTorch 199.0", "decode 31 tokens", "992.0", "50%", "2.00×", "environments and tokenizer 1.0%"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}
