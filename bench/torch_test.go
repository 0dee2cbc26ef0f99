package bench

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/sugarme/gotch"

	"github.com/ragen-go/ragen/internal/torchrt"
	"github.com/ragen-go/ragen/internal/torchrt/torchtest"
	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/tokenizer/tokenizertest"
)

func TestMain(m *testing.M) { torchtest.Main(m) }

// startBaseline starts scripts/bench_torch.py on RAGEN_PARITY_PYTHON (make
// parity's venv) or DefaultPython, or skips the test saying what to
// install.
func startBaseline(t *testing.T) *Torch {
	t.Helper()
	py := os.Getenv("RAGEN_PARITY_PYTHON")
	if py == "" {
		py = DefaultPython()
	}
	if err := CheckTorch(py); err != nil {
		t.Skipf("the PyTorch baseline cannot run here: %v", err)
	}
	if os.Getenv("RAGEN_BENCH_IMPL") == "transformers" {
		if _, why := tryImport(py, "transformers"); why != "" {
			t.Skipf("the transformers baseline cannot run on %s: %s", py, why)
		}
	}
	tc, err := StartTorch(py, filepath.Join("..", "scripts", "bench_torch.py"), os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tc.Close() })
	return tc
}

// The baseline computes the same model: its logits on a left-padded batch
// equal ours at every real position (fp32, to 1e-4), so a ratio compares
// two implementations of one computation.
func TestBaselineMatchesOurModel(t *testing.T) {
	tc := startBaseline(t)
	dir := filepath.Join(t.TempDir(), "tiny")
	eos := 1
	cfg := qwen2(32, 48, 2, 4, 2, 128)
	cfg.VocabSize, cfg.EOSTokenID = 64, model.TokenIDs{eos}
	if err := model.WriteRandomCheckpoint(dir, cfg, model.InitOptions{Seed: 3, Std: 0.2, BiasStd: 0.1, NormNoise: 0.1}); err != nil {
		t.Fatal(err)
	}
	if err := tc.Load(dir, "fp32", "cpu", 1); err != nil {
		t.Fatal(err)
	}
	prompts := [][]int{{5, 9, 12, 40, 2, 33, 7}, {17, 3, 60}}
	theirs, err := tc.Logits(prompts)
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.LoadCausalLM(dir, model.Options{Device: gotch.CPU, DType: gotch.Float})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Drop()
	L := 7
	ids, mask := make([]int64, 2*L), make([]int64, 2*L)
	for b, p := range prompts {
		for j, id := range p {
			ids[b*L+L-len(p)+j], mask[b*L+L-len(p)+j] = int64(id), 1
		}
	}
	var s torchrt.Scope
	defer s.Drop()
	idT, maskT := s.Keep(torchrt.Matrix(ids, 2, int64(L), gotch.CPU)), s.Keep(torchrt.Matrix(mask, 2, int64(L), gotch.CPU))
	pos := s.Op(model.PositionsFromMask(maskT))
	bias := s.Op(model.AttentionBias(maskT, int64(L), gotch.Float))
	ours := model.Float32s(s.Keep(m.Logits(s.Keep(m.Forward(model.Inputs{IDs: idT, Positions: pos, Bias: bias}, nil)))))
	worst := 0.0
	for b, p := range prompts {
		for j := L - len(p); j < L; j++ {
			for v := range cfg.VocabSize {
				d := math.Abs(float64(ours[(b*L+j)*cfg.VocabSize+v] - theirs[b][j][v]))
				worst = max(worst, d)
			}
		}
	}
	if worst > 1e-4 {
		t.Fatalf("logits differ by up to %g, want ≤ 1e-4", worst)
	}
	t.Logf("largest logit difference %.2g", worst)
}

// The baseline's PPO updates compute our losses: on the same batch from
// the same weights (the critic's score head handed over), the gradient
// norms of both updates agree to fp32 rounding, so the update ratios
// compare two implementations of one computation. Both baselines: the
// script's own modules and transformers' (RAGEN_BENCH_IMPL=transformers,
// whose critic head has dropout unless it is turned off, as verl does).
func TestBaselineUpdatesMatchOurs(t *testing.T) {
	for _, impl := range []string{"eager", "transformers"} {
		t.Run(impl, func(t *testing.T) {
			t.Setenv("RAGEN_BENCH_IMPL", impl)
			baselineUpdatesMatchOurs(t)
		})
	}
}

func baselineUpdatesMatchOurs(t *testing.T) {
	tc := startBaseline(t)
	p, err := LookupPreset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "tiny")
	if err := p.Build(dir, tokenizertest.Path(t), 5); err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	o.Parts = []string{PartRollout, PartUpdate}
	o.RolloutGroups, o.RolloutGroupSize, o.RolloutTurns, o.RolloutTokens = 1, 4, 2, 12
	o.UpdateSeqs, o.MicroBatch = 4, 2
	rep, err := Run(dir, "tiny", model.Options{Device: gotch.CPU, DType: gotch.Float}, o, tc)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, res := range rep.Results {
		ours := res.Details["grad_norm"]
		theirs, ok := res.Details["torch_grad_norm"]
		if !ok {
			continue
		}
		checked++
		if !(ours > 0) || math.Abs(ours-theirs) > 1e-4*ours {
			t.Errorf("%s: gradient norm %g, PyTorch %g; want equal to 1e-4", res.Name, ours, theirs)
		}
		t.Logf("%s: gradient norm %g, PyTorch %g", res.Name, ours, theirs)
	}
	if checked != 2 {
		t.Fatalf("compared %d updates, want the actor's and the critic's", checked)
	}
}
