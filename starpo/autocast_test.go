package starpo

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sugarme/gotch"
)

// The bf16 autocast update against the fp32 one, on the CPU (where the
// trainer otherwise refuses it): the same rollout (both trainers start from
// the same weights and seed), then the critic and actor updates in bf16
// over fp32 masters. Losses and gradient norms agree within autocastTol,
// relative: bf16's 8-bit mantissa (a step of 2⁻⁸ ≈ 4e-3) compounded over a
// 2-layer forward and backward; observed on this tiny model ≤ 2e-3. The
// masters stay fp32 and the pass did run in bf16 (not bit-identical).
const autocastTol = 5e-2

func TestTrainerStepAutocastMatchesFP32(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tiny")
	ref := newTinyTrainer(t, dir, 2, 3, 2)
	want, err := ref.Step(0)
	if err != nil {
		t.Fatal(err)
	}
	tr := newTinyTrainer(t, dir, 2, 3, 2)
	tr.Cfg.Algorithm.Autocast = AutocastBF16
	autocastOnCPU = true
	defer func() { autocastOnCPU = false }()
	got, err := tr.Step(0)
	if err != nil {
		t.Fatal(err)
	}
	if got["rollout/in_group_std"] != want["rollout/in_group_std"] ||
		got["train/SimpleSokoban/success"] != want["train/SimpleSokoban/success"] {
		t.Fatalf("the two trainers rolled out differently: %v vs %v", got, want)
	}
	bitEqual := true
	for _, k := range []string{"actor/pg_loss", "actor/grad_norm", "critic/vf_loss", "critic/grad_norm",
		"actor/entropy_loss"} {
		g, w := got[k], want[k]
		rel := math.Abs(g-w) / math.Max(math.Abs(w), 1e-6)
		if math.IsNaN(g) || rel > autocastTol {
			t.Errorf("%s: bf16 %.6g, fp32 %.6g (relative difference %.3g, tolerance %g)", k, g, w, rel, autocastTol)
		}
		bitEqual = bitEqual && g == w
		t.Logf("%s: bf16 %.6g fp32 %.6g relative %.2g", k, g, w, rel)
	}
	if bitEqual {
		t.Fatal("the autocast step equals the fp32 one bit for bit: it did not run in bf16")
	}
	for _, p := range append(tr.Actor.Params(), tr.Critic.Params()...) {
		if p.T.DType() != gotch.Float {
			t.Fatalf("master %s is %v after the autocast step, not fp32", p.Name, p.T.DType())
		}
	}
}

// On the CPU the trainer refuses the autocast and CUDA graphs before any
// work, with a sentence naming the key.
func TestDevicePathsRefusedOnCPU(t *testing.T) {
	tr := newTinyTrainer(t, filepath.Join(t.TempDir(), "tiny"), 1, 2, 1)
	tr.Cfg.Algorithm.Autocast = AutocastBF16
	if _, err := tr.Step(0); err == nil || !strings.Contains(err.Error(), "algorithm.autocast bf16 runs the updates "+
		"on a CUDA device only") {
		t.Fatalf("autocast on the CPU: %v", err)
	}
	tr.Cfg.Algorithm.Autocast = "fp8"
	if err := tr.checkDevicePaths(); err == nil || !strings.Contains(err.Error(), `algorithm.autocast "fp8"`) {
		t.Fatalf("autocast fp8: %v", err)
	}
	tr.Cfg.Algorithm.Autocast = AutocastOff
	tr.Cfg.Rollout.CUDAGraphs = true
	if err := tr.checkDevicePaths(); err == nil || !strings.Contains(err.Error(), "rollout.cuda_graphs") {
		t.Fatalf("CUDA graphs on the CPU: %v", err)
	}
}

// A training step with the static-cache decode path (rollout.static_cache)
// gives the metrics of the default path: the rollout is the same.
func TestTrainerStepStaticCache(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tiny")
	want, err := newTinyTrainer(t, dir, 2, 3, 2).Step(0)
	if err != nil {
		t.Fatal(err)
	}
	tr := newTinyTrainer(t, dir, 2, 3, 2)
	tr.Cfg.Rollout.StaticCache = true
	got, err := tr.Step(0)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"rollout/in_group_std", "train/SimpleSokoban/success", "train/response_length"} {
		if got[k] != want[k] {
			t.Errorf("%s: static cache %v, dynamic %v", k, got[k], want[k])
		}
	}
	for _, k := range []string{"actor/pg_loss", "critic/vf_loss"} {
		if d := math.Abs(got[k] - want[k]); d > 1e-4*math.Max(1, math.Abs(want[k])) {
			t.Errorf("%s: static cache %v, dynamic %v", k, got[k], want[k])
		}
	}
}
