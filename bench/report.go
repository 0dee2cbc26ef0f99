package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Report is one benchmark run: what ran where, the matmul peaks, one
// Result per measurement and the soak. `ragen bench --json` prints it.
type Report struct {
	Model    ModelInfo       `json:"model"`
	Runtime  RuntimeInfo     `json:"runtime"`
	Peak     map[string]Peak `json:"peak,omitempty"` // by dtype: fp32, bf16
	Results  []Result        `json:"results"`
	Soak     *Soak           `json:"soak,omitempty"`
	Accuracy *Accuracy       `json:"accuracy,omitempty"` // a run in another dtype than fp32, against fp32
	Baseline *BaselineInfo   `json:"baseline,omitempty"`
	LlamaCpp *LlamaCppInfo   `json:"llama_cpp,omitempty"`
}

// ModelInfo is the measured model.
type ModelInfo struct {
	Source       string `json:"source"` // preset name or checkpoint folder
	Parameters   int64  `json:"parameters"`
	Hidden       int    `json:"hidden_size"`
	Layers       int    `json:"num_hidden_layers"`
	Heads        int    `json:"num_attention_heads"`
	KVHeads      int    `json:"num_key_value_heads"`
	Intermediate int    `json:"intermediate_size"`
	Vocab        int    `json:"vocab_size"`
	DType        string `json:"dtype"`
	Device       string `json:"device"`
}

// RuntimeInfo is the libtorch runtime of our side.
type RuntimeInfo struct {
	Libtorch     string `json:"libtorch"`
	TorchThreads int    `json:"torch_threads"`
	BLASThreads  int    `json:"blas_threads"`
	BLASCore     string `json:"blas_core,omitempty"` // OpenBLAS's kernel set
	Cores        int    `json:"cores"`
}

// BaselineInfo is the PyTorch side.
type BaselineInfo struct {
	Python  string `json:"python"`
	Torch   string `json:"torch"`
	Threads int    `json:"threads"`
}

// Peak is a dtype's measured matmul rate: the best square matmul of the
// sizes tried.
type Peak struct {
	FLOPPerS      float64 `json:"flop_per_s"`
	TorchThreads  int     `json:"torch_threads"` // libtorch's pool while it was measured
	TorchFLOPPerS float64 `json:"torch_flop_per_s,omitempty"`
}

// Measure is one side's timing of a measurement.
type Measure struct {
	Seconds    float64 `json:"seconds"`
	TokensPerS float64 `json:"tokens_per_s"`
	FLOPPerS   float64 `json:"flop_per_s"`
	MFU        float64 `json:"mfu"`            // FLOPPerS over the run dtype's peak
	PeakRSS    int64   `json:"peak_rss_bytes"` // resident high-water mark during the measurement
	PeakGPU    int64   `json:"peak_gpu_bytes,omitempty"`
}

// Result is one measurement: the same tokens and FLOPs credited to both
// sides.
type Result struct {
	Name   string   `json:"name"` // prefill, decode, rollout, update_actor, update_critic
	Batch  int      `json:"batch"`
	Tokens int      `json:"tokens"` // tokens the rate counts
	FLOPs  float64  `json:"flops"`
	Ours   Measure  `json:"ours"`
	Torch  *Measure `json:"torch,omitempty"`
	Ratio  float64  `json:"ratio_vs_torch,omitempty"` // our tokens/s over the baseline's
	// LlamaCpp is llama.cpp's timing of a prefill or decode row (the
	// anchor measures no other), RatioLlamaCpp ours over it.
	LlamaCpp      *Measure           `json:"llama_cpp,omitempty"`
	RatioLlamaCpp float64            `json:"ratio_vs_llama_cpp,omitempty"`
	Details       map[string]float64 `json:"details,omitempty"`
	Label         string             `json:"label"` // the table's row name
}

// Soak is the resident memory over a long decode loop.
type Soak struct {
	Seconds       float64 `json:"seconds"`
	Iterations    int     `json:"iterations"`
	Batch         int     `json:"batch"`
	TokensPerS    float64 `json:"tokens_per_s"`
	StartRSS      int64   `json:"start_rss_bytes"` // after the warm-up tenth
	EndRSS        int64   `json:"end_rss_bytes"`
	MaxRSS        int64   `json:"max_rss_bytes"`
	SlopeMBPerMin float64 `json:"slope_mb_per_min"` // least-squares fit after the warm-up tenth
	Flat          bool    `json:"flat"`             // slope ≤ FlatSlope and growth ≤ FlatGrowth
}

// The soak's flatness thresholds: a per-op leak of even a few hundred
// bytes grows by tens of MB a minute at thousands of ops a second.
const (
	FlatSlope  = 1.0      // MB per minute
	FlatGrowth = 32 << 20 // bytes from start to end
)

// measure fills in the rates of m for tokens and flops.
func measure(seconds float64, tokens int, flops, peak float64) Measure {
	m := Measure{Seconds: seconds}
	if seconds > 0 {
		m.TokensPerS = float64(tokens) / seconds
		m.FLOPPerS = flops / seconds
		m.MFU = MFU(m.FLOPPerS, peak)
	}
	return m
}

// setTorch records the baseline's time for r and the ratio.
func (r *Result) setTorch(seconds float64, mem memoryFigures, peak float64) {
	m := measure(seconds, r.Tokens, r.FLOPs, peak)
	m.PeakRSS, m.PeakGPU = mem.PeakRSS, mem.PeakGPU
	r.Torch = &m
	if m.TokensPerS > 0 {
		r.Ratio = r.Ours.TokensPerS / m.TokensPerS
	}
}

