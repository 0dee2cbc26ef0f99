package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
)

// LlamaCpp is the inference-engine anchor: scripts/bench_llamacpp.py runs
// the model, exported as a GGUF file, through llama-cpp-python's batch API
// on the same threads and repeats as ours.
type LlamaCpp struct {
	Python string // an interpreter that imports llama_cpp
	Script string // scripts/bench_llamacpp.py
	GGUF   string // the model being measured, as an F32 or F16 GGUF file
}

// LlamaCppInfo is the anchor's side of the report.
type LlamaCppInfo struct {
	Version string `json:"version"`
	KV      string `json:"kv"` // the keys' and values' type
	Threads int    `json:"threads"`
	Model   string `json:"gguf"`
}

// CheckLlamaCpp reports, as one sentence, why python cannot run the anchor.
func CheckLlamaCpp(python, script string) error {
	if _, err := os.Stat(script); err != nil {
		return fmt.Errorf("--llamacpp-script %s: not found (run from the repository root, or point --llamacpp-script at scripts/bench_llamacpp.py)", script)
	}
	switch found, why := tryImport(python, "llama_cpp"); {
	case !found:
		return fmt.Errorf("--vs-llamacpp: python interpreter %s not found (point --llamacpp-python at one with llama-cpp-python)", python)
	case why != "":
		return fmt.Errorf("--vs-llamacpp: %s cannot import llama_cpp (%s); install it with: pip install llama-cpp-python, "+
			"or point --llamacpp-python at the parity environment, .cache/parity/bin/python", python, why)
	}
	return nil
}

// AddLlamaCpp measures the report's prefill and decode rows in llama.cpp
// and records its figures and ratios beside them; the other rows have no
// llama.cpp counterpart. threads is ours: the anchor gets as many.
func AddLlamaCpp(rep *Report, l LlamaCpp, o Options, threads int, stderr io.Writer) error {
	type prefill struct {
		Batch  int `json:"batch"`
		Tokens int `json:"tokens"`
	}
	type decode struct {
		Batch  int `json:"batch"`
		Prompt int `json:"prompt"`
		New    int `json:"new"`
	}
	type timing struct {
		Seconds    float64 `json:"seconds"`
		TokensPerS float64 `json:"tokens_per_s"`
	}
	var pre []prefill
	var dec []decode
	var preRows, decRows []*Result
	for i := range rep.Results {
		switch res := &rep.Results[i]; res.Name {
		case "prefill":
			pre, preRows = append(pre, prefill{res.Batch, res.Tokens / res.Batch}), append(preRows, res)
		case "decode":
			dec, decRows = append(dec, decode{res.Batch, o.DecodePrompt, res.Tokens / res.Batch}), append(decRows, res)
		}
	}
	if len(pre)+len(dec) == 0 {
		return fmt.Errorf("--vs-llamacpp compares prefill and decode; add them to --parts")
	}
	req, err := json.Marshal(map[string]any{"model": l.GGUF, "threads": threads, "repeat": o.Repeat, "seed": o.Seed, "kv": "f32",
		"prefill": pre, "decode": dec})
	if err != nil {
		return err
	}
	cmd := exec.Command(l.Python, l.Script)
	cmd.Stdin, cmd.Stderr = bytes.NewReader(req), stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("llama.cpp anchor (%s %s): %w", l.Python, l.Script, err)
	}
	var ans struct {
		Version string   `json:"llama_cpp"`
		KV      string   `json:"kv"`
		Threads int      `json:"threads"`
		Prefill []timing `json:"prefill"`
		Decode  []timing `json:"decode"`
	}
	if err := json.Unmarshal(out, &ans); err != nil {
		return fmt.Errorf("llama.cpp anchor: unreadable answer: %w", err)
	}
	if len(ans.Prefill) != len(pre) || len(ans.Decode) != len(dec) {
		return fmt.Errorf("llama.cpp anchor answered %d prefill and %d decode figures for %d and %d asked", len(ans.Prefill), len(ans.Decode), len(pre), len(dec))
	}
	times, rows := append(ans.Prefill, ans.Decode...), append(preRows, decRows...)
	for i, res := range rows {
		t := times[i]
		res.LlamaCpp = &Measure{Seconds: t.Seconds, TokensPerS: t.TokensPerS}
		if t.TokensPerS > 0 {
			res.RatioLlamaCpp = res.Ours.TokensPerS / t.TokensPerS
		}
	}
	rep.LlamaCpp = &LlamaCppInfo{Version: ans.Version, KV: ans.KV, Threads: ans.Threads, Model: l.GGUF}
	return nil
}
