package tokenizer

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// splitAll collects a splitter's pieces.
func splitAll(sp splitter, s string) []string {
	var out []string
	sp.split(s, func(p string) { out = append(out, p) })
	return out
}

func qwen2Regexp(tb testing.TB) *regexSplitter {
	tb.Helper()
	re, err := newRegexSplitter(qwen2Pattern)
	if err != nil {
		tb.Fatal(err)
	}
	return re
}

// checkSplit fails when the hand-written splitter and regexp2 running the
// pattern cut s differently, showing the first difference.
func checkSplit(tb testing.TB, re *regexSplitter, s string) {
	tb.Helper()
	want := splitAll(re, s)
	got := splitAll(qwen2Splitter{}, s)
	if slices.Equal(got, want) {
		return
	}
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	tb.Fatalf("split of %q differs at piece %d:\n fast    %q\n regexp2 %q",
		s, i, got[i:min(i+4, len(got))], want[i:min(i+4, len(want))])
}

// The fast path's splitter against the general path's on the whole
// benchmark corpus and on random strings over the characters the pattern
// tells apart.
func TestQwen2SplitterMatchesRegexp2(t *testing.T) {
	re := qwen2Regexp(t)
	text := corpus(t, 1<<20)
	// The corpus in chunks, so a difference is reported near where it is.
	for len(text) > 0 {
		n := min(len(text), 4096)
		for n < len(text) && !strings.HasPrefix(text[n:], "\n\n") {
			n++
		}
		checkSplit(t, re, text[:n])
		text = text[n:]
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 20000; i++ {
		checkSplit(t, re, randomText(rng, rng.IntN(40)))
	}
	// Dense mixes of the characters at the pattern's branch points.
	const tricky = " \t\n\r'sStTrReEvVmMlLdDx1٣.!\u00a0\u3000\u0085\u2028\u0301\u017f\u212a\u0130€"
	rs := []rune(tricky)
	for i := 0; i < 50000; i++ {
		var b strings.Builder
		for j := rng.IntN(12); j > 0; j-- {
			b.WriteRune(rs[rng.IntN(len(rs))])
		}
		checkSplit(t, re, b.String())
	}
}

// FuzzQwen2Splitter extends the test above: go test -fuzz FuzzQwen2Splitter.
func FuzzQwen2Splitter(f *testing.F) {
	for _, c := range []string{
		"Hello world", "  \n\n  x", "I'm you're 'S 'll", "a\u0085b", "x\u00a0 y", "《你好》世界！",
		"\t\tif x {\n\t\treturn\n}", "1234 ١٢٣", "e\u0301\u0302!", "'\u017ft", "😀 👍🏽\r\n\r\n",
	} {
		f.Add(c)
	}
	re := qwen2Regexp(f)
	f.Fuzz(func(t *testing.T, s string) {
		// Encode makes its input valid UTF-8 before splitting.
		s = strings.ToValidUTF8(s, "\uFFFD")
		checkSplit(t, re, s)
	})
}

// Every splitter's pieces tile its input.
func TestSplittersTile(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	gpt2, err := newRegexSplitter(gpt2Pattern)
	if err != nil {
		t.Fatal(err)
	}
	gaps, err := newRegexSplitter(`\d+`) // leaves text between matches
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2000; i++ {
		s := randomText(rng, rng.IntN(50))
		for _, sp := range []splitter{qwen2Splitter{}, qwen2Regexp(t), gpt2, gaps, seqSplitter{gaps, gpt2}} {
			pieces := splitAll(sp, s)
			if strings.Join(pieces, "") != s || slices.Contains(pieces, "") {
				t.Fatalf("%T pieces %q do not tile %q", sp, pieces, s)
			}
		}
	}
	if got, want := splitAll(gaps, "ab12cd345"), []string{"ab", "12", "cd", "345"}; !slices.Equal(got, want) {
		t.Errorf("Isolated split = %q, want %q", got, want)
	}
}
