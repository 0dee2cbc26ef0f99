package report

import (
	"regexp"
	"sort"
	"strings"
)

// chartSpec is one chart of the page: which metrics it draws, from which
// kind of line.
type chartSpec struct {
	ID     string       `json:"id"`
	Title  string       `json:"title"`
	Source string       `json:"source"` // "train" or "val"
	Series []seriesSpec `json:"series"`
	YSpan  []float64    `json:"y_span,omitempty"` // values the y axis always covers, e.g. 0 and 1 for rates
}

// seriesSpec is one curve of a chart.
type seriesSpec struct {
	Key   string `json:"key"`   // metrics.jsonl key
	Label string `json:"label"` // legend text
}

// trainCharts are the training curves every report shows, in page order.
var trainCharts = []chartSpec{
	{ID: "reward", Title: "Reward and in-group std", Source: "train", Series: []seriesSpec{
		{"critic/score/mean", "reward mean"},
		{"rollout/in_group_std", "in-group std"},
		{"rollout/chosen_in_group_std", "in-group std, kept groups"}}},
	{ID: "entropy", Title: "Entropy", Source: "train", Series: []seriesSpec{{"actor/entropy_loss", "entropy"}}},
	{ID: "grad-norm", Title: "Gradient norm", Source: "train", Series: []seriesSpec{{"actor/grad_norm", "actor grad norm"}}},
	{ID: "response-length", Title: "Response length (tokens)", Source: "train", Series: []seriesSpec{{"train/response_length", "response length"}}},
	{ID: "clipfrac", Title: "PPO clip fraction", Source: "train", Series: []seriesSpec{{"actor/pg_clipfrac", "clip fraction"}}},
	{ID: "kl", Title: "KL", Source: "train", Series: []seriesSpec{{"actor/ppo_kl", "PPO KL"}, {"actor/kl_loss", "KL loss"}}},
	{ID: "value-loss", Title: "Value loss", Source: "train", Series: []seriesSpec{{"critic/vf_loss", "value loss"}}},
}

// reasoningCharts are the think diagnostics (docs/training.md, "Think
// diagnostics"), drawn when a run recorded them (thinking on).
var reasoningCharts = []chartSpec{
	{ID: "think-length", Title: "Think length (tokens per turn)", Source: "train", Series: []seriesSpec{
		{"train/think/tokens_mean", "mean"}, {"train/think/tokens_median", "median"}}},
	{ID: "think-quality", Title: "Think: empty, repeated, agreeing, true", Source: "train", YSpan: []float64{0, 1},
		Series: []seriesSpec{
			{"train/think/empty_share", "empty"}, {"train/think/repeat_share", "repeats the last turn"},
			{"train/reasoning/agreement", "think–answer agreement"}, {"train/reasoning/claim_accuracy", "claim accuracy"},
			{"train/reasoning/claim_turns", "turns with a claim"}, {"train/reasoning/plan_legal", "legal plans"}}},
	{ID: "template-collapse", Title: "Template collapse: prompt–think mutual information", Source: "train", Series: []seriesSpec{
		{"collapse/mi_estimate", "MI per token (nats)"}, {"collapse/retrieval_accuracy", "prompt retrieval accuracy"},
		{"collapse/retrieval_chance_level", "retrieval chance"}}},
	{ID: "reasoning-reward", Title: "Reasoning reward per trajectory", Source: "train", Series: []seriesSpec{
		{"train/reward/reasoning/consistency", "consistency"}, {"train/reward/reasoning/claims", "claims"},
		{"train/reward/reasoning/plan", "plan"}}},
	{ID: "val-think", Title: "Validation think", Source: "val", Series: []seriesSpec{
		{"val-env/think/tokens_mean", "think tokens"}, {"val-env/reasoning/claim_accuracy", "claim accuracy"},
		{"val-env/reasoning/agreement", "think–answer agreement"}, {"val-env/collapse/mi_estimate", "MI per token"}}},
}

var (
	valSuccessKey = regexp.MustCompile(`^val-env/(.+)/success$`)
	valPassKey    = regexp.MustCompile(`^val-env/(.+)/(pass@\w+)$`)
	valPlayKey    = regexp.MustCompile(`^val-env/(.+)/(action_is_valid|valid_episodes|success_in_valid)$`)
)

// chartsFor is the page's charts for runs: validation success per tag first
// (pass@k too when recorded), then format against play (valid turns, fully
// valid episodes, success among those) when recorded, then trainCharts.
func chartsFor(runs []*Run) []chartSpec {
	charts := []chartSpec{{ID: "val-success", Title: "Validation success by tag", Source: "val", YSpan: []float64{0, 1},
		Series: valSeries(runs, valSuccessKey, func(m []string) string { return m[1] })}}
	if pass := valSeries(runs, valPassKey, func(m []string) string { return m[1] + " " + m[2] }); len(pass) > 0 {
		charts = append(charts, chartSpec{ID: "val-pass", Title: "Validation pass@k by tag", Source: "val", Series: pass, YSpan: []float64{0, 1}})
	}
	if play := valSeries(runs, valPlayKey, func(m []string) string { return m[1] + " " + m[2] }); len(play) > 0 {
		charts = append(charts, chartSpec{ID: "val-play", Title: "Validation format and play by tag", Source: "val", Series: play, YSpan: []float64{0, 1}})
	}
	charts = append(charts, trainCharts...)
	if recorded(runs, "train/think/tokens_mean") {
		charts = append(charts, reasoningCharts...)
	}
	return charts
}

// recorded says whether any run's training lines hold key.
func recorded(runs []*Run, key string) bool {
	for _, r := range runs {
		for _, row := range r.Metrics.Train {
			if _, ok := row[key]; ok {
				return true
			}
		}
	}
	return false
}

// valSeries is one series per validation key matching re, sorted by key.
func valSeries(runs []*Run, re *regexp.Regexp, label func([]string) string) []seriesSpec {
	seen := map[string]string{}
	for _, r := range runs {
		for _, row := range r.Metrics.Val {
			for k := range row {
				if m := re.FindStringSubmatch(k); m != nil {
					seen[k] = label(m)
				}
			}
		}
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]seriesSpec, len(keys))
	for i, k := range keys {
		out[i] = seriesSpec{Key: k, Label: seen[k]}
	}
	return out
}

// warning is a training step at which one or more warn/ metrics fired.
type warning struct {
	Step  float64  `json:"step"`
	Kinds []string `json:"kinds"` // warn/ keys without the prefix, sorted
}

// warnings lists the steps of rows with a non-zero warn/ key.
func warnings(rows []Row) []warning {
	var out []warning
	for _, r := range rows {
		var kinds []string
		for k, v := range r {
			if name, ok := strings.CutPrefix(k, "warn/"); ok && v != 0 {
				kinds = append(kinds, name)
			}
		}
		if len(kinds) > 0 {
			sort.Strings(kinds)
			out = append(out, warning{Step: r["step"], Kinds: kinds})
		}
	}
	return out
}

// chartRows keeps only what the charts draw: step, the charted keys and the
// warn/ keys, so the page does not carry every metric.
func chartRows(rows []Row, charts []chartSpec) []Row {
	want := map[string]bool{"step": true}
	for _, c := range charts {
		for _, s := range c.Series {
			want[s.Key] = true
		}
	}
	out := make([]Row, len(rows))
	for i, r := range rows {
		kept := Row{}
		for k, v := range r {
			if want[k] || strings.HasPrefix(k, "warn/") {
				kept[k] = v
			}
		}
		out[i] = kept
	}
	return out
}
