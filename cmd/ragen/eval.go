package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"

	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/starpo"
	"github.com/ragen-go/ragen/starpo/config"
	"github.com/ragen-go/ragen/starpo/rollout"
	"github.com/ragen-go/ragen/tokenizer"
)

func init() {
	register(command{name: "eval", summary: "measure a checkpoint's success on environments (validation rollouts)", run: runEval})
}

// evalResult is one tag's line of `ragen eval --json`.
type evalResult struct {
	Tag             string  `json:"tag"`
	Episodes        int     `json:"episodes"`
	Success         float64 `json:"success"`
	PassAtK         float64 `json:"pass_at_k"`
	K               int     `json:"k"`
	MeanTurns       float64 `json:"mean_turns"`
	FormatErrorRate float64 `json:"format_error_rate"` // share of turns with a format penalty
	MeanScore       float64 `json:"mean_score"`
}

func runEval(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("eval", stderr)
	dir := fs.String("model", "", modelHelp)
	tags := fs.StringArray("env", nil, "environment tag (repeatable)")
	n := fs.Int("n", 256, "initial states (groups) per tag, seeds --seed … --seed+n−1")
	k := fs.Int("k", 1, "samples per initial state, for pass@k")
	seed := fs.Int64("seed", 123, "first seed (RAGEN's validation seed)")
	temp := fs.Float64("temperature", 0.5, "sampling temperature (RAGEN validates at 0.5); 0 = greedy")
	maxTokens := fs.Int("max-tokens", 400, "response tokens per turn")
	maxTurn := fs.Int("max-turn", 5, "turns per episode (single-turn tags end after one anyway)")
	think := fs.Bool("think", true, "force <think>…</think> before the answer")
	place := addPlacementFlags(fs)
	asJSON := fs.Bool("json", false, "print one JSON object per tag")
	skipVerify := addSkipVerify(fs)
	cfgPath := fs.String("config", "", "a training config (a run's config.yaml) whose custom_envs tags --env may name")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	if *cfgPath != "" {
		if _, err := config.Load(*cfgPath, nil); err != nil { // registers its custom_envs
			return fmt.Errorf("--config: %w", err)
		}
	}
	path, err := resolveModel(*dir)
	if err != nil {
		return err
	}
	if err := verifyModel(path, *skipVerify); err != nil {
		return err
	}
	if len(*tags) == 0 {
		return errors.New("give at least one --env TAG")
	}
	if *n < 1 || *k < 1 {
		return fmt.Errorf("--n %d and --k %d must be at least 1", *n, *k)
	}
	rc := rollout.DefaultConfig()
	rc.Tags, rc.NGroups, rc.EnvGroups, rc.GroupSize, rc.Seed = *tags, nil, *n*len(*tags), *k, *seed
	for range *tags {
		rc.NGroups = append(rc.NGroups, *n)
	}
	rc.MaxTurn, rc.EnableThink = *maxTurn, *think
	if err := rc.Validate(); err != nil {
		return fmt.Errorf("--env: %w", err)
	}
	opts, err := place.options()
	if err != nil {
		return err
	}
	tok, err := tokenizer.Load(path)
	if err != nil {
		return err
	}
	m, err := model.LoadCausalLM(path, opts)
	if err != nil {
		return err
	}
	defer m.Drop()
	mgr, err := rollout.NewManager(rc, tok)
	if err != nil {
		return err
	}
	if err := mgr.Reset(*seed); err != nil {
		return err
	}
	gen, release := starpo.NewGenerator(m, tok, starpo.GenOptions{Sampling: model.Sampling{Temperature: *temp, TopP: 1}, MaxTokens: *maxTokens, Seed: *seed, Stop: []string{"</answer>"}})
	trajs, metrics, err := mgr.Run(gen)
	release()
	if err != nil {
		return err
	}
	results := summarize(trajs, metrics, *k, rc.FormatPenalty)
	for _, r := range results {
		if *asJSON {
			if err := json.NewEncoder(stdout).Encode(r); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintf(stdout, "%-26s success %.3f  pass@%d %.3f  turns %.2f  format errors %.3f  score %.3f  (%d episodes)\n",
			r.Tag, r.Success, r.K, r.PassAtK, r.MeanTurns, r.FormatErrorRate, r.MeanScore, r.Episodes)
	}
	return nil
}

func summarize(trajs []rollout.Trajectory, metrics rollout.Metrics, k int, penalty float64) []evalResult {
	by := map[string]*evalResult{}
	turns := map[string]float64{}
	for _, t := range trajs {
		r := by[t.Tag]
		if r == nil {
			r = &evalResult{Tag: t.Tag, K: k}
			by[t.Tag] = r
		}
		r.Episodes++
		r.MeanScore += t.Score
		r.MeanTurns += float64(len(t.TurnRewards))
		turns[t.Tag] += float64(len(t.TurnRewards))
		if penalty != 0 {
			r.FormatErrorRate += t.Penalty / penalty
		}
	}
	var out []evalResult
	for tag, r := range by {
		r.Success = metrics[tag+"/success"]
		r.PassAtK = metrics[tag+"/pass@"+strconv.Itoa(k)]
		if turns[tag] > 0 {
			r.FormatErrorRate /= turns[tag]
		}
		r.MeanScore /= float64(r.Episodes)
		r.MeanTurns /= float64(r.Episodes)
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Tag < out[j].Tag })
	return out
}
