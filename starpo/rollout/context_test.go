package rollout

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ragen-go/ragen/envs"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// decode is the text of ids, special tokens included.
func decode(t *testing.T, ids []int) string {
	t.Helper()
	s, err := testTokenizer(t).Decode(ids)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// checkPrompt holds Prompt's ids to RenderPrompt of PromptMessages.
func checkPrompt(t *testing.T, m *Manager, i int) []int {
	t.Helper()
	ids, err := m.Prompt(i)
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := m.PromptMessages(i)
	if err != nil {
		t.Fatal(err)
	}
	want, err := m.tok.RenderPrompt(msgs, m.cfg.EnableThink)
	if err != nil {
		t.Fatal(err)
	}
	if got := decode(t, ids); got != want {
		t.Fatalf("env %d: decoded prompt differs from RenderChat:\n got %q\nwant %q", i, got, want)
	}
	return ids
}

// checkSequence holds a trained sequence to the replies it was built from:
// the mask marks exactly the sampled ids, in order, with their log-probs,
// and each turn end is its turn's last sampled token.
func checkSequence(t *testing.T, s Sequence, gens []Generation) {
	t.Helper()
	if len(s.LossMask) != len(s.IDs) || len(s.OldLogProbs) != len(s.IDs) {
		t.Fatalf("lengths: %d ids, %d mask, %d log-probs", len(s.IDs), len(s.LossMask), len(s.OldLogProbs))
	}
	var ids []int
	var lps []float64
	var ends []int
	for _, g := range gens {
		ids = append(ids, g.IDs...)
		for _, lp := range g.LogProbs {
			lps = append(lps, float64(lp))
		}
	}
	var gotIDs []int
	var gotLPs []float64
	for j, mk := range s.LossMask {
		switch mk {
		case 1:
			gotIDs = append(gotIDs, s.IDs[j])
			gotLPs = append(gotLPs, s.OldLogProbs[j])
		case 0:
			if s.OldLogProbs[j] != 0 {
				t.Fatalf("position %d: untrained but old log-prob %v", j, s.OldLogProbs[j])
			}
		default:
			t.Fatalf("position %d: mask %v", j, mk)
		}
	}
	if !slices.Equal(gotIDs, ids) || !slices.Equal(gotLPs, lps) {
		t.Fatalf("masked ids/log-probs differ from the sampled ones:\n got %v\nwant %v", gotIDs, ids)
	}
	n := 0
	for _, g := range gens {
		n += len(g.IDs)
		// the n-th trained position is the turn's last sampled token
		for j, c := 0, 0; j < len(s.LossMask); j++ {
			if s.LossMask[j] == 1 {
				if c++; c == n {
					ends = append(ends, j)
					break
				}
			}
		}
	}
	if !slices.Equal(s.TurnEnds, ends) {
		t.Fatalf("turn ends %v, want %v", s.TurnEnds, ends)
	}
}

// TestGoldenSokobanTwoTurns pins the text of a two-turn Sokoban episode: the
// turn-2 prompt and the update sequence. The anchors below are RAGEN's layout
// (docs/ragen.md#prompts) written out by hand, so the golden file cannot drift
// from it.
func TestGoldenSokobanTwoTurns(t *testing.T) {
	m := newTestManager(t, testConfig("SimpleSokoban", 1, 1), 10000)
	sol, ok := m.envs[0].env.(envs.Solver).Solve()
	if !ok || len(sol) < 2 {
		t.Fatalf("seed 10000: solution %v (ok %v), want at least 2 moves", sol, ok)
	}
	replies := []answer{
		{text: "The box is next to me.</think><answer>" + sol[0] + "</answer>"}, // stopped on </answer>
		garbage,
	}
	var gens []Generation
	for turn, r := range replies {
		checkPrompt(t, m, 0)
		g := generation(t, m.tok, 0, turn, r)
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
	checkSequence(t, tr.Sequence, gens)
	final := decode(t, tr.IDs)
	want, err := m.tok.RenderChat(tr.Messages, false)
	if err != nil {
		t.Fatal(err)
	}
	if final != want {
		t.Fatalf("decoded trajectory differs from RenderChat:\n got %q\nwant %q", final, want)
	}

	h := m.History(0)
	block := func(e Entry) string {
		return "State:\n" + e.State + "\nYou have " + map[int]string{10: "10", 9: "9"}[e.ActionsLeft] +
			" actions left. Always output: <think> [Your thoughts] </think> <answer> [your answer] </answer>" +
			" with no extra text. Strictly follow this format. Max response length: 100 words (tokens).\n"
	}
	prefix, _ := envs.Prefix("SimpleSokoban")
	hand := "<|im_start|>system\nYou're a helpful assistant. <|im_end|>\n" +
		"<|im_start|>user\n" + prefix + "\nTurn 1:\n" + block(h[0]) + "<|im_end|>\n" +
		"<|im_start|>assistant\n<think>" + replies[0].text + "<|im_end|>\n" +
		"<|im_start|>user\nReward:\n" + envs.PyFloat(h[0].Reward) + "\n\nTurn 2:\n" + block(h[1]) + "<|im_end|>\n" +
		"<|im_start|>assistant\n<think>" + replies[1].text + "<|im_end|>\n"
	if final != hand {
		t.Fatalf("trajectory text differs from RAGEN's layout written out:\n got %q\nwant %q", final, hand)
	}
	if h[1].ActionsLeft != 9 || len(h[0].Actions) != 1 {
		t.Fatalf("after one move: actions left %d, actions %v", h[1].ActionsLeft, h[0].Actions)
	}

	golden := filepath.Join("testdata", "sokoban_two_turns.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(final), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pinned, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if final != string(pinned) {
		t.Errorf("trajectory text differs from %s:\n got %q\nwant %q", golden, final, pinned)
	}
}

// TestIDsMatchRenderChat plays a five-turn episode with replies that end in
// every way a sampler stops, and checks at every turn that the running ids
// decode to RAGEN's rendered chat byte for byte, that each prompt is a
// prefix of the final sequence, and that the mask is exactly the samples.
func TestIDsMatchRenderChat(t *testing.T) {
	for _, think := range []bool{true, false} {
		cfg := testConfig("SimpleSokoban", 1, 1)
		cfg.EnableThink = think
		m := newTestManager(t, cfg, 7)
		close := "</think><answer>"
		if !think {
			close = ""
		}
		replies := []answer{
			{text: "Hmm. " + close + "Jump</answer>", imEnd: true},      // unknown action
			{text: "Left or right?" + close + "Left || Right</answer>"}, // stopped on </answer>
			{text: "Let me think about the layout of the gr"},           // cut off by length
			{text: " 空格 é\n\n" + close + "Up</answer>", imEnd: true},    // non-ASCII, newlines
			garbage,
		}
		var prompts [][]int
		var gens []Generation
		for turn, r := range replies {
			if len(m.Active()) == 0 {
				break
			}
			prompts = append(prompts, checkPrompt(t, m, 0))
			g := generation(t, m.tok, 0, turn, r)
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
		want, err := m.tok.RenderChat(tr.Messages, false)
		if err != nil {
			t.Fatal(err)
		}
		if got := decode(t, tr.IDs); got != want {
			t.Fatalf("think %v: decoded trajectory differs from RenderChat:\n got %q\nwant %q", think, got, want)
		}
		for k, p := range prompts {
			if !slices.Equal(tr.IDs[:len(p)], p) || !slices.Equal(tr.IDs[len(p):len(p)+len(gens[k].IDs)], gens[k].IDs) {
				t.Fatalf("think %v: turn %d's prompt and sample are not where the trajectory has them", think, k+1)
			}
		}
		checkSequence(t, tr.Sequence, gens)
		n := 0
		for _, g := range gens {
			n += len(g.IDs)
		}
		if tr.ResponseTokens != n || len(tr.TurnEnds) != len(gens) {
			t.Fatalf("think %v: %d response tokens and %d turn ends, want %d and %d", think, tr.ResponseTokens,
				len(tr.TurnEnds), n, len(gens))
		}
		if !strings.HasSuffix(want, "<|im_end|>\n") {
			t.Fatalf("trajectory text should end with <|im_end|>\\n: %q", want[len(want)-20:])
		}
	}
}
