package rollout

import (
	"slices"
	"strings"
	"testing"

	"github.com/ragen-go/ragen/envs"
)

// The think's sampled ids stop before </think>, however the tag was
// tokenised, and decode to the think's text.
func TestThinkIDs(t *testing.T) {
	tok := testTokenizer(t)
	for _, text := range []string{
		"The goal is below me. I will go Down</think><answer>Down</answer>",
		" the box is right of me.</think><answer>Right</answer>",
		"</think><answer>Up</answer>",
	} {
		ids := tok.Encode(text)
		think := text[:strings.Index(text, "</think>")]
		got := thinkIDs(tok, ids, think)
		s, err := tok.DecodeSkipSpecial(got)
		if err != nil {
			t.Fatal(err)
		}
		if s != think[:len(s)] || len(think)-len(s) > 2 {
			t.Errorf("%q: think ids decode to %q, want (nearly all of) %q", text, s, think)
		}
		if !slices.Equal(got, ids[:len(got)]) {
			t.Errorf("%q: think ids %v are not a prefix of the generation %v", text, got, ids)
		}
	}
}

// The diagnostics over hand-made turns: lengths, empties, repeats, and the
// checks' shares, each over the turns it can be measured on.
func TestThinkMetrics(t *testing.T) {
	turn := func(think string, tokens int, c envs.Reasoning, agree int) TurnThink {
		return TurnThink{Think: think, Closed: true, Tokens: tokens, Check: c, Agree: agree}
	}
	claims := envs.Reasoning{Checked: true, Claims: 2, TrueClaims: 1}
	plan := envs.Reasoning{Checked: true, Commits: []string{"Up"}, PlanChecked: true, PlanLegal: true, PlanProgress: 0.5}
	bad := envs.Reasoning{Checked: true, Commits: []string{"Left"}, PlanChecked: true}
	trajs := []Trajectory{
		{Turns: []TurnThink{turn("a b", 4, claims, 0), turn("a  b", 6, plan, 1)},
			ReasoningReward: ReasoningReward{Consistency: 0.1, Claims: 0.2}},
		{Turns: []TurnThink{turn("", 0, envs.Reasoning{}, 0), turn("c", 2, bad, -1), turn("d", 8, claims, 0)},
			ReasoningReward: ReasoningReward{Consistency: -0.1, Plan: -0.3}},
	}
	got := thinkMetrics(trajs)
	want := Metrics{
		"think/tokens_mean": 4, "think/tokens_median": 4, "think/empty_share": 0.2,
		"think/repeat_share":     1.0 / 3, // "a  b" repeats "a b"; "c" and "d" do not
		"reasoning/commit_turns": 0.4, "reasoning/agreement": 0.5,
		"reasoning/claim_turns": 0.4, "reasoning/claim_accuracy": 0.5,
		"reasoning/plan_turns": 0.4, "reasoning/plan_legal": 0.5, "reasoning/plan_progress": 0.25,
		"reward/reasoning/consistency": 0, "reward/reasoning/claims": 0.1, "reward/reasoning/plan": -0.15,
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || !near(g, v) {
			t.Errorf("%s = %v (present %v), want %v", k, g, ok, v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d metrics, want %d: %v", len(got), len(want), got)
	}
	if m := thinkMetrics([]Trajectory{{}}); len(m) != 0 {
		t.Errorf("no recorded turn (thinking off) gave metrics %v", m)
	}
}

func near(a, b float64) bool { return a-b < 1e-12 && b-a < 1e-12 }

// The reasoning reward is scored on the state the think was written in
// (before the answer's actions run), weighted per term, and enters the
// score: a grounded think whose answer follows its plan, and the same
// think with an answer that contradicts it.
func TestReasoningReward(t *testing.T) {
	w := Reasoning{Consistency: 0.1, Claims: 0.05, Plan: 0.2}
	cfg := testConfig("FrozenLake", 1, 2)
	cfg.Reasoning, cfg.MaxTurn, cfg.MaxActionsPerTurn = w, 1, 1
	m := newTestManager(t, cfg, 10000)
	env, _ := m.Env(0)
	plan := env.(envs.Policy).PolicyPlan(1)
	other := "Left"
	if plan[0] == other {
		other = "Right"
	}
	think := env.(envs.ThinkWriter).GroundedThink(plan, 0)
	check := envs.Reason(env, think) // the reset state, as the turn will see it
	if check.Claims == 0 || check.TrueClaims != check.Claims || !slices.Equal(check.Commits, plan) || !check.PlanChecked {
		t.Fatalf("grounded think %q checks as %+v", think, check)
	}
	trajs, met, err := m.Run(scripted(t, m, func(i, _ int) answer {
		a := plan[0]
		if i == 1 {
			a = other
		}
		return answer{text: think + "</think><answer>" + a + "</answer>", imEnd: true}
	}))
	if err != nil {
		t.Fatal(err)
	}
	claims := w.Claims * float64(min(check.Claims, ClaimsCap))
	planR := w.Plan * check.PlanProgress
	if !check.PlanLegal {
		planR = -w.Plan
	}
	for i, c := range []struct {
		agree int
		want  ReasoningReward
	}{{1, ReasoningReward{0.1, claims, planR}}, {-1, ReasoningReward{-0.1, claims, planR}}} {
		tr := trajs[i]
		if len(tr.Turns) != 1 || tr.Turns[0].Agree != c.agree || tr.ReasoningReward != c.want {
			t.Fatalf("env %d: turns %+v, reward %+v, want agree %d and %+v", i, tr.Turns, tr.ReasoningReward, c.agree, c.want)
		}
		if !near(tr.Score, sumOf(tr.TurnRewards)+tr.Penalty+c.want.Sum()) || !near(tr.Shaping, c.want.Sum()) {
			t.Fatalf("env %d: score %v, shaping %v, reward %+v", i, tr.Score, tr.Shaping, c.want)
		}
		if tr.Turns[0].Tokens == 0 || len(tr.Turns[0].Prompt) == 0 {
			t.Fatalf("env %d: the turn kept %d think tokens and a %d-id prompt", i, tr.Turns[0].Tokens, len(tr.Turns[0].Prompt))
		}
	}
	if met["reasoning/agreement"] != 0.5 || met["reasoning/claim_accuracy"] != 1 {
		t.Fatalf("metrics %v", met)
	}
}
