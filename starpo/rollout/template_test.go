package rollout

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ragen-go/ragen/tokenizer"
	"github.com/ragen-go/ragen/tokenizer/tokenizertest"
)

// TestOtherChatTemplates plays a three-turn episode with the chat templates
// of Llama 3.2 (its own header and end-of-turn tokens, a date line, trimmed
// contents) and SmolLM2 (ChatML, read from its GGUF file). At every turn
// the prompt decodes to the template's render of the conversation, each
// prompt and its sample lie where the final sequence has them, the final
// sequence decodes to the template's render of the whole episode, and the
// mask is exactly the samples.
func TestOtherChatTemplates(t *testing.T) {
	for _, tc := range []struct {
		name, stop string
		load       func(testing.TB) (*tokenizer.Tokenizer, error)
	}{
		{"llama3.2", "<|eot_id|>", func(tb testing.TB) (*tokenizer.Tokenizer, error) {
			return tokenizer.Load(tokenizertest.LlamaPath(tb))
		}},
		{"smollm2", "<|im_end|>", func(tb testing.TB) (*tokenizer.Tokenizer, error) {
			return tokenizer.Load(tokenizertest.SmolLM2Path(tb))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tok, err := tc.load(t)
			if err != nil {
				t.Fatal(err)
			}
			stop, ok := tok.TokenID(tc.stop)
			if !ok {
				t.Fatalf("%s has no %s", tok.Path(), tc.stop)
			}
			m, err := NewManager(testConfig("SimpleSokoban", 1, 1), tok)
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Reset(7); err != nil {
				t.Fatal(err)
			}
			decode := func(ids []int) string {
				s, err := tok.Decode(ids)
				if err != nil {
					t.Fatal(err)
				}
				return s
			}
			replies := []struct {
				text string
				stop bool
			}{
				{"Left looks free.</think><answer>Left</answer>", true},
				{"Hmm.</think><answer>Up || Down</answer>", false}, // stopped on </answer>
				{"The box 空格 é is", false},                         // cut off by length
			}
			var prompts [][]int
			var gens []Generation
			for turn, r := range replies {
				ids, err := m.Prompt(0)
				if err != nil {
					t.Fatal(err)
				}
				msgs, err := m.PromptMessages(0)
				if err != nil {
					t.Fatal(err)
				}
				want, err := tok.RenderPrompt(msgs, true)
				if err != nil {
					t.Fatal(err)
				}
				if got := decode(ids); got != want {
					t.Fatalf("turn %d prompt:\n got %q\nwant %q", turn+1, got, want)
				}
				prompts = append(prompts, ids)
				g := Generation{IDs: tok.Encode(r.text)}
				if r.stop {
					g.IDs = append(g.IDs, stop)
				}
				g.LogProbs = make([]float32, len(g.IDs))
				for j := range g.LogProbs {
					g.LogProbs[j] = -float32(turn*100+j+1) / 64
				}
				g.Text, _ = tok.DecodeSkipSpecial(g.IDs)
				gens = append(gens, g)
				if err := m.Apply(0, g); err != nil {
					t.Fatal(err)
				}
				if len(m.Active()) == 0 {
					break
				}
			}
			trajs, err := m.Trajectories()
			if err != nil {
				t.Fatal(err)
			}
			tr := trajs[0]
			checkSequence(t, tr.Sequence, gens)
			for k, p := range prompts {
				sample := tr.IDs[len(p) : len(p)+len(gens[k].IDs)]
				if !slices.Equal(tr.IDs[:len(p)], p) || !slices.Equal(sample, gens[k].IDs) {
					t.Fatalf("turn %d's prompt and sample are not where the trajectory has them", k+1)
				}
			}
			want, err := tok.RenderChat(tr.Messages, false)
			if err != nil {
				t.Fatal(err)
			}
			if got := decode(tr.IDs); got != want {
				t.Fatalf("decoded trajectory differs from the template's render:\n got %q\nwant %q", got, want)
			}
			if !strings.HasSuffix(want, tc.stop+"\n") && !strings.HasSuffix(want, tc.stop) {
				t.Errorf("the trajectory should end with the template's end of turn %s: %q",
					tc.stop, want[max(0, len(want)-40):])
			}
		})
	}
}

// A template that rewrites assistant contents, or renders earlier turns
// differently once a turn is added, is refused with a sentence naming the
// tokenizer.
func TestTemplateRefused(t *testing.T) {
	base := testTokenizer(t)
	for _, tc := range []struct{ name, template, want string }{
		{"rewrites contents", `{% for m in messages %}{{ m.role }}: {{ m.content | upper }}{% endfor %}` +
			`{% if add_generation_prompt %}A:{% endif %}`,
			"does not render an assistant message's content exactly once and unchanged"},
		{"moves the last turn", `{% for m in messages %}{% if loop.last %}[last]{% endif %}{{ m.role }}: {{ m.content }}
{% endfor %}{% if add_generation_prompt %}assistant: {% endif %}`,
			"renders a conversation's earlier turns differently"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tok := withTemplate(t, base, tc.template)
			_, err := NewManager(testConfig("SimpleSokoban", 1, 1), tok)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tok.Path()) {
				t.Fatalf("err = %v, want one saying %q and naming %s", err, tc.want, tok.Path())
			}
		})
	}
}

// withTemplate is base's tokenizer.json with template as its chat template
// (chat_template.jinja beside it).
func withTemplate(t *testing.T, base *tokenizer.Tokenizer, template string) *tokenizer.Tokenizer {
	t.Helper()
	dir := t.TempDir()
	data, err := os.ReadFile(base.Path())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "chat_template.jinja"), []byte(template), 0o644); err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}
