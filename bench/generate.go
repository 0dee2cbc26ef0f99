package bench

import (
	"fmt"
	"math"
	"time"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"

	"github.com/ragen-go/ragen/internal/torchrt"
	"github.com/ragen-go/ragen/model"
)

// peak measures the best square matmul rate of the sizes, fp32 and bf16.
func (r *runner) peak() error {
	for _, dt := range []struct {
		name string
		dt   gotch.DType
	}{{"fp32", gotch.Float}, {"bf16", gotch.BFloat16}} {
		r.o.logf("matmul peak, %s", dt.name)
		threads, err := useThreadsFor(dt.dt, r.place.Device)
		if err != nil {
			return err
		}
		p, err := matmulPeak(dt.dt, r.place.Device, r.o.PeakSizes, r.o.PeakSeconds)
		if err != nil {
			return err
		}
		pk := Peak{FLOPPerS: p, TorchThreads: threads}
		if r.torch != nil {
			// As many threads as ours in all: libtorch's pool or OpenBLAS's.
			t, err := r.torch.Run(map[string]any{"cmd": "peak", "dtype": dt.name, "sizes": r.o.PeakSizes, "seconds": r.o.PeakSeconds,
				"threads": torchrt.CurrentThreads().Cores()})
			if err != nil {
				return err
			}
			pk.TorchFLOPPerS = t.FLOPPerS
		}
		r.rep.Peak[dt.name] = pk
	}
	_, err := useThreadsFor(r.place.DType, r.place.Device)
	return err
}

// MatmulPeak is the best rate, in FLOP/s, of n×n by n×n matmuls in dtype
// on dev over the sizes, each run for about seconds.
func matmulPeak(dt gotch.DType, dev gotch.Device, sizes []int, seconds float64) (best float64, err error) {
	defer torchrt.Catch(&err, "matmul peak")
	for _, n := range sizes {
		var s torchrt.Scope
		shape := []int64{int64(n), int64(n)}
		a := s.Op(s.Op(ts.Randn(shape, gotch.Float, dev)).Totype(dt, false))
		b := s.Op(s.Op(ts.Randn(shape, gotch.Float, dev)).Totype(dt, false))
		torchrt.Must(a.Matmul(b, false)).MustDrop()
		syncDevice(a)
		k, t0 := 0, time.Now()
		for time.Since(t0).Seconds() < seconds {
			torchrt.Must(a.Matmul(b, false)).MustDrop()
			if k++; k%8 == 0 {
				syncDevice(a)
			}
		}
		syncDevice(a)
		best = max(best, 2*float64(n)*float64(n)*float64(n)*float64(k)/time.Since(t0).Seconds())
		s.Drop()
	}
	return best, nil
}

// syncDevice waits for the device's queued work (a one-element host copy); a
// no-op on the CPU.
func syncDevice(t *ts.Tensor) {
	if !torchrt.DeviceOf(t).IsCuda() {
		return
	}
	one := torchrt.Must(torchrt.Must(t.Flatten(0, -1, false)).Narrow(0, 0, 1, true))
	model.Float32s(one)
	one.MustDrop()
}

// genOptions are the sampling options of the generation measurements: no
// stop ids, so every sequence runs to n tokens.
func (r *runner) genOptions(n int) model.GenerateOptions {
	return model.GenerateOptions{Sampling: model.Sampling{Temperature: r.o.Temperature, TopP: 1}, MaxNewTokens: n, Seed: r.o.Seed,
		StaticCache: r.o.StaticCache, CUDAGraphs: r.o.CUDAGraphs}
}

