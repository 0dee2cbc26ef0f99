package rollout

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ragen-go/ragen/envs"
)

func TestConfigValidate(t *testing.T) {
	for name, edit := range map[string]func(*Config){
		"no tags":      func(c *Config) { c.Tags, c.NGroups = nil, nil },
		"ngroups len":  func(c *Config) { c.NGroups = []int{4, 4} },
		"ngroups sum":  func(c *Config) { c.EnvGroups = 9 },
		"zero groups":  func(c *Config) { c.NGroups, c.EnvGroups = []int{0}, 0 },
		"group size":   func(c *Config) { c.GroupSize = 0 },
		"max turn":     func(c *Config) { c.MaxTurn = 0 },
		"actions/turn": func(c *Config) { c.MaxActionsPerTurn = 0 },
		"window zero":  func(c *Config) { c.MaxContextWindow = 0 },
		"window -2":    func(c *Config) { c.MaxContextWindow = -2 },
	} {
		c := DefaultConfig()
		edit(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%s: Validate accepted %+v", name, c)
		}
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	c := DefaultConfig()
	c.Tags = []string{"NoSuchTag"}
	if _, err := NewManager(c, testTokenizer(t)); err == nil || !strings.Contains(err.Error(), "NoSuchTag") {
		t.Fatalf("unknown tag: err %v", err)
	}
}

// TestSeedsPerGroup: ids are consecutive across tags, group g starts from
// seed base+g with every member in the same state, and training bases
// advance by EnvGroups per step.
func TestSeedsPerGroup(t *testing.T) {
	cfg := Config{
		Tags: []string{"SimpleSokoban", "FrozenLake"}, NGroups: []int{2, 1}, EnvGroups: 3, GroupSize: 3,
		Seed: 7, MaxTurn: 5, MaxActionsPerTurn: 5, EnableThink: true, FormatPenalty: -0.1, MaxContextWindow: -1,
	}
	if got := []int64{cfg.TrainSeed(0), cfg.TrainSeed(1), cfg.TrainSeed(2)}; !reflect.DeepEqual(got, []int64{7, 10,
		13}) {
		t.Fatalf("train seeds %v, want [7 10 13]", got)
	}
	m := newTestManager(t, cfg, cfg.TrainSeed(1))
	if m.Len() != 9 {
		t.Fatalf("%d envs, want 9", m.Len())
	}
	trajs, err := m.Trajectories()
	if err != nil {
		t.Fatal(err)
	}
	for i, tr := range trajs {
		wantTag := "SimpleSokoban"
		if i >= 6 {
			wantTag = "FrozenLake"
		}
		if tr.EnvID != i || tr.GroupID != i/3 || tr.Seed != 10+int64(i/3) || tr.Tag != wantTag {
			t.Errorf("env %d: id %d group %d seed %d tag %s", i, tr.EnvID, tr.GroupID, tr.Seed, tr.Tag)
		}
		if first := m.History(i / 3 * 3)[0].State; m.History(i)[0].State != first {
			t.Errorf("env %d starts from a different state than its group's first member", i)
		}
	}
	if m.History(0)[0].State == m.History(3)[0].State {
		t.Error("groups 0 and 1 start from the same Sokoban level")
	}
}

// TestSolvedSokobanSucceeds answers with the BFS solution: the episode ends
// by the env's done, with success, no penalty and the rewards summed.
func TestSolvedSokobanSucceeds(t *testing.T) {
	m := newTestManager(t, testConfig("SimpleSokoban", 2, 2), 10000)
	trajs, met, err := m.Run(scripted(t, m, func(i, _ int) answer { return solverAnswer(t, m, i) }))
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range trajs {
		st := m.Status(tr.EnvID)
		if !tr.Success || !st.Terminated || st.Truncated || tr.Penalty != 0 {
			t.Errorf("env %d: success %v status %+v", tr.EnvID, tr.Success, st)
		}
		sum := 0.0
		for _, r := range tr.TurnRewards {
			sum += r
		}
		if tr.Score != sum || tr.TurnRewards[len(tr.TurnRewards)-1] < 10 {
			t.Errorf("env %d: score %v, turn rewards %v", tr.EnvID, tr.Score, tr.TurnRewards)
		}
		if tr.ActionIsValid != 1 {
			t.Errorf("env %d: action_is_valid %v", tr.EnvID, tr.ActionIsValid)
		}
	}
	if met["SimpleSokoban/success"] != 1 || met["SimpleSokoban/pass@2"] != 1 {
		t.Fatalf("metrics %v", met)
	}
}

// TestGarbageAnswers: unparsable replies cost the penalty each turn, show
// reward 0, and after max_turn the episode is still not terminated.
func TestGarbageAnswers(t *testing.T) {
	m := newTestManager(t, testConfig("SimpleSokoban", 1, 1), 3)
	trajs, met, err := m.Run(scripted(t, m, func(int, int) answer { return garbage }))
	if err != nil {
		t.Fatal(err)
	}
	tr, st := trajs[0], m.Status(0)
	if st.Terminated || st.Truncated || tr.Success || len(tr.TurnRewards) != 5 || tr.NumActions != 0 {
		t.Fatalf("status %+v, trajectory turns %d", st, len(tr.TurnRewards))
	}
	if math.Abs(tr.Penalty-(-0.5)) > 1e-12 || math.Abs(tr.Score-(-0.5)) > 1e-12 {
		t.Fatalf("penalty %v score %v, want -0.5", tr.Penalty, tr.Score)
	}
	if len(m.Active()) != 1 {
		t.Fatal("the env should still be active after max_turn")
	}
	if text := decode(t, tr.IDs); strings.Count(text, "Reward:\n0\n\nTurn ") != 4 {
		t.Fatalf("want four \"Reward:\\n0\" blocks in %q", text)
	}
	if met["SimpleSokoban/action_is_valid"] != 0 || met["SimpleSokoban/num_actions"] != 0 {
		t.Fatalf("metrics %v", met)
	}
}

// TestTooManyActions: with 4 actions per turn and 10 per episode, the third
// turn runs only 2 of its 4 actions and the episode ends truncated.
func TestTooManyActions(t *testing.T) {
	cfg := testConfig("SimpleSokoban", 1, 1)
	cfg.MaxActionsPerTurn = 4
	m := newTestManager(t, cfg, 5)
	reply := answer{text: "</think><answer>Left || Right || Left || Right || Up || Up</answer>", imEnd: true}
	trajs, _, err := m.Run(scripted(t, m, func(int, int) answer { return reply }))
	if err != nil {
		t.Fatal(err)
	}
	tr, st, h := trajs[0], m.Status(0), m.History(0)
	if !st.Terminated || !st.Truncated || tr.Success || tr.NumActions != 10 || len(tr.TurnRewards) != 3 {
		t.Fatalf("status %+v, turns %d", st, len(tr.TurnRewards))
	}
	if len(h[0].Actions) != 4 || len(h[2].Actions) != 2 || h[3].ActionsLeft != 0 {
		t.Fatalf("executed %v / %v, actions left %d", h[0].Actions, h[2].Actions, h[3].ActionsLeft)
	}
	if tr.Penalty != 0 {
		t.Fatalf("penalty %v for valid actions", tr.Penalty)
	}
}

// TestMetrics runs a tiny scripted batch: in group 0 env 0 solves and env 1
// babbles, group 1 babbles. success 1/4, pass@2 1/2.
func TestMetrics(t *testing.T) {
	m := newTestManager(t, testConfig("SimpleSokoban", 2, 2), 10000)
	trajs, met, err := m.Run(scripted(t, m, func(i, _ int) answer {
		if i == 0 {
			return solverAnswer(t, m, i)
		}
		return garbage
	}))
	if err != nil {
		t.Fatal(err)
	}
	tokens := 0
	for _, tr := range trajs {
		tokens += tr.ResponseTokens
	}
	t0 := trajs[0]
	want := Metrics{
		"SimpleSokoban/success":             0.25,
		"SimpleSokoban/pass@2":              0.5,
		"SimpleSokoban/num_actions":         float64(t0.NumActions) / 4,
		"SimpleSokoban/action_is_valid":     1.0 / 4,
		"SimpleSokoban/action_is_effective": t0.ActionIsEffective / 4,
		"SimpleSokoban/valid_episodes":      1.0 / 4, // the solver's episode
		"SimpleSokoban/success_in_valid":    1,       // and it succeeded
		"response_length":                   float64(tokens) / 4,
		"reward/env":                        sumOf(t0.TurnRewards) / 4,
		"reward/format_penalty":             3 * 5 * -0.1 / 4, // 3 babblers × 5 turns
		"reward/shaping":                    0,
		"reward/format_penalty_turns":       15.0 / 16, // of 1 solver turn + 15
		"reward/think_bonus_turns":          1.0 / 16,  // the solver's turn qualifies (the bonus is 0)
		"reward/empty_think_turns":          0,
		"reward/long_think_turns":           0,
		// The solver's think, "Follow the plan.", is 4 tokens; the 15
		// babbling turns never close a think. It claims and commits to
		// nothing ("plan" is followed by no action).
		"think/tokens_mean": 4.0 / 16, "think/tokens_median": 0, "think/empty_share": 15.0 / 16,
		"reasoning/commit_turns": 0, "reasoning/claim_turns": 0, "reasoning/plan_turns": 0,
		"reward/reasoning/consistency": 0, "reward/reasoning/claims": 0, "reward/reasoning/plan": 0,
	}
	if len(t0.TurnRewards) != 1 {
		t.Fatalf("the solver took %d turns, want 1", len(t0.TurnRewards))
	}
	if !reflect.DeepEqual(met, want) {
		t.Fatalf("metrics\n got %v\nwant %v", met, want)
	}
	if t0.ActionIsEffective != 1 {
		t.Fatalf("solver moves should all be effective: %v", t0.ActionIsEffective)
	}
}

// TestRunDeterministic: a larger batch stepped concurrently (run it with
// -race) gives the same trajectories twice for the same seed.
func TestRunDeterministic(t *testing.T) {
	run := func() []Trajectory {
		m := newTestManager(t, testConfig("SimpleSokoban", 4, 8), 42)
		trajs, _, err := m.Run(scripted(t, m, func(i, turn int) answer {
			if (i+turn)%3 == 0 {
				return garbage
			}
			return solverAnswer(t, m, i)
		}))
		if err != nil {
			t.Fatal(err)
		}
		return trajs
	}
	a, b := run(), run()
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two runs from the same seed differ")
	}
	if _, _, err := (&Manager{}).Run(nil); err == nil {
		t.Fatal("Run without Reset succeeded")
	}
}

