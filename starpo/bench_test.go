package starpo

import (
	"path/filepath"
	"runtime"
	"testing"

	"github.com/sugarme/gotch"

	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/starpo/config"
	"github.com/ragen-go/ragen/starpo/rollout"
	"github.com/ragen-go/ragen/starpo/sft"
	"github.com/ragen-go/ragen/tokenizer"
	"github.com/ragen-go/ragen/tokenizer/tokenizertest"
)

// BenchmarkTrainStep50M times StarPO-S steps of a ~46M-parameter Qwen2
// (d 512, 12 layers, 8/2 heads, MLP 2048) on the environments' reduced
// vocabulary, 4 groups × 4 of Bandit and FrozenLake, 32-token answers, and
// reports seconds per phase and tokens/s of rollout and update:
//
//	go test -run '^$' -bench TrainStep50M -benchtime 3x ./starpo/
func BenchmarkTrainStep50M(b *testing.B) {
	runtime.LockOSThread()
	base, err := tokenizer.Load(tokenizertest.Path(b))
	if err != nil {
		b.Fatal(err)
	}
	cfg := config.Default()
	cfg.Train = config.Envs{Tags: []string{"Bandit", "FrozenLake"}, NGroups: []int{2, 2}, EnvGroups: 4, GroupSize: 4}
	cfg.Val = cfg.Train
	cfg.Rollout.ResponseLength, cfg.Agent.MaxActionsPerTurn = 32, 1
	cfg.Algorithm.FilterRatio, cfg.Algorithm.MicroBatch = 0.5, 4
	cfg.Actor.LR, cfg.Critic.LR = 1e-5, 1e-4
	dir := filepath.Join(b.TempDir(), "m")
	rc := cfg.RolloutConfig(config.Envs{Tags: cfg.Train.Tags, NGroups: cfg.Train.NGroups, EnvGroups: 4, GroupSize: 1},
		1)
	mgr, err := rollout.NewManager(rc, base)
	if err != nil {
		b.Fatal(err)
	}
	demos, _, err := sft.Demonstrations(mgr, base, 64, sft.Imperfection{Noise: 0.5}, 1)
	if err != nil {
		b.Fatal(err)
	}
	var texts []string
	for _, d := range demos {
		s, _ := base.Decode(d.IDs)
		texts = append(texts, s)
	}
	if _, err := base.Reduce(texts, dir); err != nil {
		b.Fatal(err)
	}
	tok, err := tokenizer.Load(dir)
	if err != nil {
		b.Fatal(err)
	}
	eos := tok.EOS()
	mc := model.Config{ModelType: "qwen2", HiddenSize: 512, IntermediateSize: 2048, NumHiddenLayers: 12,
		NumAttentionHeads: 8, NumKeyValueHeads: 2, RopeTheta: 1e6, RMSNormEps: 1e-6, VocabSize: tok.VocabSize(),
		MaxPositionEmbeddings: 4096, TieWordEmbeddings: true, HiddenAct: "silu", EOSTokenID: model.TokenIDs{eos}}
	if err := model.WriteRandomCheckpoint(dir, mc, model.InitOptions{Seed: 1}); err != nil {
		b.Fatal(err)
	}
	r, err := NewRun(cfg, dir, b.TempDir(), model.Options{Device: gotch.CPU, DType: gotch.Float}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	sums := map[string]float64{}
	b.ResetTimer()
	for i := range b.N {
		met, err := r.Trainer.Step(i)
		if err != nil {
			b.Fatal(err)
		}
		for k, v := range met {
			sums[k] += v / float64(b.N)
		}
	}
	b.StopTimer()
	for _, k := range []string{"timing_s/gen", "timing_s/adv", "timing_s/update_critic", "timing_s/update_actor",
		"timing_s/step"} {
		b.ReportMetric(sums[k], k[len("timing_s/"):]+"_s")
	}
	b.ReportMetric(sums["perf/gen_tokens_per_s"], "gen_tok/s")
	b.ReportMetric(sums["perf/update_actor_tokens_per_s"], "actor_tok/s")
	b.ReportMetric(sums["perf/update_critic_tokens_per_s"], "critic_tok/s")
	b.ReportMetric(sums["perf/max_memory_mb"], "peak_MB")
}
