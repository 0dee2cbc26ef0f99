package envs

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestParseResponse(t *testing.T) {
	sokoban := mustNew(t, "SimpleSokoban")
	countdown := mustNew(t, "Countdown")
	mustReset(t, countdown, 0)
	tests := []struct {
		name     string
		env      Env
		think    bool
		text     string // as generated, after the <think> or <answer> prefix
		response string
		actions  []string
		valid    []string
		penalty  bool
	}{
		{
			name: "think and answer", env: sokoban, think: true,
			text:     " I should go right. </think> <answer> Right || Up </answer>",
			response: "<think>I should go right.</think><answer>Right || Up</answer>",
			actions:  []string{"Right", "Up"}, valid: []string{"Right", "Up"},
		},
		{
			name: "names ignore case", env: sokoban, think: true,
			text:     "x</think><answer>right||UP||down</answer>",
			response: "<think>x</think><answer>right||UP||down</answer>",
			actions:  []string{"right", "UP", "down"}, valid: []string{"Right", "Up", "Down"},
		},
		{
			name: "more than five actions keep the first five", env: sokoban, think: true,
			text:     "go</think><answer>Up||Up||Left||Left||Down||Right||Right</answer>",
			response: "<think>go</think><answer>Up || Up || Left || Left || Down</answer>",
			actions:  []string{"Up", "Up", "Left", "Left", "Down"}, valid: []string{"Up", "Up", "Left", "Left", "Down"},
		},
		{
			name: "an unknown action is dropped and penalised", env: sokoban, think: true,
			text:     "hm</think><answer>Up || Jump || Left</answer>",
			response: "<think>hm</think><answer>Up || Jump || Left</answer>",
			actions:  []string{"Up", "Jump", "Left"}, valid: []string{"Up", "Left"}, penalty: true,
		},
		{
			name: "no answer tag", env: sokoban, think: true,
			text:     "I will go Up",
			response: "<think>I will go Up", penalty: true,
		},
		{
			name: "answer without think when thinking is on", env: sokoban, think: true,
			text:     "</answer><answer>Up</answer>",
			response: "<think></answer><answer>Up</answer>", penalty: true,
		},
		{
			name: "without think", env: sokoban, think: false,
			text:     " Left </answer> trailing",
			response: "<answer>Left</answer>",
			actions:  []string{"Left"}, valid: []string{"Left"},
		},
		{
			name: "without think the first answer counts", env: sokoban, think: false,
			text:     "Jump</answer><answer>Up</answer>",
			response: "<answer>Jump</answer>",
			actions:  []string{"Jump"}, penalty: true,
		},
		{
			name: "special tokens are removed", env: sokoban, think: true,
			text:     "<|im_start|>a<think>b</think><answer><answer>Up<|im_end|></answer>",
			response: "<think>ab</think><answer>Up</answer>",
			actions:  []string{"Up"}, valid: []string{"Up"},
		},
		{
			name: "the shortest think that is followed by an answer", env: sokoban, think: true,
			text:     "a</think>b</think>\n\n<answer>Down</answer><answer>Up</answer>",
			response: "<think>ab</think><answer>Down</answer>", // inner </think> is a special token
			actions:  []string{"Down"}, valid: []string{"Down"},
		},
		{
			name: "unicode space counts as space", env: sokoban, think: true,
			text:     "a</think>\u3000<answer>\u00a0Up\u2003</answer>",
			response: "<think>a</think><answer>Up</answer>",
			actions:  []string{"Up"}, valid: []string{"Up"},
		},
		{
			name: "empty answer", env: sokoban, think: true,
			text:     "a</think><answer></answer>",
			response: "<think>a</think><answer></answer>", penalty: true,
		},
		{
			name: "free text passes through", env: countdown, think: true,
			text:     "3+5=8</think><answer> 74 + 62 - 44 </answer>",
			response: "<think>3+5=8</think><answer>74 + 62 - 44</answer>",
			actions:  []string{"74 + 62 - 44"}, valid: []string{"74 + 62 - 44"},
		},
		{
			name: "free text keeps its case", env: countdown, think: false,
			text:     "Up || x</answer>",
			response: "<answer>Up || x</answer>",
			actions:  []string{"Up", "x"}, valid: []string{"Up", "x"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := ParseResponse(tt.text, tt.think, 5, tt.env)
			prefix := "<answer>"
			if tt.think {
				prefix = "<think>"
			}
			if p.Raw != prefix+tt.text {
				t.Errorf("Raw = %q", p.Raw)
			}
			if p.Response != tt.response || !slices.Equal(p.Actions, tt.actions) || !slices.Equal(p.Valid, tt.valid) || p.FormatPenalty != tt.penalty {
				t.Errorf("got  %q %q %q penalty %v\nwant %q %q %q penalty %v",
					p.Response, p.Actions, p.Valid, p.FormatPenalty, tt.response, tt.actions, tt.valid, tt.penalty)
			}
		})
	}
}

func TestParseResponseBanditUsesDrawnNames(t *testing.T) {
	b := mustNew(t, "BanditTest")
	mustReset(t, b, 1)
	p := ParseResponse("Librarians are calm.</think><answer> librarian </answer>", true, 5, b)
	if !slices.Equal(p.Valid, []string{"Librarian"}) || p.FormatPenalty {
		t.Errorf("Valid %q penalty %v, want [Librarian] and no penalty", p.Valid, p.FormatPenalty)
	}
}

