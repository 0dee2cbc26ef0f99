package sft

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/rs/zerolog/log"

	"github.com/ragen-go/ragen/internal/progress"
	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/starpo/batch"
	"github.com/ragen-go/ragen/starpo/config"
	"github.com/ragen-go/ragen/starpo/optim"
	"github.com/ragen-go/ragen/starpo/rollout"
	"github.com/ragen-go/ragen/tokenizer"
)

// heldoutSeedOffset puts the held-out demonstrations' seeds (sft.seed plus
// this) far from the training demonstrations', the training rollouts' and
// the validation seeds.
const heldoutSeedOffset = 100_000_000

// Result is what a supervised run produced.
type Result struct {
	Export      string          // the fine-tuned checkpoint, HuggingFace layout
	Steps       int             // optimiser steps taken
	Loss        float64         // the last step's loss
	Expert      rollout.Metrics // the demonstrations' own metrics (the expert's success)
	Decisions   *DecisionReport // the held-out decisions after the last step (sft.heldout > 0)
	Interrupted bool            // stop() ended it early; the export holds the weights so far
}

// Run fine-tunes the checkpoint in modelDir on cfg.SFT.Episodes solver
// demonstrations of cfg.Train's environments (one environment per group)
// and exports the result to out/export. The folder also gets the
// demonstrations (demonstrations.jsonl) and one metrics line per step
// (sft-metrics.jsonl). stop (nil: never) is polled between steps; when it
// fires, the weights so far are exported and the result says so.
func Run(cfg config.Config, modelDir, out string, opt model.Options, stop func() bool) (res Result, err error) {
	if cfg.SFT.Episodes < 1 {
		return res, fmt.Errorf("sft.episodes %d: a warm start needs at least one demonstration", cfg.SFT.Episodes)
	}
	tok, err := tokenizer.Load(modelDir)
	if err != nil {
		return res, err
	}
	actor, err := model.LoadCausalLM(modelDir, opt)
	if err != nil {
		return res, err
	}
	defer actor.Drop()
	// The warm start trains what the actor will: every weight, or its top
	// actor.train_layers layers.
	train, err := model.TopLayers(actor.Params(), actor.Cfg.NumHiddenLayers, cfg.Actor.TrainLayers)
	if err != nil {
		return res, fmt.Errorf("actor.train_layers: %w", err)
	}
	if err := model.SetTrainable(train, true); err != nil {
		return res, err
	}
	adam, err := optim.NewAdamW(train, optim.DefaultOptions(cfg.SFT.LR))
	if err != nil {
		return res, fmt.Errorf("sft optimiser: %w", err)
	}
	defer adam.Drop()
	envCfg := cfg.Train
	envCfg.GroupSize = 1 // every demonstration from its own seed
	mgr, err := rollout.NewManager(cfg.RolloutConfig(envCfg, cfg.SFT.Seed), tok)
	if err != nil {
		return res, err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return res, fmt.Errorf("creating %s: %w", out, err)
	}
	imp := Imperfection{Noise: cfg.SFT.Noise, Invalid: cfg.SFT.Invalid, Grounded: cfg.SFT.Think == config.ThinkGrounded}
	demos, em, err := Demonstrations(mgr, tok, cfg.SFT.Episodes, imp, cfg.SFT.Seed)
	if err != nil {
		return res, err
	}
	res.Expert = em
	log.Info().Int("episodes", len(demos)).Interface("expert_success", em.ByTag("success")).
		Float64("noise", cfg.SFT.Noise).Float64("invalid", cfg.SFT.Invalid).Msg("demonstrations")
	if err := rollout.WriteTrajectories(filepath.Join(out, "demonstrations.jsonl"), demos); err != nil {
		return res, err
	}
	var held *Decisions
	if n := cfg.SFT.Heldout; n > 0 {
		hd, _, err := Demonstrations(mgr, tok, n, Imperfection{Grounded: imp.Grounded}, cfg.SFT.Seed+heldoutSeedOffset)
		if err != nil {
			return res, fmt.Errorf("held-out demonstrations: %w", err)
		}
		if held, err = NewDecisions(hd, tok); err != nil {
			return res, fmt.Errorf("sft.heldout: %w", err)
		}
	}
	f, err := os.Create(filepath.Join(out, "sft-metrics.jsonl"))
	if err != nil {
		return res, err
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	var bar *progress.Bar
	o := Options{Epochs: cfg.SFT.Epochs, Batch: cfg.SFT.Batch, MicroBatch: cfg.SFT.MicroBatch,
		GradClip: cfg.Actor.GradClip, ChunkRows: cfg.Algorithm.LMHeadChunk, Seed: cfg.SFT.Seed}
	var werr error
	decided := "" // the last held-out score, for the progress bar
	res.Steps, err = Train(actor, adam, demos, o, func(s Step) {
		if bar == nil {
			bar = progress.New("sft", s.Total)
		}
		res.Loss = s.Loss
		line := map[string]any{"step": s.Step, "sft/loss": finite(s.Loss), "sft/grad_norm": finite(s.GradNorm),
			"sft/tokens": s.Tokens, "sft/step_skipped": s.Skipped}
		if held != nil && werr == nil && (s.Step == s.Total || cfg.SFT.EvalEvery > 0 && s.Step%cfg.SFT.EvalEvery == 0) {
			var rep DecisionReport
			if rep, werr = held.Score(actor, o.MicroBatch); werr == nil {
				res.Decisions = &rep
				decided = fmt.Sprintf("  held-out decisions NLL %.3f p %.3f (repeating: %.3f)",
					rep.NLL, rep.P, rep.Repeat)
				line["sft/heldout_decision_nll"], line["sft/heldout_decision_p"] = rep.NLL, rep.P
				line["sft/heldout_decisions"], line["sft/heldout_repeat_p"] = rep.N, rep.Repeat
			}
		}
		bar.Set(s.Step, fmt.Sprintf("loss %.4f%s", s.Loss, decided))
		if werr == nil {
			werr = enc.Encode(line)
		}
	}, stop)
	if err != nil {
		return res, err
	}
	if werr != nil {
		return res, fmt.Errorf("sft metrics: %w", werr)
	}
	if res.Decisions != nil {
		d := res.Decisions
		log.Info().Int("decisions", d.N).Float64("nll", d.NLL).Float64("p_expert", d.P).Float64("p_repeat", d.Repeat).
			Msg("held-out expert decisions (chance: NLL ln(actions), ln 4 = 1.386 on Sokoban and FrozenLake; " +
				"p_repeat: repeating the previous move)")
	}
	res.Interrupted = stop != nil && stop()
	res.Export = filepath.Join(out, "export")
	exp := model.ExportOptions{DType: actor.DType, TokenizerFrom: modelDir}
	if err := model.Export(actor.Cfg, actor.Params(), res.Export, exp); err != nil {
		return res, fmt.Errorf("exporting the fine-tuned policy: %w", err)
	}
	log.Info().Str("export", res.Export).Int("steps", res.Steps).Float64("loss", res.Loss).
		Bool("interrupted", res.Interrupted).Msg("sft done")
	return res, nil
}

// DomainTexts are the rendered conversations of perTag expert episodes per
// training tag (one environment per group, seeds from cfg.Seed), half of
// them with random actions so that every action name appears: the text a
// vocabulary for these environments must encode.
func DomainTexts(cfg config.Config, tok *tokenizer.Tokenizer, perTag int) ([]string, error) {
	e := cfg.Train
	e.GroupSize = 1
	mgr, err := rollout.NewManager(cfg.RolloutConfig(e, cfg.Seed), tok)
	if err != nil {
		return nil, err
	}
	var texts []string
	for _, noise := range []float64{0, 0.5} {
		imp := Imperfection{Noise: noise, Grounded: cfg.SFT.Think == config.ThinkGrounded}
		demos, _, err := Demonstrations(mgr, tok, perTag*len(e.Tags)/2, imp,
			cfg.Seed+int64(noise*1e6))
		if err != nil {
			return nil, err
		}
		// Windowed demonstrations keep their text in per-turn rows.
		rows, _, _ := batch.Sequences(demos)
		for _, r := range rows {
			s, err := tok.Decode(r.IDs)
			if err != nil {
				return nil, err
			}
			texts = append(texts, s)
		}
	}
	return texts, nil
}

// finite is v, or nil (JSON null) when v is NaN or infinite, which JSON
// cannot hold.
func finite(v float64) any {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return v
}
