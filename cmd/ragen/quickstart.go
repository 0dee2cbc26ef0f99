package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/rs/zerolog/log"

	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/starpo"
	"github.com/ragen-go/ragen/starpo/config"
	"github.com/ragen-go/ragen/starpo/rollout"
	"github.com/ragen-go/ragen/starpo/sft"
	"github.com/ragen-go/ragen/tokenizer"
)

func init() {
	register(command{name: "quickstart", summary: "the built-in job: validate SmolLM2-135M-Instruct, train it with StarPO-S, compare (--builtin: a small model from scratch)", run: runQuickstart})
}

// stageResult is one row group of the quickstart table: validation success
// per tag after a stage.
type stageResult struct {
	Stage   string             `json:"stage"`
	Model   string             `json:"model"`
	Success map[string]float64 `json:"success"`
	Valid   map[string]float64 `json:"action_is_valid"` // per tag: the mean over episodes of the share of valid actions per turn
	// Per tag: the share of episodes whose every turn was valid, and the
	// success among them (absent when none was): format apart from play.
	ValidEpisodes  map[string]float64 `json:"valid_episodes"`
	SuccessInValid map[string]float64 `json:"success_in_valid"`
	Seconds        float64            `json:"seconds"` // initial: its validation; after SFT: the warm start (demonstrations, training, export); after StarPO-S: the RL run with its validations
}

// newStage is a stage's row from its validation metrics.
func newStage(stage, model string, m rollout.Metrics, took time.Duration) stageResult {
	return stageResult{Stage: stage, Model: model, Success: starpo.SuccessByTag(m), Valid: starpo.ByTag(m, "action_is_valid"),
		ValidEpisodes: starpo.ByTag(m, "valid_episodes"), SuccessInValid: starpo.ByTag(m, "success_in_valid"), Seconds: took.Seconds()}
}

// Presets of the two quickstart jobs.
const (
	quickstartConfig        = "configs/quickstart.yaml"
	quickstartBuiltinConfig = "configs/quickstart-builtin.yaml"
)

func runQuickstart(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("quickstart", stderr)
	rf := addRunFlags(fs, quickstartConfig, "the pipeline's config: environments, warm start and StarPO-S settings "+
		"(default "+quickstartConfig+", with --builtin "+quickstartBuiltinConfig+")", "run folder (default runs/<name>)")
	modelArg := fs.String("model", "smollm2", "the pretrained model to train: "+modelHelp)
	builtin := fs.Bool("builtin", false, "create a small Qwen2 model from a fixed seed on the Qwen tokenizer reduced to the environments' tokens, "+
		"and warm-start it on solver demonstrations, instead of training --model")
	tokPath := fs.String("tokenizer", tokenizer.DefaultQwenPath, "with --builtin: the real Qwen tokenizer.json (or its folder) the model's vocabulary is carved from")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	if err := singleProcess("quickstart"); err != nil {
		return err
	}
	switch {
	case *builtin && fs.Changed("model"):
		return errors.New("--builtin creates its own model; give either --builtin or --model")
	case !*builtin && fs.Changed("tokenizer"):
		return errors.New("--tokenizer applies to --builtin, whose vocabulary it is carved from")
	case *builtin && !fs.Changed("config"):
		*rf.cfgPath = quickstartBuiltinConfig
	}
	cfg, out, err := rf.load("")
	if err != nil {
		return err
	}
	startModel := ""
	if *builtin {
		if _, err := os.Stat(*tokPath); err != nil {
			return fmt.Errorf("--tokenizer %s: not found (run `make deps`, which fetches the Qwen tokenizer, or point --tokenizer at a Qwen tokenizer.json)", *tokPath)
		}
	} else if startModel, err = resolveModel(*modelArg); err != nil {
		return err
	}
	opts, err := configPlacement(cfg)
	if err != nil {
		return err
	}
	stop, release := onInterrupt("finishing this step, then saving")
	defer release()
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("--out %s: %w", out, err)
	}
	q := &quickstart{cfg: cfg, out: out, opts: opts, start: time.Now()}
	if *builtin {
		startModel = filepath.Join(out, "model")
		if err := createBuiltin(cfg, *tokPath, startModel); err != nil {
			return err
		}
		if err := q.validate("initial", startModel); err != nil {
			return err
		}
	} else if cfg.SFT.Episodes > 0 {
		// The pretrained model's own row, so that the table shows what the
		// warm start gave as well as what StarPO-S added to it.
		if err := q.validate("pretrained", startModel); err != nil {
			return err
		}
	}
	// The RL run's step-0 validation is its starting model's, on the same
	// seeds at the same temperature: it is the row before StarPO-S.
	before := "pretrained"
	var warmTook time.Duration
	if cfg.SFT.Episodes > 0 {
		t0 := time.Now()
		warm, err := sft.Run(cfg, startModel, filepath.Join(out, "sft"), opts, stop)
		if err != nil {
			return err
		}
		if warm.Interrupted {
			return errors.New("interrupted during the warm start; its weights so far are in " + warm.Export)
		}
		startModel, before, warmTook = warm.Export, "after SFT", time.Since(t0)
	}
	rlDir := filepath.Join(out, "rl")
	run, err := starpo.NewRun(cfg, startModel, rlDir, opts, nil)
	if err != nil {
		return err
	}
	defer run.Close()
	run.Stop, run.Bar = stop, true
	t0 := time.Now()
	runErr := run.Execute(false)
	if run.StartVal != nil {
		if err := q.add(newStage(before, startModel, run.StartVal, warmTook)); err != nil && runErr == nil {
			runErr = err
		}
	}
	if runErr != nil {
		return runErr
	}
	if run.StartVal == nil {
		return errors.New("the StarPO-S stage did not validate its starting model at step 0")
	}
	if run.Interrupted {
		return fmt.Errorf("interrupted during StarPO-S; resume with: ragen train --config %s --model %s --out %s --resume", *rf.cfgPath, startModel, rlDir)
	}
	if err := q.add(newStage("after StarPO-S", filepath.Join(rlDir, "export"), run.LastVal, time.Since(t0))); err != nil {
		return err
	}
	fmt.Fprint(stdout, table(q.rows, cfg))
	fmt.Fprintf(stdout, "\nrun folder %s (report: %s), %s in all\n", out, filepath.Join(rlDir, "report.html"), time.Since(q.start).Round(time.Second))
	return nil
}

