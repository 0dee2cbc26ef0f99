package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/sugarme/gotch"

	"github.com/ragen-go/ragen/bench"
	"github.com/ragen-go/ragen/gguf"
	"github.com/ragen-go/ragen/internal/torchrt"
	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/tokenizer"
)

func init() {
	register(command{name: "bench", summary: "measure matmul peak, prefill, decode, rollout and PPO throughput and MFU (--vs-torch: beside PyTorch)", run: runBench})
}

func runBench(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench", stderr)
	d := bench.DefaultOptions()
	dir := fs.String("model", "", "HuggingFace checkpoint folder to measure (with its tokenizer for the rollout)")
	preset := fs.String("preset", "", "build a model with random weights instead: "+strings.Join(bench.PresetNames(), ", "))
	tokPath := fs.String("tokenizer", tokenizer.DefaultQwenPath, "the Qwen tokenizer.json a --preset model's vocabulary comes from")
	work := fs.String("work", "", "folder a --preset checkpoint is written to and kept (default: a temporary folder, removed)")
	asJSON := fs.Bool("json", false, "print the report as JSON instead of a table")
	vsTorch := fs.Bool("vs-torch", false, "run every measurement also in the PyTorch baseline (scripts/bench_torch.py), interleaved, and print ratios")
	python := fs.String("python", bench.DefaultPython(), "python interpreter with PyTorch, for --vs-torch")
	script := fs.String("torch-script", defaultTorchScript(), "the baseline script, for --vs-torch")
	vsLlama := fs.Bool("vs-llamacpp", false, "also measure prefill and decode in llama.cpp (llama-cpp-python) on an F32 GGUF export of the model, with as many threads")
	llamaPython := fs.String("llamacpp-python", "", "python interpreter with llama_cpp, for --vs-llamacpp (default: --python's)")
	llamaScript := fs.String("llamacpp-script", scriptPath("bench_llamacpp.py"), "the llama.cpp anchor script, for --vs-llamacpp")
	place := addPlacementFlags(fs)
	parts := fs.StringSlice("parts", d.Parts, "parts to run: "+strings.Join(bench.AllParts, ", ")+" (update needs rollout; --soak adds soak)")
	fs.IntSliceVar(&d.PeakSizes, "peak-sizes", d.PeakSizes, "square matmul sizes of the peak measurement")
	fs.Float64Var(&d.PeakSeconds, "peak-seconds", d.PeakSeconds, "seconds per matmul size and dtype")
	fs.IntSliceVar(&d.PrefillBatches, "prefill-batches", d.PrefillBatches, "prefill batch sizes")
	fs.IntVar(&d.PrefillLen, "prefill-len", d.PrefillLen, "tokens per prefilled prompt")
	fs.IntSliceVar(&d.DecodeBatches, "decode-batches", d.DecodeBatches, "decode batch sizes")
	fs.IntVar(&d.DecodePrompt, "decode-prompt", d.DecodePrompt, "prompt tokens before decoding")
	fs.IntVar(&d.DecodeTokens, "decode-tokens", d.DecodeTokens, "new tokens per sequence (the first comes from the prefill)")
	fs.Float64Var(&d.Temperature, "temperature", d.Temperature, "sampling temperature")
	fs.IntVar(&d.Repeat, "repeat", d.Repeat, "runs of each prefill, decode and update measurement per side, alternating; the fastest counts")
	fs.IntVar(&d.RolloutGroups, "rollout-groups", d.RolloutGroups, "Sokoban groups of the rollout")
	fs.IntVar(&d.RolloutGroupSize, "rollout-group-size", d.RolloutGroupSize, "environments per group")
	fs.IntVar(&d.RolloutTurns, "rollout-turns", d.RolloutTurns, "turns per episode")
	fs.IntVar(&d.RolloutTokens, "rollout-tokens", d.RolloutTokens, "most tokens per answer")
	fs.IntVar(&d.UpdateSeqs, "update-seqs", d.UpdateSeqs, "trajectories the PPO update trains on (whole groups of the rollout)")
	fs.IntVar(&d.MicroBatch, "micro-batch", d.MicroBatch, "trajectories per forward/backward in the update")
	soak := fs.Duration("soak", 0, "also decode in a loop this long (e.g. 10m) and check resident memory stays flat")
	fs.IntVar(&d.SoakBatch, "soak-batch", d.SoakBatch, "batch of the soak loop")
	fs.Int64Var(&d.Seed, "seed", d.Seed, "seed of weights, prompts and sampling")
	fs.BoolVar(&d.StaticCache, "static-cache", false, "decode with fixed shapes over a static KV cache (slower on the CPU)")
	fs.BoolVar(&d.CUDAGraphs, "cuda-graphs", false, "replay each decode step as a CUDA graph over the static cache (CUDA only)")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	if (*dir == "") == (*preset == "") {
		return errors.New("give exactly one of --model DIR and --preset NAME")
	}
	var p bench.Preset
	if *preset != "" {
		var err error
		if p, err = bench.LookupPreset(*preset); err != nil {
			return fmt.Errorf("--preset: %w", err)
		}
		if _, err := os.Stat(*tokPath); err != nil {
			return fmt.Errorf("--tokenizer %s: not found (run `make deps`, which fetches the Qwen tokenizer, or point --tokenizer at a Qwen tokenizer.json)", *tokPath)
		}
	} else {
		path, err := resolveModel(*dir)
		if err != nil {
			return err
		}
		*dir = path
	}
	d.Parts = *parts
	if *soak < 0 {
		return fmt.Errorf("--soak %s must not be negative", *soak)
	}
	if *soak > 0 {
		d.Soak = *soak
		if !d.Has(bench.PartSoak) {
			d.Parts = append(d.Parts, bench.PartSoak)
		}
	} else if d.Has(bench.PartSoak) {
		return errors.New("--parts soak needs --soak DURATION (e.g. --soak 10m)")
	}
	d.Progress = stderr
	if err := d.Validate(); err != nil {
		return err
	}
	opts, err := place.options()
	if err != nil {
		return err
	}
	if *vsLlama {
		if *llamaPython == "" {
			*llamaPython = *python
		}
		if err := bench.CheckLlamaCpp(*llamaPython, *llamaScript); err != nil {
			return err
		}
	}
	var baseline *bench.Torch
	if *vsTorch {
		if baseline, err = bench.StartTorch(*python, *script, stderr); err != nil {
			return err
		}
		defer baseline.Close()
	}
	name := *dir
	if p.Name != "" {
		name = p.Name
		if *dir, err = buildPreset(p, *work, *tokPath, d, stderr); err != nil {
			return err
		}
		if *work == "" {
			defer os.RemoveAll(filepath.Dir(*dir))
		}
	}
	var scratch string // exports the baseline and the anchor read
	if *vsTorch || *vsLlama {
		if scratch, err = os.MkdirTemp("", "ragen-bench-export-"); err != nil {
			return err
		}
		defer os.RemoveAll(scratch)
	}
	if *vsTorch && strings.HasSuffix(strings.ToLower(*dir), ".gguf") {
		// The baseline reads HuggingFace folders: both sides then load the
		// same fp32 weights, the GGUF file's, dequantised.
		hf := filepath.Join(scratch, "hf")
		fmt.Fprintf(stderr, "bench: writing %s as a HuggingFace folder for the baseline\n", *dir)
		if err := exportHF(*dir, hf, model.Options{Device: gotch.CPU, DType: gotch.Float}); err != nil {
			return err
		}
		*dir = hf
	}
	rep, err := bench.Run(*dir, name, opts, d, baseline)
	if err != nil {
		return err
	}
	if *vsLlama {
		ggufPath := filepath.Join(scratch, "model-f32.gguf")
		fmt.Fprintf(stderr, "bench: writing the model as an F32 GGUF file for llama.cpp\n")
		if err := exportGGUF(*dir, ggufPath, gguf.F32, io.Discard); err != nil {
			return err
		}
		l := bench.LlamaCpp{Python: *llamaPython, Script: *llamaScript, GGUF: ggufPath}
		if err := bench.AddLlamaCpp(rep, l, d, torchrt.CurrentThreads().Cores(), stderr); err != nil {
			return err
		}
		rep.LlamaCpp.Model = "an F32 GGUF export of " + name
	}
	if *asJSON {
		return rep.WriteJSON(stdout)
	}
	return rep.WriteTable(stdout)
}

