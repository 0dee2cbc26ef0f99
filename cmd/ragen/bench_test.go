package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragen-go/ragen/bench"
	"github.com/ragen-go/ragen/tokenizer/tokenizertest"
)

func runBenchCmd(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := runMain(append([]string{"bench"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

// tinyBench are the flags of a seconds-long run of every part on the tiny
// preset.
func tinyBench(t *testing.T, extra ...string) []string {
	return append([]string{"--preset", "tiny", "--tokenizer", tokenizertest.Path(t),
		"--peak-sizes", "64", "--peak-seconds", "0.05", "--repeat", "1",
		"--prefill-batches", "2", "--prefill-len", "16", "--decode-batches", "1,2", "--decode-prompt", "8", "--decode-tokens", "4",
		"--rollout-groups", "1", "--rollout-group-size", "2", "--rollout-turns", "2", "--rollout-tokens", "8",
		"--update-seqs", "2", "--micro-batch", "1"}, extra...)
}

// Every part runs end to end on the tiny preset and --json prints one
// report with each measurement.
func TestBenchTinyJSON(t *testing.T) {
	code, out, errOut := runBenchCmd(tinyBench(t, "--json", "--soak", "1s", "--soak-batch", "2")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep bench.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("output is not one JSON report: %v\n%s", err, out)
	}
	var names []string
	for _, r := range rep.Results {
		names = append(names, r.Name)
		if r.Tokens <= 0 || r.FLOPs <= 0 || r.Ours.TokensPerS <= 0 || r.Ours.MFU <= 0 || r.Ours.PeakRSS <= 0 {
			t.Errorf("%s: incomplete figures %+v", r.Name, r)
		}
	}
	if got, want := strings.Join(names, " "), "prefill decode decode rollout update_actor update_critic"; got != want {
		t.Errorf("measurements %q, want %q", got, want)
	}
	if rep.Peak["fp32"].FLOPPerS <= 0 || rep.Peak["bf16"].FLOPPerS <= 0 {
		t.Errorf("peaks %+v", rep.Peak)
	}
	if rep.Soak == nil || rep.Soak.Iterations < 1 {
		t.Errorf("soak %+v", rep.Soak)
	}
	if !strings.Contains(errOut, "bench: rollout") {
		t.Errorf("no progress on stderr: %s", errOut)
	}
}

// With the baseline, every measurement has its PyTorch figure and ratio.
func TestBenchTinyVsTorch(t *testing.T) {
	if err := bench.CheckTorch(bench.DefaultPython()); err != nil {
		t.Skipf("the PyTorch baseline cannot run here: %v", err)
	}
	code, out, errOut := runBenchCmd(tinyBench(t, "--vs-torch", "--torch-script", "../../scripts/bench_torch.py")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"baseline PyTorch", "│", "×", "update critic (PPO)"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

// Bad input is one sentence naming it, and a non-zero exit.
func TestBenchErrors(t *testing.T) {
	tok := tokenizertest.Path(t)
	baselineScript := filepath.Join("..", "..", "scripts", "bench_torch.py")
	cases := []struct {
		args []string
		want string
	}{
		{nil, "give exactly one of --model DIR and --preset NAME"},
		{[]string{"--preset", "tiny", "--model", "x"}, "give exactly one of"},
		{[]string{"--preset", "gpt2"}, `--preset: preset "gpt2" is not one of 50m, qwen2.5-0.5b, tiny`},
		{[]string{"--model", "/nonexistent"}, "--model /nonexistent: no such folder or file"},
		{[]string{"--preset", "tiny", "--tokenizer", "/nonexistent/tokenizer.json"}, "--tokenizer /nonexistent/tokenizer.json: not found"},
		{[]string{"--preset", "tiny", "--tokenizer", tok, "--parts", "peak,warp"}, `--parts: "warp" is not one of`},
		{[]string{"--preset", "tiny", "--tokenizer", tok, "--parts", "update"}, "needs rollout too"},
		{[]string{"--preset", "tiny", "--tokenizer", tok, "--update-seqs", "3"}, "--update-seqs 3 must be a multiple of --rollout-group-size 8"},
		{[]string{"--preset", "tiny", "--tokenizer", tok, "--decode-batches", "0"}, "--decode-batches: 0 must be at least 1"},
		{[]string{"--preset", "tiny", "--tokenizer", tok, "--soak", "-1s"}, "--soak -1s must not be negative"},
		{[]string{"--preset", "tiny", "--tokenizer", tok, "--parts", "soak"}, "--parts soak needs --soak DURATION"},
		{[]string{"--preset", "tiny", "--tokenizer", tok, "--dtype", "int8"}, `--dtype: dtype "int8" is not one of`},
		{[]string{"--preset", "tiny", "--tokenizer", tok, "--vs-torch", "--python", "/nonexistent/python3", "--torch-script", baselineScript}, "--vs-torch: python interpreter /nonexistent/python3 not found"},
		{[]string{"--preset", "tiny", "--tokenizer", tok, "--vs-torch", "--torch-script", "/nonexistent.py"}, "--torch-script /nonexistent.py: not found"},
		{[]string{"--preset", "tiny", "--tokenizer", tok, "--vs-llamacpp", "--llamacpp-script", "../../scripts/bench_llamacpp.py", "--llamacpp-python", "/nonexistent/python3"}, "--vs-llamacpp: python interpreter /nonexistent/python3 not found"},
		{[]string{"--preset", "tiny", "--tokenizer", tok, "--vs-llamacpp", "--llamacpp-script", "/nonexistent.py"}, "--llamacpp-script /nonexistent.py: not found"},
		{[]string{"--preset", "tiny", "stray"}, `unexpected argument "stray"`},
	}
	for _, c := range cases {
		code, _, errOut := runBenchCmd(c.args...)
		if code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want non-zero and %q", c.args, code, errOut, c.want)
		}
		if strings.Contains(errOut, "panic") || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
			t.Errorf("%v: want one line, got %q", c.args, errOut)
		}
	}
}
