package tokenizer

import (
	"slices"
	"sync"
	"testing"
)

func TestEncodeEdgeCases(t *testing.T) {
	tk := qwen3(t)
	same := func(a, b string) {
		t.Helper()
		if x, y := tk.Encode(a), tk.Encode(b); !slices.Equal(x, y) {
			t.Errorf("Encode(%q) = %v, Encode(%q) = %v; want equal", a, x, b, y)
		}
	}
	// Invalid UTF-8 reads as U+FFFD, one per maximal invalid subpart.
	same("a\xffb", "a\uFFFDb")
	same("a\xe4\xbdb", "a\uFFFDb")
	// NFC: decomposed and composed text are the same tokens.
	same("Cre\u0300me bru\u0302le\u0301e", "Crème brûlée")
	same("\u1100\u1161\u11a8", "각")
	// Added tokens are matched on the raw text, before normalisation, and a
	// combining mark after one is not composed with it.
	if got := tk.Encode("<|im_end|>\u0301"); len(got) < 2 || got[0] != 151645 {
		t.Errorf("Encode(<|im_end|> + U+0301) = %v", got)
	}
	if got := tk.Encode(""); len(got) != 0 {
		t.Errorf("Encode(\"\") = %v", got)
	}
}

// A Tokenizer is shared by rollout goroutines.
func TestEncodeConcurrent(t *testing.T) {
	tk := qwen3(t)
	texts := readTexts(t)
	want := make([][]int, len(texts))
	for i, c := range texts {
		want[i] = tk.Encode(c.Text)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for rep := 0; rep < 20; rep++ {
				for i, c := range texts {
					if !slices.Equal(tk.Encode(c.Text), want[i]) {
						errs <- c.Name
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for name := range errs {
		t.Errorf("concurrent Encode of %q differs", name)
	}
}
