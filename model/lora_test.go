package model

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"

	"github.com/ragen-go/ragen/internal/torchrt"
	"github.com/ragen-go/ragen/model/safetensors"
)

// loraTest is the adapter setting of these tests: every projection, a
// scale α/r of 2.
func loraTest(seed uint64) LoRAOptions {
	return LoRAOptions{Rank: 4, Alpha: 8, Targets: LoRATargets, Seed: seed}
}

// trainB stands in for training: every B gets N(0, 0.1²) values (B starts
// at zero, which hides any mistake in the adapter's term).
func trainB(t *testing.T, m *Backbone) {
	t.Helper()
	err := torchrt.NoGrad(func() (err error) {
		defer torchrt.Catch(&err, "perturbing B")
		for _, p := range m.Adapters() {
			if strings.HasSuffix(p.Name, "lora_B.weight") {
				r := must(ts.Randn(size(p.T), gotch.Float, gotch.CPU))
				r = must(r.MulScalar(ts.FloatScalar(0.1), true))
				torchrt.CopyInto(p.T, r)
				r.MustDrop()
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func flatLogits(l [][][]float32) []float32 {
	var out []float32
	for _, b := range l {
		for _, r := range b {
			out = append(out, r...)
		}
	}
	return out
}

// A fresh adapter leaves the model exactly as it was (B = 0): the same
// logits to the bit; A is drawn in PEFT's range U(−1/√in, 1/√in) and the
// names are PEFT's.
func TestLoRAStartsAtTheBase(t *testing.T) {
	dir, cfg := writeTiny(t, false, 0)
	m := loadTiny(t, dir)
	before := flatLogits(fullLogits(t, m, testSeqs))
	if err := m.AddLoRA(loraTest(1)); err != nil {
		t.Fatal(err)
	}
	after := flatLogits(fullLogits(t, m, testSeqs))
	for i := range before {
		if before[i] != after[i] {
			t.Fatalf("logit %d: %v without adapters, %v with fresh ones", i, before[i], after[i])
		}
	}
	ad := m.Adapters()
	if len(ad) != 2*7*cfg.NumHiddenLayers {
		t.Fatalf("%d adapter tensors, want %d", len(ad), 2*7*cfg.NumHiddenLayers)
	}
	if want := "base_model.model.model.layers.1.mlp.down_proj.lora_B.weight"; ad[len(ad)-1].Name != want {
		t.Fatalf("last adapter %s, want %s", ad[len(ad)-1].Name, want)
	}
	for _, p := range ad {
		v, sh := Float32s(p.T), size(p.T)
		if strings.HasSuffix(p.Name, "lora_B.weight") {
			if slices.ContainsFunc(v, func(x float32) bool { return x != 0 }) || sh[1] != 4 {
				t.Fatalf("%s %v is not a zero [out, 4]", p.Name, sh)
			}
			continue
		}
		bound := 1 / math.Sqrt(float64(sh[1]))
		lo, hi := slices.Min(v), slices.Max(v)
		if sh[0] != 4 || float64(lo) < -bound || float64(hi) > bound || hi-lo < float32(bound) {
			t.Fatalf("%s %v: values in [%v, %v], want spread over ±%v", p.Name, sh, lo, hi, bound)
		}
	}
	if err := m.AddLoRA(loraTest(1)); err == nil {
		t.Fatal("adding adapters twice was accepted")
	}
}

// Folding the adapters into the weights (the export) gives the model the
// adapters compute unmerged, to fp32 rounding: a whole forward over a
// padded batch, and greedy batch-1 decoding, which takes the
// matrix-vector path (gemv) for the base and must add the adapters too.
func TestLoRAMergedEqualsUnmerged(t *testing.T) {
	for _, targets := range [][]string{LoRATargets, {"q_proj", "v_proj"}} {
		dir, _ := writeTiny(t, false, 0)
		m := loadTiny(t, dir)
		o := loraTest(2)
		o.Targets = targets
		if err := m.AddLoRA(o); err != nil {
			t.Fatal(err)
		}
		trainB(t, m.Backbone)
		ps, release, err := m.MergedParams()
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "merged")
		err = Export(m.Cfg, ps, out, ExportOptions{DType: gotch.Float})
		release()
		if err != nil {
			t.Fatal(err)
		}
		merged := loadTiny(t, out)
		base := loadTiny(t, dir)
		a, b := flatLogits(fullLogits(t, m, testSeqs)), flatLogits(fullLogits(t, merged, testSeqs))
		moved := maxAbsDiff(a, flatLogits(fullLogits(t, base, testSeqs)))
		if d := maxAbsDiff(a, b); d > 1e-4 || moved < 1e-2 {
			t.Fatalf("targets %v: merged vs unmerged logits differ by %g (the adapters moved them by %g)", targets, d, moved)
		}
		for _, p := range testSeqs {
			ga, err := m.Generate([][]int{p}, GenerateOptions{MaxNewTokens: 6})
			if err != nil {
				t.Fatal(err)
			}
			gb, err := merged.Generate([][]int{p}, GenerateOptions{MaxNewTokens: 6})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ga[0].IDs, gb[0].IDs) || maxAbsDiff(ga[0].LogProbs, gb[0].LogProbs) > 1e-4 {
				t.Fatalf("targets %v, prompt %v: decoded %v %v unmerged, %v %v merged", targets, p,
					ga[0].IDs, ga[0].LogProbs, gb[0].IDs, gb[0].LogProbs)
			}
		}
	}
}

// The static-cache decoder (the CUDA-graph path's shapes) adds the
// adapters as the dynamic one does: the same ids and log-probs for a
// padded batch.
func TestLoRAStaticCache(t *testing.T) {
	dir, _ := writeTiny(t, false, 0)
	m := loadTiny(t, dir)
	if err := m.AddLoRA(loraTest(9)); err != nil {
		t.Fatal(err)
	}
	trainB(t, m.Backbone)
	dyn, err := m.Generate(testSeqs, GenerateOptions{MaxNewTokens: 6})
	if err != nil {
		t.Fatal(err)
	}
	st, err := m.Generate(testSeqs, GenerateOptions{MaxNewTokens: 6, StaticCache: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range dyn {
		if !slices.Equal(dyn[i].IDs, st[i].IDs) || maxAbsDiff(dyn[i].LogProbs, st[i].LogProbs) > 1e-5 {
			t.Fatalf("prompt %d: %v %v dynamic, %v %v static", i, dyn[i].IDs, dyn[i].LogProbs, st[i].IDs, st[i].LogProbs)
		}
	}
}

// With the adapters trainable and the base not, a training backward gives
// gradients to A and B only; at the start (B = 0) A's is zero, as the
// update A gets is through B.
func TestLoRAGradientsReachOnlyAdapters(t *testing.T) {
	dir, _ := writeTiny(t, false, 0)
	m := loadTiny(t, dir)
	if err := m.AddLoRA(loraTest(3)); err != nil {
		t.Fatal(err)
	}
	if err := SetTrainable(m.State(), true); err != nil {
		t.Fatal(err)
	}
	ids, mask, _ := batch(testSeqs)
	defer dropAll(ids, mask)
	for _, trained := range []bool{false, true} {
		if trained {
			trainB(t, m.Backbone)
		}
		backwardLogProbs(t, m, ids, mask)
		for _, p := range m.Params() {
			if g := gradOrNil(p.T); g != nil {
				t.Fatalf("frozen %s got a gradient", p.Name)
			}
		}
		for _, p := range m.Adapters() {
			g := gradOrNil(p.T)
			if g == nil {
				t.Fatalf("%s got no gradient", p.Name)
			}
			v := Float32s(g)
			zero := !slices.ContainsFunc(v, func(x float32) bool { return x != 0 })
			if isA := strings.HasSuffix(p.Name, "lora_A.weight"); zero != (isA && !trained) {
				t.Fatalf("B trained %v: %s's gradient is zero: %v", trained, p.Name, zero)
			}
			check(g.Zero_())
			g.MustDrop()
		}
	}
}

// The reference of a LoRA run is the policy without its adapters over the
// same weights, and a LoRA critic shares them too: dropping either frees
// nothing of the policy, and the reference stays the base as the adapters
// train.
func TestLoRASharedBase(t *testing.T) {
	dir, _ := writeTiny(t, false, 0)
	m := loadTiny(t, dir)
	base := flatLogits(fullLogits(t, m, testSeqs))
	if err := m.AddLoRA(loraTest(4)); err != nil {
		t.Fatal(err)
	}
	trainB(t, m.Backbone)
	ref := m.Base()
	if ref.HasLoRA() || ref.Embed != m.Embed || ref.Layers[0].Attn.Q.Weight != m.Layers[0].Attn.Q.Weight {
		t.Fatal("the reference does not share the policy's weights, or has its adapters")
	}
	if d := maxAbsDiff(base, flatLogits(fullLogits(t, ref, testSeqs))); d != 0 {
		t.Fatalf("the reference differs from the starting model by %g", d)
	}
	ref.Drop()
	critic, err := NewValueModelOn(m.Backbone, 5)
	if err != nil {
		t.Fatal(err)
	}
	if err := critic.AddLoRA(loraTest(6)); err != nil {
		t.Fatal(err)
	}
	st := critic.State()
	if len(st) != len(m.Adapters())+2 || st[len(st)-1].Name != "score.bias" || critic.Score.Weight.DType() != gotch.Float {
		t.Fatalf("critic state %d tensors ending %s", len(st), st[len(st)-1].Name)
	}
	ids, mask, L := batch(testSeqs)
	defer dropAll(ids, mask)
	pos := must(PositionsFromMask(mask))
	bias := must(AttentionBias(mask, int64(L), m.DType))
	defer dropAll(pos, bias)
	v, err := critic.Values(Inputs{IDs: ids, Positions: pos, Bias: bias})
	if err != nil {
		t.Fatal(err)
	}
	if sh := size(v); sh[0] != int64(len(testSeqs)) || sh[1] != int64(L) {
		t.Fatalf("values %v", sh)
	}
	v.MustDrop()
	critic.Drop()
	// The policy is whole after both are dropped.
	if d := maxAbsDiff(base, flatLogits(fullLogits(t, m, testSeqs))); d < 1e-2 {
		t.Fatalf("the policy lost its adapters (logits %g from the base)", d)
	}
}

// The bf16 autocast copy of a LoRA policy carries bf16 adapters whose
// gradients reach the fp32 masters, and a bf16 base with fp32 adapters
// starts at its own logits exactly and keeps its activations in bf16.
func TestLoRADTypes(t *testing.T) {
	dir, _ := writeTiny(t, false, 0)
	m := loadTiny(t, dir)
	if err := m.AddLoRA(loraTest(7)); err != nil {
		t.Fatal(err)
	}
	trainB(t, m.Backbone)
	if err := SetTrainable(m.State(), true); err != nil {
		t.Fatal(err)
	}
	c, err := AutocastCausalLM(m, gotch.BFloat16)
	if err != nil {
		t.Fatal(err)
	}
	if ca := c.Adapters(); len(ca) != len(m.Adapters()) || ca[0].T.DType() != gotch.BFloat16 {
		t.Fatalf("autocast copy: %d adapters", len(ca))
	}
	ids, mask, _ := batch(testSeqs)
	defer dropAll(ids, mask)
	backwardLogProbs(t, c, ids, mask)
	c.Drop()
	for _, p := range m.Adapters() {
		g := gradOrNil(p.T)
		if g == nil || g.DType() != gotch.Float {
			t.Fatalf("master %s got no fp32 gradient through the autocast copy", p.Name)
		}
		g.MustDrop()
	}

	bf, err := LoadCausalLM(dir, Options{Device: gotch.CPU, DType: gotch.BFloat16})
	if err != nil {
		t.Fatal(err)
	}
	defer bf.Drop()
	before := flatLogits(fullLogits(t, bf, testSeqs))
	if err := bf.AddLoRA(loraTest(7)); err != nil {
		t.Fatal(err)
	}
	if bf.Adapters()[0].T.DType() != gotch.Float {
		t.Fatal("the adapters of a bf16 base are not fp32")
	}
	if d := maxAbsDiff(before, flatLogits(fullLogits(t, bf, testSeqs))); d != 0 {
		t.Fatalf("fresh adapters moved the bf16 model's logits by %g", d)
	}
	x := must(ts.Randn([]int64{2, 3, int64(bf.Cfg.HiddenSize)}, gotch.BFloat16, gotch.CPU))
	defer x.MustDrop()
	y := bf.Layers[0].Attn.Q.Forward(x)
	defer y.MustDrop()
	if y.DType() != gotch.BFloat16 {
		t.Fatalf("a bf16 base with fp32 adapters answers in %v", y.DType())
	}
	// Training through the bf16 base gives the fp32 adapters fp32
	// gradients, and a critic's fp32 head reads the bf16 hidden states.
	if err := SetTrainable(bf.State(), true); err != nil {
		t.Fatal(err)
	}
	backwardLogProbs(t, bf, ids, mask)
	for _, p := range bf.Adapters() {
		g := gradOrNil(p.T)
		if g == nil || g.DType() != gotch.Float {
			t.Fatalf("%s of the bf16 base got no fp32 gradient", p.Name)
		}
		g.MustDrop()
	}
	critic, err := NewValueModelOn(bf.Backbone, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer critic.Drop()
	pos := must(PositionsFromMask(mask))
	bias := must(AttentionBias(mask, size(ids)[1], bf.DType))
	defer dropAll(pos, bias)
	v, err := critic.Values(Inputs{IDs: ids, Positions: pos, Bias: bias})
	if err != nil {
		t.Fatal(err)
	}
	defer v.MustDrop()
	if v.DType() != gotch.Float {
		t.Fatalf("the critic's values are %v", v.DType())
	}
}

// The PEFT folder holds adapter_model.safetensors under PEFT's names, in
// fp32, and adapter_config.json with the settings PEFT reads (its load by
// peft itself is scripts/parity/test_peft.py), and LoadAdapter reads it
// back.
func TestExportAdapter(t *testing.T) {
	dir, _ := writeTiny(t, false, 0)
	m := loadTiny(t, dir)
	if err := m.ExportAdapter(filepath.Join(t.TempDir(), "a"), dir); err == nil {
		t.Fatal("a model without adapters exported an adapter")
	}
	o := loraTest(8)
	o.Targets = []string{"q_proj", "v_proj", "down_proj"}
	if err := m.AddLoRA(o); err != nil {
		t.Fatal(err)
	}
	trainB(t, m.Backbone)
	out := filepath.Join(t.TempDir(), "adapter")
	if err := m.ExportAdapter(out, dir); err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	b, err := os.ReadFile(filepath.Join(out, "adapter_config.json"))
	if err != nil || json.Unmarshal(b, &cfg) != nil {
		t.Fatalf("adapter_config.json %s, %v", b, err)
	}
	for k, want := range map[string]any{"peft_type": "LORA", "task_type": "CAUSAL_LM", "r": 4.0, "lora_alpha": 8.0,
		"bias": "none", "base_model_name_or_path": dir, "lora_dropout": 0.0} {
		if cfg[k] != want {
			t.Errorf("adapter_config.json %s = %v, want %v", k, cfg[k], want)
		}
	}
	if got := cfg["target_modules"]; len(got.([]any)) != 3 {
		t.Errorf("target_modules %v", got)
	}
	f, err := safetensors.Open(filepath.Join(out, "adapter_model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := m.Adapters()
	if names := f.Names(); len(names) != len(want) {
		t.Fatalf("%d tensors stored, %d adapters", len(names), len(want))
	}
	for _, p := range want {
		info, err := f.Info(p.Name)
		if err != nil || info.DType != safetensors.F32 {
			t.Fatalf("%s: %+v, %v", p.Name, info, err)
		}
		data, _ := f.Bytes(p.Name)
		c := must(torchrt.TensorFromBytes(data, info.Shape, gotch.Float))
		if d := maxAbsDiff(Float32s(c), Float32s(p.T)); d != 0 {
			t.Fatalf("%s stored differs by %g", p.Name, d)
		}
		c.MustDrop()
	}

	// LoadAdapter reads it back onto the base: the same logits to the bit.
	back := loadTiny(t, dir)
	if err := back.LoadAdapter(out); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.LoRA.Targets, o.Targets) || back.LoRA.Rank != 4 || back.LoRA.Alpha != 8 {
		t.Fatalf("loaded settings %+v", back.LoRA)
	}
	if d := maxAbsDiff(flatLogits(fullLogits(t, m, testSeqs)), flatLogits(fullLogits(t, back, testSeqs))); d != 0 {
		t.Fatalf("the loaded adapter's logits differ by %g", d)
	}
	// A config that does not fit the tensors is refused, naming the tensor,
	// and leaves the model without adapters.
	b = []byte(strings.Replace(string(b), `"r": 4`, `"r": 8`, 1))
	if err := os.WriteFile(filepath.Join(out, "adapter_config.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	fresh := loadTiny(t, dir)
	err = fresh.LoadAdapter(out)
	if err == nil || !strings.Contains(err.Error(), "tensor base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight "+
		"has shape [4 32], the model's rank-8 adapter [8 32]") || fresh.HasLoRA() {
		t.Fatalf("a rank-8 config over rank-4 tensors: %v (adapters left: %v)", err, fresh.HasLoRA())
	}
}

// backwardLogProbs runs m's training scorer on ids and backpropagates the
// sum of the log-probabilities through it, leaving the gradients in place.
func backwardLogProbs(t *testing.T, m *CausalLM, ids, mask *ts.Tensor) {
	t.Helper()
	sc, err := m.ScoreForTraining(ids, mask, nil, 8)
	if err != nil {
		t.Fatal(err)
	}
	l := must(sc.LogProbs.Sum(gotch.Float, false))
	check(l.Backward())
	l.MustDrop()
	if err := sc.Backward(); err != nil {
		t.Fatal(err)
	}
	sc.Drop()
}