// quickstart is a job's table so far, rewritten to summary.json at every
// new row so that an interrupted job keeps what it measured.
type quickstart struct {
	cfg   config.Config
	out   string
	opts  model.Options
	start time.Time
	rows  []stageResult
}

func (q *quickstart) add(r stageResult) error {
	q.rows = append(q.rows, r)
	return writeSummary(q.out, q.rows, time.Since(q.start), q.cfg)
}

// validate adds a row of the model at dir's validation.
func (q *quickstart) validate(stage, dir string) error {
	t0 := time.Now()
	log.Info().Str("stage", stage).Str("model", dir).Msg("validating")
	_, m, err := starpo.EvaluateCheckpoint(dir, q.cfg, q.opts, "validate")
	if err != nil {
		return fmt.Errorf("validation %s: %w", stage, err)
	}
	return q.add(newStage(stage, dir, m, time.Since(t0)))
}

// createBuiltin writes the small model: the Qwen tokenizer reduced to the
// tokens of the environments' text (expert episodes on training seeds), and
// a Qwen2 checkpoint of cfg.Builtin's shape from its fixed seed.
func createBuiltin(cfg config.Config, tokPath, dir string) error {
	base, err := tokenizer.Load(tokPath)
	if err != nil {
		return err
	}
	texts, err := sft.DomainTexts(cfg, base, cfg.Builtin.VocabEpisodes)
	if err != nil {
		return err
	}
	red, err := base.Reduce(texts, dir)
	if err != nil {
		return err
	}
	tok, err := tokenizer.Load(dir)
	if err != nil {
		return err
	}
	b := cfg.Builtin
	eos := tok.EOS()
	mc := model.Config{
		ModelType: "qwen2", HiddenSize: b.Hidden, IntermediateSize: b.Intermediate, NumHiddenLayers: b.Layers,
		NumAttentionHeads: b.Heads, NumKeyValueHeads: b.KVHeads, RopeTheta: b.RopeTheta, RMSNormEps: 1e-6,
		VocabSize: tok.VocabSize(), MaxPositionEmbeddings: 4096, TieWordEmbeddings: true, HiddenAct: "silu",
		EOSTokenID: model.TokenIDs{eos},
	}
	note := fmt.Sprintf("reduced vocabulary: %d of the %d Qwen tokens; %s maps each id to its Qwen id (lossless both ways, see tokenizer.Reduction)",
		len(red.IDs), red.BaseSize, tokenizer.VocabMapFile)
	if err := mc.SetExtra("ragen_vocabulary", note); err != nil {
		return err
	}
	if err := model.WriteRandomCheckpoint(dir, mc, model.InitOptions{Seed: b.Seed}); err != nil {
		return err
	}
	log.Info().Str("model", dir).Int("vocab", len(red.IDs)).Int("hidden", b.Hidden).Int("layers", b.Layers).Msg("built-in model created")
	return nil
}

