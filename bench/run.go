package bench

import (
	"fmt"
	"runtime"

	"github.com/ragen-go/ragen/internal/torchrt"
	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/tokenizer"
)

// runner holds what the parts of one run share.
type runner struct {
	o      Options
	dir    string
	place  model.Options
	m      *model.CausalLM
	tok    *tokenizer.Tokenizer
	torch  *Torch // nil: no baseline
	rep    *Report
	dtName string
}

// Run measures the checkpoint in dir (name is how the report calls it) on
// place, part by part; with a baseline, each measurement runs on our side
// and then on the baseline's, interleaved. It must run on the goroutine
// that owns libtorch.
func Run(dir, name string, place model.Options, o Options, baseline *Torch) (*Report, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	m, err := model.LoadCausalLM(dir, place)
	if err != nil {
		return nil, err
	}
	defer m.Drop()
	r := &runner{o: o, dir: dir, place: place, m: m, torch: baseline, dtName: model.DTypeFlag(place.DType)}
	c := m.Cfg
	if _, err := useThreadsFor(place.DType, place.Device); err != nil {
		return nil, err
	}
	th := torchrt.CurrentThreads()
	r.rep = &Report{
		Model: ModelInfo{Source: name, Parameters: model.CountParams(m.Params()), Hidden: c.HiddenSize, Layers: c.NumHiddenLayers,
			Heads: c.NumAttentionHeads, KVHeads: c.NumKeyValueHeads, Intermediate: c.IntermediateSize, Vocab: c.VocabSize,
			DType: r.dtName, Device: torchrt.DeviceName(place.Device)},
		Runtime: RuntimeInfo{Libtorch: torchrt.Describe().LibtorchVersion, TorchThreads: th.Torch, BLASThreads: th.BLAS, BLASCore: torchrt.BLASCore(), Cores: runtime.NumCPU()},
		Peak:    map[string]Peak{},
	}
	if o.Has(PartRollout) {
		if r.tok, err = tokenizer.Load(dir); err != nil {
			return nil, fmt.Errorf("the rollout needs the model folder's tokenizer: %w", err)
		}
	}
	if baseline != nil {
		o.logf("loading the model in the PyTorch baseline")
		// The baseline gets as many threads as we use: libtorch's pool and
		// OpenBLAS's are separate here, one PyTorch pool does both there.
		if err := baseline.Load(dir, r.dtName, torchrt.DeviceName(place.Device), th.Cores()); err != nil {
			return nil, err
		}
		info := baseline.Info
		r.rep.Baseline = &info
	}
	if r.dtName != "fp32" {
		// Before the update, which changes the weights.
		o.logf("accuracy of %s against fp32", r.dtName)
		if r.rep.Accuracy, err = r.accuracy(); err != nil {
			return nil, err
		}
	}
	if err := r.warmUp(); err != nil {
		return nil, err
	}
	steps := []struct {
		part string
		run  func() error
	}{
		{PartPeak, r.peak}, {PartPrefill, r.prefill}, {PartDecode, r.decode},
		{PartRollout, r.rolloutAndUpdate}, {PartSoak, r.soak},
	}
	for _, s := range steps {
		if o.Has(s.part) {
			if err := s.run(); err != nil {
				return nil, fmt.Errorf("%s: %w", s.part, err)
			}
		}
	}
	return r.rep, nil
}

// peakFor is the measured peak of the run's dtype (0 before the peak part
// or without it).
func (r *runner) peakFor() float64 { return r.rep.Peak[r.dtName].FLOPPerS }

func (r *runner) gpu() bool { return r.place.Device.IsCuda() }

// add appends a result; with a baseline, fn runs the same measurement there.
func (r *runner) add(res Result, fn func() (torchTiming, error)) error {
	if r.torch != nil && fn != nil {
		t, err := fn()
		if err != nil {
			return err
		}
		res.setTorch(t.Seconds, t.memoryFigures, r.peakFor())
	}
	r.rep.Results = append(r.rep.Results, res)
	return nil
}

// warmUp runs a short generation on both sides so that first-call costs
// (allocator growth, lazy initialisation) stay out of the first figure.
func (r *runner) warmUp() error {
	ps := Prompts(2, 8, r.m.Cfg.VocabSize, r.o.Seed)
	if _, err := r.m.Generate(ps, model.GenerateOptions{Sampling: model.Sampling{Temperature: 1}, MaxNewTokens: 4}); err != nil {
		return err
	}
	if r.torch != nil {
		_, err := r.torch.Run(map[string]any{"cmd": "decode", "prompts": ps, "new_tokens": 4})
		return err
	}
	return nil
}

// Prompts are B deterministic prompts of T ids below vocab, the same on
// both sides (the baseline gets them as given).
func Prompts(B, T, vocab int, seed int64) [][]int {
	ps := make([][]int, B)
	for i := range ps {
		ps[i] = make([]int, T)
		for j := range ps[i] {
			ps[i][j] = 1 + int((int64(i)*131+int64(j)*17+seed*7919)%int64(vocab-1))
		}
	}
	return ps
}
