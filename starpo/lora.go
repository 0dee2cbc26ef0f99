package starpo

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rs/zerolog/log"

	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/starpo/config"
)

// A LoRA run (lora.rank > 0, docs/training.md "LoRA") holds one copy of
// the base weights, frozen, and three views of it: the actor with its
// adapters, the reference (the base itself, for the KL terms), and the
// critic with adapters of its own and an fp32 value head, as RAGEN's LoRA
// critic is (verl: the critic's own LoraConfig, score in modules_to_save).
// Only adapters and the value head get gradients, optimiser moments and
// room in checkpoints. Rollouts run the adapters unmerged (model.Linear
// adds their term on every path), so the sampled policy is exactly the
// trained one, with no merged second copy of the weights. The export
// merges them into the HuggingFace weights (export/, which the GGUF export
// reads) and also writes them as a PEFT adapter (export-adapter/).

// adapterDir is the run folder's PEFT adapter, beside export/.
const adapterDir = "export-adapter"

// loraOptions are the run's adapter settings, drawn from seed.
func loraOptions(c config.LoRA, seed int64) model.LoRAOptions {
	return model.LoRAOptions{Rank: c.Rank, Alpha: c.Alpha, Targets: c.Targets, Seed: uint64(seed)}
}

// addActorAdapters gives the actor its adapters when the run trains LoRA
// (their A from the run's seed).
func addActorAdapters(cfg config.Config, actor *model.CausalLM) error {
	if cfg.LoRA.Rank == 0 {
		return nil
	}
	if err := actor.AddLoRA(loraOptions(cfg.LoRA, cfg.Seed)); err != nil {
		return fmt.Errorf("actor: %w", err)
	}
	log.Info().Int("rank", cfg.LoRA.Rank).Float64("alpha", cfg.LoRA.Alpha).Strs("targets", cfg.LoRA.Targets).
		Int64("trained", model.CountParams(actor.State())).Int64("of", model.CountParams(actor.Params())).
		Msg("LoRA: the base is frozen, the adapters train")
	return nil
}

// loadReference is the frozen reference policy: with LoRA the actor's base
// (the same weights, no adapters); otherwise a second copy of the starting
// model.
func loadReference(cfg config.Config, actor *model.CausalLM, modelDir string, opt model.Options) (*model.CausalLM,
	error) {
	if cfg.LoRA.Rank > 0 {
		return actor.Base(), nil
	}
	return model.LoadCausalLM(modelDir, opt)
}

// loadCritic is the critic: with LoRA one over the actor's frozen base,
// with its own adapters (drawn from seed + 1) and value head; otherwise a
// whole model loaded from modelDir.
func loadCritic(cfg config.Config, actor *model.CausalLM, modelDir string, opt model.Options) (*model.ValueModel,
	error) {
	if cfg.LoRA.Rank == 0 {
		return model.LoadValueModel(modelDir, opt, cfg.Seed)
	}
	c, err := model.NewValueModelOn(actor.Backbone, cfg.Seed)
	if err != nil {
		return nil, err
	}
	if err := c.AddLoRA(loraOptions(cfg.LoRA, cfg.Seed+1)); err != nil {
		c.Drop()
		return nil, fmt.Errorf("critic: %w", err)
	}
	return c, nil
}

// exportAdapter writes a LoRA run's adapters as a PEFT folder beside the
// merged export, with its manifest; nothing for a full fine-tune.
func (r *Run) exportAdapter() error {
	a := r.Trainer.Actor
	if !a.HasLoRA() {
		return nil
	}
	dir := filepath.Join(r.Dir, adapterDir)
	base, err := filepath.Abs(r.Model)
	if err != nil {
		base = r.Model
	}
	if err := a.ExportAdapter(dir, base); err != nil {
		return err
	}
	if err := writeManifest(dir, r.Cfg, r.Cfg.Steps); err != nil {
		return err
	}
	log.Info().Str("adapter", dir).Msg("LoRA adapters exported for PEFT (peft.PeftModel.from_pretrained)")
	return nil
}

// loraMismatch refuses, with a sentence, a checkpoint file (its tensor
// names) of a LoRA run for a full fine-tune or the other way round.
func loraMismatch(path string, names []string, params []model.Param) error {
	isAdapter := func(n string) bool { return strings.HasSuffix(n, ".lora_A.weight") }
	saved := slices.ContainsFunc(names, isAdapter)
	run := slices.ContainsFunc(params, func(p model.Param) bool { return isAdapter(p.Name) })
	switch {
	case saved && !run:
		return fmt.Errorf("%s holds LoRA adapters, but this run trains every weight (lora.rank 0): resume with the "+
			"config it was saved with", path)
	case !saved && run:
		return fmt.Errorf("%s holds every weight (a full fine-tune), but this run trains LoRA adapters: resume with "+
			"the config it was saved with (lora.rank 0)", path)
	}
	return nil
}
