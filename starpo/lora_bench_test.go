package starpo

import (
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"

	"github.com/ragen-go/ragen/internal/torchrt"
	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/starpo/optim"
)

// BenchmarkLoRAMemory trains Qwen2.5-0.5B's shapes (random weights, no
// download: hidden 896, 14/2 heads, MLP 4864, vocabulary 151,936, tied
// embeddings, q/k/v biases, 24 layers) in fp32 on the CPU for two actor
// updates, each a training forward and backward over 2 × 128 tokens (the
// loss on the last 64 of each, as on a response) and an AdamW step, with
// full fine-tuning or RAGEN's LoRA (rank 64, alpha 64, every projection).
// It reports the peak resident memory from before the model is made, the
// resident memory of the model alone, the weights trained and seconds per
// update. The peak is the process's (VmHWM, reset when a mode starts), so
// run each mode in a process of its own:
//
//	go test -run '^$' -bench 'LoRAMemory/mode=lora$' -benchtime 1x ./starpo/
//	go test -run '^$' -bench 'LoRAMemory/mode=full$' -benchtime 1x ./starpo/
//
// RAGEN_BENCH_LAYERS=N keeps the widths and uses N layers;
// RAGEN_BENCH_VOCAB=V a vocabulary of V tokens (a reduced one, as
// tokenizer.Reduce makes: the 0.5B full fine-tune needs some 10 GB).
func BenchmarkLoRAMemory(b *testing.B) {
	cfg := model.Config{
		ModelType: "qwen2", HiddenSize: 896, IntermediateSize: 4864, NumHiddenLayers: 24,
		NumAttentionHeads: 14, NumKeyValueHeads: 2, RopeTheta: 1e6, RMSNormEps: 1e-6,
		VocabSize: 151936, MaxPositionEmbeddings: 32768, TieWordEmbeddings: true, HiddenAct: "silu",
	}
	for _, e := range []struct {
		name string
		v    *int
	}{{"RAGEN_BENCH_LAYERS", &cfg.NumHiddenLayers}, {"RAGEN_BENCH_VOCAB", &cfg.VocabSize}} {
		if s := os.Getenv(e.name); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 {
				b.Fatalf("%s=%q is not a positive number", e.name, s)
			}
			*e.v = n
		}
	}
	cfg.EOSTokenID = model.TokenIDs{cfg.VocabSize - 1}
	for _, mode := range []string{"full", "lora"} {
		b.Run("mode="+mode, func(b *testing.B) {
			for range b.N {
				trainMemory(b, cfg, mode == "lora")
			}
		})
	}
}

// trainMemory is one BenchmarkLoRAMemory measurement.
func trainMemory(b *testing.B, cfg model.Config, lora bool) {
	runtime.LockOSThread()
	torchrt.ReleaseFreeMemoryNow()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Logf("cannot reset the peak (%v): it is the process's since its start", err)
	}
	start := torchrt.ReadMemory().Resident
	m, err := model.RandomCausalLM(cfg, model.Options{Device: gotch.CPU, DType: gotch.Float}, 1)
	if err != nil {
		b.Fatal(err)
	}
	defer m.Drop()
	weights := torchrt.ReadMemory().Resident - start
	params := m.Params()
	if lora {
		o := model.LoRAOptions{Rank: 64, Alpha: 64, Targets: model.LoRATargets, Seed: 1}
		if err := m.AddLoRA(o); err != nil {
			b.Fatal(err)
		}
		params = m.State()
	}
	if err := model.SetTrainable(params, true); err != nil {
		b.Fatal(err)
	}
	adam, err := optim.NewAdamW(params, optim.DefaultOptions(1e-5))
	if err != nil {
		b.Fatal(err)
	}
	defer adam.Drop()
	const B, T, scored = 2, 128, 64
	ids, mask, only := make([]int64, B*T), make([]int64, B*T), make([]float32, B*(T-1))
	for i := range ids {
		ids[i], mask[i] = int64(2+(i*7919)%(cfg.VocabSize-2)), 1
	}
	for i := range only {
		if i%(T-1) >= T-1-scored {
			only[i] = 1
		}
	}
	idsT, maskT := torchrt.Matrix(ids, B, T, gotch.CPU), torchrt.Matrix(mask, B, T, gotch.CPU)
	onlyT := torchrt.Matrix(only, B, T-1, gotch.CPU)
	defer func() { idsT.MustDrop(); maskT.MustDrop(); onlyT.MustDrop() }()
	var sec float64
	const steps = 2
	for range steps {
		t0 := time.Now()
		if err := trainStep(m, adam, idsT, maskT, onlyT, B*scored); err != nil {
			b.Fatal(err)
		}
		sec += time.Since(t0).Seconds()
	}
	mem := torchrt.ReadMemory()
	b.ReportMetric(float64(mem.Peak-start)/(1<<20), "peak_MB")
	b.ReportMetric(float64(weights)/(1<<20), "model_MB")
	b.ReportMetric(float64(model.CountParams(params))/1e6, "trained_M")
	b.ReportMetric(sec/steps, "s/update")
}

// trainStep is one update: loss = −mean log-prob over the n scored
// positions (only), its backward through the chunked head and the backbone, and
// an AdamW step.
func trainStep(m *model.CausalLM, adam *optim.AdamW, ids, mask, only *ts.Tensor, n int) (err error) {
	defer torchrt.Catch(&err, "benchmark update")
	var s torchrt.Scope
	defer s.Drop()
	sc, err := m.ScoreForTraining(ids, mask, only, 1024)
	if err != nil {
		return err
	}
	defer sc.Drop()
	l := s.Op(s.Op(sc.LogProbs.Mul(only, false)).Sum(gotch.Float, false))
	l = s.Op(l.DivScalar(ts.FloatScalar(-float64(n)), false))
	torchrt.Check(l.Backward())
	if err := sc.Backward(); err != nil {
		return err
	}
	if err := adam.Step(); err != nil {
		return err
	}
	return adam.ZeroGrad()
}