func TestParseResponseMaxActions(t *testing.T) {
	s := mustNew(t, "SimpleSokoban")
	for _, tt := range []struct {
		max  int
		want int
	}{{1, 1}, {3, 3}, {10, 7}, {0, 0}, {-2, 0}} {
		p := ParseResponse("t</think><answer>Up||Up||Up||Up||Up||Up||Up</answer>", true, tt.max, s)
		if len(p.Actions) != tt.want || len(p.Valid) != tt.want || p.FormatPenalty != (tt.want == 0) {
			t.Errorf("max %d: %d actions, %d valid, penalty %v; want %d", tt.max, len(p.Actions), len(p.Valid), p.FormatPenalty, tt.want)
		}
	}
}

// Garbage must never panic and must always cost the format penalty.
func TestParseResponseGarbage(t *testing.T) {
	garbage := []string{
		"",
		" ",
		"</think>",
		"</think><answer></answer>",
		"</think><answer>Jump</answer>",
		"</think><answer>上 || 下</answer>",
		"</think><answer>🙂🙂🙂</answer>",
		"</think><answer>Up\x00</answer>",
		"\xff\xfe\xfd</think><answer>\xff</answer>",
		strings.Repeat("a", 10240),
		"</think><answer>" + strings.Repeat("Upp", 3414) + "</answer>",
		"</think><answer>" + strings.Repeat("||", 100) + "</answer>",
		"</think><answer>" + strings.Repeat(" || ", 100) + "</answer>",
		strings.Repeat("<think></think><answer>", 500),
		strings.Repeat("</answer>", 1000),
		"</think><answer><answer></answer></answer>",
	}
	envs := []Env{mustNew(t, "SimpleSokoban"), mustNew(t, "FrozenLake"), mustNew(t, "Bandit"), mustNew(t, "Countdown")}
	for _, e := range envs {
		mustReset(t, e, 0)
		for _, think := range []bool{true, false} {
			for _, g := range garbage {
				p := ParseResponse(g, think, 5, e)
				_, isFreeText := e.(*Countdown)
				if !p.FormatPenalty && !(isFreeText && len(p.Valid) > 0) {
					t.Errorf("%T think %v: %.40q parsed to %q without penalty", e, think, g, p.Valid)
				}
				for _, a := range p.Valid { // whatever got through must be safe to step
					e.Step(a)
				}
			}
		}
	}
}

func BenchmarkParseResponse(b *testing.B) {
	e := mustNew(b, "SimpleSokoban")
	text := " The box is left of the target, so I push it right twice. </think><answer>Right || Right || Up</answer>"
	for b.Loop() {
		ParseResponse(text, true, 5, e)
	}
}

// The reference: RAGEN's expressions, with Python's \s spelled out.
var (
	refThinkAnswer = regexp.MustCompile(`(?s)<think>(.*?)</think>[\t\n\v\f\r\x1c-\x1f \x{85}\p{Z}]*<answer>(.*?)</answer>`)
	refAnswer      = regexp.MustCompile(`(?s)<answer>(.*?)</answer>`)
)

func checkMatchers(t *testing.T, s string) {
	t.Helper()
	think, answer, ok := matchThinkAnswer(s)
	if m := refThinkAnswer.FindStringSubmatch(s); (m != nil) != ok || ok && (m[1] != think || m[2] != answer) {
		t.Fatalf("matchThinkAnswer(%q) = %q, %q, %v; regexp gives %q", s, think, answer, ok, m)
	}
	answer, ok = matchAnswer(s)
	if m := refAnswer.FindStringSubmatch(s); (m != nil) != ok || ok && m[1] != answer {
		t.Fatalf("matchAnswer(%q) = %q, %v; regexp gives %q", s, answer, ok, m)
	}
}

func TestMatchersAgreeWithRegexp(t *testing.T) {
	pieces := []string{"<think>", "</think>", "<answer>", "</answer>", " ", "\n", "\u3000", "\u00a0", "\x1c",
		"a", "Up", "||", "<", ">", "/", "\xff", "<think", "answer>", "</", "\u200b"}
	rng := newSeededRand()
	rng.seed(1)
	for range 50000 {
		var b strings.Builder
		for range rng.IntN(14) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		checkMatchers(t, b.String())
	}
}

func FuzzParseResponse(f *testing.F) {
	for _, s := range []string{"", "x</think><answer>Up||Left</answer>", "</think>\u3000<answer>a</answer>", "<answer>\xff</answer>"} {
		f.Add(s, true)
	}
	e, err := New("SimpleSokoban")
	if err != nil {
		f.Fatal(err)
	}
	if _, err := e.Reset(0); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string, think bool) {
		checkMatchers(t, "<think>"+text)
		checkMatchers(t, "<answer>"+text)
		p := ParseResponse(text, think, 5, e)
		if len(p.Valid) > 5 || (!p.FormatPenalty && len(p.Valid) == 0) {
			t.Fatalf("ParseResponse(%q) = %+v", text, p)
		}
	})
}