// TestContextWindow: with a window of 2 the turn-3 prompt shows turns 2 and
// 3 renumbered 1 and 2, and each turn is its own sequence whose prefix is
// the prompt it was sampled from, trained only on its own sample.
func TestContextWindow(t *testing.T) {
	cfg := testConfig("SimpleSokoban", 1, 1)
	cfg.MaxContextWindow = 2
	m := newTestManager(t, cfg, 3)
	var prompts [][]int
	var gens []Generation
	for turn := range 3 {
		p := checkPrompt(t, m, 0)
		text := decode(t, p)
		if want := min(turn+1, 2); strings.Count(text, "\nTurn ") != want || strings.Contains(text, "Turn 3:") {
			t.Fatalf("turn %d prompt shows the wrong turns:\n%s", turn+1, text)
		}
		prompts = append(prompts, p)
		g := generation(t, m.tok, 0, turn, garbage)
		gens = append(gens, g)
		if err := m.Apply(0, g); err != nil {
			t.Fatal(err)
		}
	}
	trajs, err := m.Trajectories()
	if err != nil {
		t.Fatal(err)
	}
	tr := trajs[0]
	if len(tr.IDs) != 0 || len(tr.PerTurn) != 3 {
		t.Fatalf("%d ids and %d per-turn sequences", len(tr.IDs), len(tr.PerTurn))
	}
	for k, s := range tr.PerTurn {
		if !reflect.DeepEqual(s.IDs[:len(prompts[k])], prompts[k]) {
			t.Fatalf("turn %d: sequence does not start with its prompt", k+1)
		}
		checkSequence(t, s, gens[k:k+1])
	}
}