// gainSummary is a tag's change over StarPO-S.
type gainSummary struct {
	Diff     float64 `json:"diff"`
	Low      float64 `json:"low95"`
	High     float64 `json:"high95"`
	Episodes int     `json:"episodes"`
}

func writeSummary(dir string, rows []stageResult, total time.Duration, cfg config.Config) error {
	out := map[string]any{"stages": rows, "seconds": total.Seconds()}
	if g := gains(rows, cfg); g != nil {
		out["starpo_gain"] = g
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "summary.json"), append(b, '\n'), 0o644)
}

// table prints success per tag (rows) after each stage (columns), and
// the change over StarPO-S with its 95% interval
// (Wald, two independent proportions on the validation episodes); then
// the share of valid actions per turn, so that a gain made of answering
// in format is told apart from one made of playing better.
func table(rows []stageResult, cfg config.Config) string {
	tags := map[string]bool{}
	for _, r := range rows {
		for t := range r.Success {
			tags[t] = true
		}
	}
	var names []string
	for t := range tags {
		names = append(names, t)
	}
	sort.Strings(names)
	gain := gains(rows, cfg)
	var b strings.Builder
	fmt.Fprintf(&b, "\nvalidation success on %d fixed seeds per tag (from seed %d, temperature %.1f)\n\n", cfg.Val.EnvGroups/len(cfg.Val.Tags), cfg.ValSeed, cfg.Rollout.ValTemperature)
	fmt.Fprintf(&b, "%-16s", "environment")
	for _, r := range rows {
		fmt.Fprintf(&b, " %15s", r.Stage)
	}
	if gain != nil {
		fmt.Fprintf(&b, "  end − %s (95%% interval)", rows[len(rows)-2].Stage)
	}
	b.WriteString("\n")
	for _, t := range names {
		fmt.Fprintf(&b, "%-16s", t)
		for _, r := range rows {
			fmt.Fprintf(&b, " %15.3f", r.Success[t])
		}
		if g, ok := gain[t]; ok {
			fmt.Fprintf(&b, "  %+.3f [%+.3f, %+.3f]", g.Diff, g.Low, g.High)
		}
		b.WriteString("\n")
	}
	sub := func(title string, value func(stageResult) map[string]float64) {
		b.WriteString("\n" + title + "\n\n")
		for _, t := range names {
			fmt.Fprintf(&b, "%-16s", t)
			for _, r := range rows {
				if v, ok := value(r)[t]; ok {
					fmt.Fprintf(&b, " %15.3f", v)
				} else {
					fmt.Fprintf(&b, " %15s", "—")
				}
			}
			b.WriteString("\n")
		}
	}
	sub("valid actions per turn (a turn whose answer names no action, or an unknown one, is invalid)",
		func(r stageResult) map[string]float64 { return r.Valid })
	sub("episodes with every turn valid", func(r stageResult) map[string]float64 { return r.ValidEpisodes })
	sub("success among the episodes with every turn valid (— where there were none)",
		func(r stageResult) map[string]float64 { return r.SuccessInValid })
	return b.String()
}

// gains is each validation tag's change over StarPO-S: from the row
// before it (the pretrained model, or the warm start) to the end (the last
// row), over its validation episodes; nil before there is an end.
func gains(rows []stageResult, cfg config.Config) map[string]gainSummary {
	if len(rows) < 2 || rows[len(rows)-1].Stage != "after StarPO-S" {
		return nil
	}
	episodes := map[string]int{}
	for i, t := range cfg.Val.Tags {
		episodes[t] += cfg.Val.NGroups[i] * cfg.Val.GroupSize
	}
	out := map[string]gainSummary{}
	for t, n := range episodes {
		d, half := gainInterval(rows[len(rows)-2].Success[t], rows[len(rows)-1].Success[t], n)
		out[t] = gainSummary{Diff: d, Low: d - half, High: d + half, Episodes: n}
	}
	return out
}

// gainInterval is the difference after − before of two success rates,
// each over n episodes, and the half-width of its 95% interval
// (1.96 standard errors of a difference of independent proportions).
func gainInterval(before, after float64, n int) (diff, half float64) {
	if n < 1 {
		return after - before, math.NaN()
	}
	v := (before*(1-before) + after*(1-after)) / float64(n)
	return after - before, 1.96 * math.Sqrt(v)
}