// buildPreset writes the preset's checkpoint into work (or a temporary
// folder) and returns its folder.
func buildPreset(p bench.Preset, work, tokPath string, o bench.Options, stderr io.Writer) (string, error) {
	root := work
	if root == "" {
		var err error
		if root, err = os.MkdirTemp("", "ragen-bench-"); err != nil {
			return "", err
		}
	}
	dir := filepath.Join(root, p.Name)
	fmt.Fprintf(stderr, "bench: writing the %s checkpoint (random weights, seed %d) to %s\n", p.Name, o.Seed, dir)
	if err := p.Build(dir, tokPath, uint64(o.Seed)); err != nil {
		return "", fmt.Errorf("building preset %s: %w", p.Name, err)
	}
	// The weights were drawn in Go memory (2 GB for 0.5B): hand it back,
	// or every resident-memory figure would carry it.
	debug.FreeOSMemory()
	return dir, nil
}

// defaultTorchScript is scripts/bench_torch.py of the working directory,
// or else of the checkout the binary was built into (bin/ragen).
func defaultTorchScript() string { return scriptPath("bench_torch.py") }

// scriptPath is scripts/NAME of the working directory, or else of the
// checkout the binary was built into (bin/ragen).
func scriptPath(name string) string {
	rel := filepath.Join("scripts", name)
	if _, err := os.Stat(rel); err == nil {
		return rel
	}
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), "..", rel)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return rel
}