// prefill times prompts of PrefillLen tokens, prefilled and one token
// sampled, per batch size.
func (r *runner) prefill() error {
	c := r.m.Cfg
	for _, B := range r.o.PrefillBatches {
		r.o.logf("prefill, batch %d × %d tokens", B, r.o.PrefillLen)
		ps := Prompts(B, r.o.PrefillLen, c.VocabSize, r.o.Seed)
		lengths := make([]int, B)
		for i := range lengths {
			lengths[i] = r.o.PrefillLen
		}
		res := Result{Name: "prefill", Label: fmt.Sprintf("prefill %d-token prompts", r.o.PrefillLen), Batch: B, Tokens: B * r.o.PrefillLen, FLOPs: PrefillFLOPs(c, lengths)}
		err := r.interleave(&res, func() (float64, memoryFigures, error) {
			w := watchMemory(r.gpu())
			t0 := time.Now()
			_, err := r.m.Generate(ps, r.genOptions(1))
			sec := time.Since(t0).Seconds()
			return sec, w.end(), err
		}, func() (torchTiming, error) {
			return r.torch.Run(map[string]any{"cmd": "prefill", "prompts": ps, "temperature": r.o.Temperature, "seed": r.o.Seed})
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// decode times DecodeTokens−1 cached decoding steps after a DecodePrompt-
// token prefill (the first new token comes from the prefill and is not
// counted), per batch size.
func (r *runner) decode() error {
	c := r.m.Cfg
	P, N := r.o.DecodePrompt, r.o.DecodeTokens
	for _, B := range r.o.DecodeBatches {
		r.o.logf("decode, batch %d, %d tokens after a %d-token prompt", B, N, P)
		ps := Prompts(B, P, c.VocabSize, r.o.Seed)
		res := Result{Name: "decode", Label: fmt.Sprintf("decode %d tokens", N-1), Batch: B, Tokens: B * (N - 1), FLOPs: DecodeFLOPs(c, B, P, N-1)}
		err := r.interleave(&res, func() (float64, memoryFigures, error) { return r.timeDecode(ps, N) }, func() (torchTiming, error) {
			return r.torch.Run(map[string]any{"cmd": "decode", "prompts": ps, "new_tokens": N, "temperature": r.o.Temperature, "seed": r.o.Seed})
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// interleave runs a measurement o.Repeat times on our side and, with a
// baseline, on its side after each of ours, and records the fastest run of
// each side (the other runs on a shared machine only add noise) and the
// highest memory.
func (r *runner) interleave(res *Result, ours func() (float64, memoryFigures, error), theirs func() (torchTiming, error)) error {
	best, tbest := math.Inf(1), math.Inf(1)
	var mem, tmem memoryFigures
	for range r.o.Repeat {
		sec, m, err := ours()
		if err != nil {
			return err
		}
		best, mem = min(best, sec), maxMemory(mem, m)
		if r.torch != nil {
			t, err := theirs()
			if err != nil {
				return err
			}
			tbest, tmem = min(tbest, t.Seconds), maxMemory(tmem, t.memoryFigures)
		}
	}
	res.Ours = measure(best, res.Tokens, res.FLOPs, r.peakFor())
	res.Ours.PeakRSS, res.Ours.PeakGPU = mem.PeakRSS, mem.PeakGPU
	if r.torch != nil {
		res.setTorch(tbest, tmem, r.peakFor())
	}
	r.rep.Results = append(r.rep.Results, *res)
	return nil
}

func maxMemory(a, b memoryFigures) memoryFigures {
	return memoryFigures{PeakRSS: max(a.PeakRSS, b.PeakRSS), PeakGPU: max(a.PeakGPU, b.PeakGPU)}
}

// timeDecode generates n tokens per prompt and returns the time from the
// first sampled token to the end.
func (r *runner) timeDecode(ps [][]int, n int) (float64, memoryFigures, error) {
	var first time.Time
	opt := r.genOptions(n)
	opt.OnToken = func(int, int) {
		if first.IsZero() {
			first = time.Now()
		}
	}
	w := watchMemory(r.gpu())
	_, err := r.m.Generate(ps, opt)
	end := time.Now()
	mem := w.end()
	return end.Sub(first).Seconds(), mem, err
}

// soak decodes batches for o.Soak and follows the resident memory after
// each call, with the heap's free pages handed back: a leak per op or per
// call shows as a slope.
func (r *runner) soak() error {
	o := r.o
	ps := Prompts(o.SoakBatch, o.DecodePrompt, r.m.Cfg.VocabSize, o.Seed)
	var ts, rss []float64
	t0 := time.Now()
	lastLog := t0
	tokens := 0
	s := &Soak{Batch: o.SoakBatch}
	r.o.logf("soak: decoding batches of %d for %s", o.SoakBatch, o.Soak)
	for time.Since(t0) < o.Soak {
		opt := r.genOptions(o.DecodeTokens)
		opt.Seed += int64(s.Iterations)
		if _, err := r.m.Generate(ps, opt); err != nil {
			return err
		}
		s.Iterations++
		tokens += o.SoakBatch * o.DecodeTokens
		now := time.Since(t0)
		// Free pages the allocator keeps for reuse are not a leak: follow
		// the resident set with them handed back.
		torchrt.ReleaseFreeMemoryNow()
		mem := torchrt.ReadMemory().Resident
		ts, rss = append(ts, now.Minutes()), append(rss, float64(mem))
		s.MaxRSS = max(s.MaxRSS, mem)
		if time.Since(lastLog) > 30*time.Second {
			lastLog = time.Now()
			r.o.logf("soak: %s of %s, %d calls, RSS %s", now.Round(time.Second), o.Soak, s.Iterations, gb(mem))
		}
	}
	s.Seconds = time.Since(t0).Seconds()
	s.TokensPerS = float64(tokens) / s.Seconds
	fillSoak(s, ts, rss)
	r.rep.Soak = s
	return nil
}

// fillSoak sets the start and end memory and the slope from samples at
// minutes ts, skipping the first tenth of the run (allocator warm-up).
func fillSoak(s *Soak, ts, rss []float64) {
	if len(ts) == 0 {
		return
	}
	from := 0
	for from < len(ts)-2 && ts[from] < ts[len(ts)-1]/10 {
		from++
	}
	ts, rss = ts[from:], rss[from:]
	s.StartRSS, s.EndRSS = int64(rss[0]), int64(rss[len(rss)-1])
	s.SlopeMBPerMin = Slope(ts, rss) / (1 << 20)
	growth := s.EndRSS - s.StartRSS
	// A leak grows: memory handed back to the system is no failure.
	s.Flat = s.SlopeMBPerMin <= FlatSlope && growth <= FlatGrowth
}

// Slope is the least-squares slope of y over x (0 with fewer than two
// distinct x).
func Slope(x, y []float64) float64 {
	n := float64(len(x))
	if len(x) < 2 {
		return 0
	}
	var sx, sy, sxx, sxy float64
	for i := range x {
		sx, sy, sxx, sxy = sx+x[i], sy+y[i], sxx+x[i]*x[i], sxy+x[i]*y[i]
	}
	d := n*sxx - sx*sx
	if d == 0 {
		return 0
	}
	return (n*sxy - sx*sy) / d
}
