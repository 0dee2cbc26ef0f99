package rollout

import (
	"strings"
	"sync"
	"testing"

	"github.com/ragen-go/ragen/envs"
	"github.com/ragen-go/ragen/tokenizer"
	"github.com/ragen-go/ragen/tokenizer/tokenizertest"
)

// The test vocabulary is Qwen's real one, loaded once per test binary.
var vocab struct {
	once sync.Once
	tok  *tokenizer.Tokenizer
	err  error
}

func testTokenizer(tb testing.TB) *tokenizer.Tokenizer {
	tb.Helper()
	p := tokenizertest.Path(tb)
	vocab.once.Do(func() { vocab.tok, vocab.err = tokenizer.Load(p) })
	if vocab.err != nil {
		tb.Fatalf("loading the test vocabulary: %v", vocab.err)
	}
	return vocab.tok
}

// testConfig is one tag with groups × size environments and RAGEN's defaults.
func testConfig(tag string, groups, size int) Config {
	c := DefaultConfig()
	c.Tags, c.NGroups, c.EnvGroups, c.GroupSize = []string{tag}, []int{groups}, groups, size
	return c
}

func newTestManager(t *testing.T, cfg Config, seed int64) *Manager {
	t.Helper()
	m, err := NewManager(cfg, testTokenizer(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Reset(seed); err != nil {
		t.Fatal(err)
	}
	return m
}

// answer is a scripted reply: the text after the generation prefix, and
// whether sampling stopped on a sampled <|im_end|>.
type answer struct {
	text  string
	imEnd bool
}

// generation encodes a scripted reply as a sampler would return it, with
// made-up log-probs that identify env, turn and position.
func generation(tb testing.TB, tok *tokenizer.Tokenizer, env, turn int, a answer) Generation {
	tb.Helper()
	ids := tok.Encode(a.text)
	if a.imEnd {
		id, _ := tok.TokenID("<|im_end|>")
		ids = append(ids, id)
	}
	lp := make([]float32, len(ids))
	for j := range lp {
		lp[j] = -float32(env*10000+turn*1000+j+1) / 1024
	}
	text, err := tok.DecodeSkipSpecial(ids)
	if err != nil {
		tb.Fatal(err)
	}
	return Generation{IDs: ids, LogProbs: lp, Text: text}
}

// scripted is a Generator double for the model: script gives environment
// i's reply at turn (0-based). It relies on Run prompting Active() in order.
func scripted(tb testing.TB, m *Manager, script func(i, turn int) answer) Generator {
	turn := 0
	return func(prompts [][]int) ([]Generation, error) {
		idx := m.Active()
		if len(idx) != len(prompts) {
			tb.Fatalf("turn %d: %d prompts for %d active envs", turn, len(prompts), len(idx))
		}
		gens := make([]Generation, len(idx))
		for k, i := range idx {
			gens[k] = generation(tb, m.tok, i, turn, script(i, turn))
		}
		turn++
		return gens, nil
	}
}

// solverAnswer replies with the next (up to 5) actions of a shortest
// solution from environment i's current state.
func solverAnswer(tb testing.TB, m *Manager, i int) answer {
	sol, ok := m.envs[i].env.(envs.Solver).Solve()
	if !ok {
		tb.Fatalf("env %d: no solution", i)
	}
	sol = sol[:min(len(sol), m.cfg.MaxActionsPerTurn)]
	return answer{text: "Follow the plan.</think><answer>" + strings.Join(sol, " || ") + "</answer>", imEnd: true}
}

// garbage is a reply that does not match the format.
var garbage = answer{text: "I am not sure what to do here", imEnd: true}