func sumOf(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s
}

// The shaping terms: a bounded non-empty think before a valid answer earns
// the bonus, an empty or runaway one the penalties; all land in the score
// and in the metrics.
func TestShaping(t *testing.T) {
	sh := Shaping{ThinkBonus: 0.5, EmptyThinkPenalty: -0.3, LongThinkPenalty: -0.2, ThinkMaxWords: 4}
	env, err := envs.New("SimpleSokoban")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		text string
		want float64
		term string
	}{
		{"push the box right</think><answer>Right</answer>", 0.5, "bonus"},
		{"</think><answer>Right</answer>", -0.3, "empty"},
		{"one two three four five</think><answer>Right</answer>", -0.2, "long"},
		{"fine</think><answer>Jump</answer>", 0, ""}, // invalid action: no bonus
		{"no answer at all", 0, ""},                  // format failed: RAGEN's penalty only
	} {
		got, term := sh.Turn(envs.ParseResponse(c.text, true, 5, env), true)
		if got != c.want || term != c.term {
			t.Errorf("%q: shaping %v (%q), want %v (%q)", c.text, got, term, c.want, c.term)
		}
	}
	cfg := testConfig("SimpleSokoban", 1, 2)
	cfg.Shaping, cfg.MaxTurn = sh, 1
	m := newTestManager(t, cfg, 10000)
	trajs, met, err := m.Run(scripted(t, m, func(i, _ int) answer {
		if i == 0 {
			return solverAnswer(t, m, i)
		}
		return answer{text: "</think><answer>Up</answer>", imEnd: true}
	}))
	if err != nil {
		t.Fatal(err)
	}
	if trajs[1].Shaping != -0.3 || trajs[1].Score != sumOf(trajs[1].TurnRewards)+trajs[1].Penalty-0.3 {
		t.Fatalf("empty-think trajectory: shaping %v score %v", trajs[1].Shaping, trajs[1].Score)
	}
	if met["reward/empty_think_turns"] != 0.5 || met["reward/shaping"] != (trajs[0].Shaping-0.3)/2 {
		t.Fatalf("metrics %v", met)
	}
}