// WriteJSON prints the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteTable prints the report for people.
func (r *Report) WriteTable(w io.Writer) error {
	var b strings.Builder
	m := r.Model
	fmt.Fprintf(&b, "model    %s: %.1fM parameters (d %d, %d layers, %d/%d heads, MLP %d, vocabulary %d), %s, %s\n",
		m.Source, float64(m.Parameters)/1e6, m.Hidden, m.Layers, m.Heads, m.KVHeads, m.Intermediate, m.Vocab, m.Device, m.DType)
	fmt.Fprintf(&b, "runtime  libtorch %s, %d cores, torch threads %d, BLAS threads %d", r.Runtime.Libtorch, r.Runtime.Cores, r.Runtime.TorchThreads, r.Runtime.BLASThreads)
	if r.Runtime.BLASCore != "" {
		fmt.Fprintf(&b, " (OpenBLAS %s kernels)", r.Runtime.BLASCore)
	}
	b.WriteString("\n")
	if bl := r.Baseline; bl != nil {
		fmt.Fprintf(&b, "baseline PyTorch %s (python %s, %d threads), scripts/bench_torch.py, measured interleaved\n", bl.Torch, bl.Python, bl.Threads)
	}
	if l := r.LlamaCpp; l != nil {
		fmt.Fprintf(&b, "anchor   llama.cpp (llama-cpp-python %s, %d threads, %s keys and values) on %s, scripts/bench_llamacpp.py, measured after ours\n",
			l.Version, l.Threads, l.KV, l.Model)
	}
	if len(r.Peak) > 0 {
		b.WriteString("peak     matmul")
		for _, dt := range []string{"fp32", "bf16"} {
			if p, ok := r.Peak[dt]; ok {
				fmt.Fprintf(&b, "  %s %.1f GFLOP/s (torch threads %d", dt, p.FLOPPerS/1e9, p.TorchThreads)
				if p.TorchFLOPPerS > 0 {
					fmt.Fprintf(&b, "; PyTorch %.1f", p.TorchFLOPPerS/1e9)
				}
				b.WriteString(")")
			}
		}
		b.WriteString("\n")
	}
	if len(r.Results) > 0 {
		b.WriteString("\n")
		torch, llama := r.Baseline != nil, r.LlamaCpp != nil
		fmt.Fprintf(&b, "%-32s %6s %8s %10s %8s %5s %9s", "measurement", "batch", "tokens", "tokens/s", "GFLOP/s", "MFU", "peak RSS")
		if torch {
			fmt.Fprintf(&b, " │ %10s %8s %9s %7s", "PyTorch/s", "GFLOP/s", "peak RSS", "ratio")
		}
		if llama {
			fmt.Fprintf(&b, " │ %11s %7s", "llama.cpp/s", "ratio")
		}
		b.WriteString("\n")
		for _, res := range r.Results {
			o := res.Ours
			fmt.Fprintf(&b, "%-32s %6d %8d %10.1f %8.1f %4.0f%% %9s", res.Label, res.Batch, res.Tokens, o.TokensPerS, o.FLOPPerS/1e9, 100*o.MFU, gb(o.PeakRSS))
			switch {
			case torch && res.Torch != nil:
				t := res.Torch
				fmt.Fprintf(&b, " │ %10.1f %8.1f %9s %6.2f×", t.TokensPerS, t.FLOPPerS/1e9, gb(t.PeakRSS), res.Ratio)
			case torch:
				fmt.Fprintf(&b, " │ %10s %8s %9s %7s", "", "", "", "")
			}
			if llama && res.LlamaCpp != nil {
				fmt.Fprintf(&b, " │ %11.1f %6.2f×", res.LlamaCpp.TokensPerS, res.RatioLlamaCpp)
			}
			b.WriteString("\n")
		}
		for _, res := range r.Results {
			if res.Name == "rollout" {
				d := res.Details
				fmt.Fprintf(&b, "\nrollout: environments and tokenizer %.1f%% of the step (%.2f s of %.2f s); generation %.2f s\n",
					100*d["env_tokenizer_share"], d["env_tokenizer_seconds"], res.Ours.Seconds, d["generate_seconds"])
			}
			if tn, ok := res.Details["torch_grad_norm"]; ok {
				fmt.Fprintf(&b, "%s: mean gradient norm before clipping %.6g, PyTorch %.6g (the same loss on both sides)\n", res.Label, res.Details["grad_norm"], tn)
			}
		}
	}
	if a := r.Accuracy; a != nil {
		fmt.Fprintf(&b, "\naccuracy: %s against fp32 over %d teacher-forced tokens: |Δ log p| mean %.2g, max %.2g; |ratio − 1| mean %.2g; same top-1 token %.1f%%\n",
			a.DType, a.Tokens, a.MeanAbsLogp, a.MaxAbsLogp, a.MeanAbsRatio1, 100*a.Top1Agreement)
	}
	if s := r.Soak; s != nil {
		verdict := "flat"
		if !s.Flat {
			verdict = "NOT flat"
		}
		fmt.Fprintf(&b, "\nsoak: decode batch %d for %.0f s (%d calls, %.1f tokens/s): RSS %s → %s (max %s), slope %+.2f MB/min: %s\n",
			s.Batch, s.Seconds, s.Iterations, s.TokensPerS, gb(s.StartRSS), gb(s.EndRSS), gb(s.MaxRSS), s.SlopeMBPerMin, verdict)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func gb(n int64) string {
	if n <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f GB", float64(n)/(1<<30))
}
