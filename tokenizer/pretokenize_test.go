package tokenizer

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestDigitsSplitter(t *testing.T) {
	for _, c := range []struct {
		text       string
		individual bool
		want       []string
	}{
		{"abc", true, []string{"abc"}},
		{"a123b", true, []string{"a", "1", "2", "3", "b"}},
		{"a123b", false, []string{"a", "123", "b"}},
		{"12", true, []string{"1", "2"}},
		{"12", false, []string{"12"}},
		{" 4 5", false, []string{" ", "4", " ", "5"}},
		// Other scripts' digits and other numbers (Nl, No) count too.
		{"x٣٤½Ⅻ", true, []string{"x", "٣", "٤", "½", "Ⅻ"}},
		{"x٣٤½Ⅻy", false, []string{"x", "٣٤½Ⅻ", "y"}},
		{"", true, nil},
	} {
		if got := splitAll(digitsSplitter{individual: c.individual}, c.text); !slices.Equal(got, c.want) {
			t.Errorf("Digits(individual %v) of %q = %q, want %q", c.individual, c.text, got, c.want)
		}
	}
}

// A file with SmolLM2's pre-tokenizer, Digits then ByteLevel's own
// pattern, splits digits before the GPT-2 pattern sees them.
func TestDigitsThenByteLevel(t *testing.T) {
	dir := writeTiny(t, func(f map[string]any) {
		f["pre_tokenizer"] = map[string]any{"type": "Sequence", "pretokenizers": []any{
			map[string]any{"type": "Digits", "individual_digits": true},
			map[string]any{"type": "ByteLevel", "add_prefix_space": false, "use_regex": true},
		}}
	}, nil)
	tk, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"hello", " ", "1", "2", " world", "'s"}
	if got := splitAll(tk.pre, "hello 12 world's"); !slices.Equal(got, want) {
		t.Errorf("pieces %q, want %q", got, want)
	}
	if tk.fast != nil {
		t.Error("a fast splitter stands in for Digits")
	}
}

func TestFoldCaseGroups(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`(?i:'s|'t)|x`, "(?:'[s\u017fS]|'[tT])|x"},
		{`a(?i:k)b`, "a(?:[k\u212aK])b"},
		{`(?i:a+)`, `(?i:a+)`},     // not literal: left alone
		{`\(?i:s)`, `\(?i:s)`},     // an escaped parenthesis
		{`(?i:'s`, `(?i:'s`},       // unclosed
		{`no groups`, `no groups`}, // nothing to do
	} {
		if got := foldCaseGroups(c.in); got != c.want {
			t.Errorf("foldCaseGroups(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// Oniguruma (HuggingFace) matches (?i:'s) on "'ſ", as ſ case-folds to s;
// llama.cpp's '[sS] does not. Ids from tokenizers 0.23.3: Qwen's splits
// "'ſ" off "a".
func TestLongSContraction(t *testing.T) {
	want := []string{"x", "'ſ", "a", " x", "'S", "a"}
	for _, pat := range []string{qwen2Pattern, llama3Pattern} {
		re, err := newRegexSplitter(pat)
		if err != nil {
			t.Fatal(err)
		}
		if got := splitAll(re, "x'ſa x'Sa"); !slices.Equal(got, want) {
			t.Errorf("regexp2 pieces %q, want %q", got, want)
		}
	}
	ascii := []string{"x", "'ſa", " x", "'S", "a"}
	re, err := newRegexSplitter(asciiVariant(llama3Pattern))
	if err != nil {
		t.Fatal(err)
	}
	if got := splitAll(re, "x'ſa x'Sa"); !slices.Equal(got, ascii) {
		t.Errorf("llama.cpp's pattern: pieces %q, want %q", got, ascii)
	}
}

// Each fast splitter against regexp2 running its pattern, on the benchmark
// corpus and random strings (TestQwen2SplitterMatchesRegexp2 covers Qwen2's
// at greater length).
func TestFastPatternsMatchRegexp2(t *testing.T) {
	text := corpus(t, 1<<18)
	rng := rand.New(rand.NewPCG(5, 7))
	for pat, fast := range fastPatterns {
		re, err := newRegexSplitter(pat)
		if err != nil {
			t.Fatal(err)
		}
		check := func(s string) {
			if got, want := splitAll(fast, s), splitAll(re, s); !slices.Equal(got, want) {
				i := 0
				for i < len(got) && i < len(want) && got[i] == want[i] {
					i++
				}
				t.Fatalf("%+v: split of %q differs at piece %d: fast %q, regexp2 %q",
					fast, s, i, got[i:min(i+4, len(got))], want[i:min(i+4, len(want))])
			}
		}
		for _, chunk := range strings.SplitAfter(text, "\n\n") {
			check(chunk)
		}
		for range 5000 {
			check(randomText(rng, rng.IntN(40)) + strings.Repeat("7", rng.IntN(8)))
		}
	}
}