// TestShards: the shards of a data-parallel job play exactly the
// environments of the whole batch, under the same ids and seeds, so their
// trajectories together are the single process's, in env-id order.
func TestShards(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Tags, cfg.NGroups, cfg.EnvGroups, cfg.GroupSize = []string{"SimpleSokoban", "FrozenLake"}, []int{3, 2}, 5, 2
	play := func(c Config) []Trajectory {
		m := newTestManager(t, c, 7)
		gen := func(turn int) Generator {
			return func(prompts [][]int) ([]Generation, error) {
				gens := make([]Generation, len(prompts))
				for k, i := range m.Active() {
					id := m.envs[i].id // the script follows the global env id
					a := garbage
					if (id+turn)%2 == 0 && m.envs[i].tag == "SimpleSokoban" {
						a = solverAnswer(t, m, i)
					}
					gens[k] = generation(t, m.tok, id, turn, a)
				}
				return gens, nil
			}
		}
		turn := 0
		trajs, _, err := m.Run(func(p [][]int) ([]Generation, error) { turn++; return gen(turn - 1)(p) })
		if err != nil {
			t.Fatal(err)
		}
		return trajs
	}
	whole := play(cfg)
	for _, world := range []int{2, 3} {
		var joined []Trajectory
		for r := range world {
			c := cfg
			c.Shard = Shard{Rank: r, World: world}
			joined = append(joined, play(c)...)
		}
		slices.SortFunc(joined, func(a, b Trajectory) int { return a.EnvID - b.EnvID })
		if !reflect.DeepEqual(joined, whole) {
			t.Errorf("world %d: the shards' trajectories differ from the whole batch's", world)
		}
	}
	c := cfg
	c.Shard = Shard{Rank: 1, World: 6}
	if err := c.Validate(); err != nil {
		t.Errorf("rank 1 of 6 for 3+2 groups gets one: %v", err)
	}
	c.Shard = Shard{Rank: 0, World: 6}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "gets no environment group") {
		t.Errorf("rank 0 of 6 with 3+2 groups: %v", err)
	}
}
