package tokenizer

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// The fast path's merge loop (HuggingFace's: merge-list pairs, earliest
// first) against tiktoken-go's (the reference: lowest-ranked concatenation)
// on every piece of the benchmark corpus and of random text, plus long
// pieces, where the heap version takes over.
func TestMergeMatchesTiktoken(t *testing.T) {
	tk := qwen25(t)
	p := tk.pieces
	seen := map[string]bool{}
	checked := 0
	check := func(piece string) {
		if seen[piece] {
			return
		}
		seen[piece] = true
		want := p.encodeTiktoken(nil, piece)
		if got := p.encode(nil, piece); !slices.Equal(got, want) {
			t.Fatalf("piece %q: merge %v, tiktoken-go %v", piece, got, want)
		}
		if _, whole := p.ranks[piece]; !whole {
			// Both loops on every piece, whatever its length.
			if got := p.mergeLong(nil, piece); !slices.Equal(got, want) {
				t.Fatalf("piece %q: mergeLong %v, tiktoken-go %v", piece, got, want)
			}
			if len(piece) <= longPiece {
				if got := p.merge(nil, piece); !slices.Equal(got, want) {
					t.Fatalf("piece %q: merge %v, tiktoken-go %v", piece, got, want)
				}
			}
		}
		checked++
	}
	text := corpus(t, 1<<19)
	rng := rand.New(rand.NewPCG(7, 8))
	for i := 0; i < 3000; i++ {
		text += randomText(rng, rng.IntN(40))
	}
	tk.pre.split(normalized(tk, text), check)
	for _, long := range []string{
		strings.Repeat(" ", 1000),
		strings.Repeat("\t", 77),
		strings.Repeat("强化学习需要稳定的奖励信号", 20),
		strings.Repeat("ab", 300),
		strings.Repeat("a", 129),
		randomLetters(rng, 500),
	} {
		check(long)
	}
	t.Logf("%d distinct pieces", checked)
}

func normalized(tk *Tokenizer, s string) string {
	if tk.normalize != nil {
		return tk.normalize(s)
	}
	return s
}

func randomLetters(rng *rand.Rand, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteByte(byte('a' + rng.IntN(26)))
	}
	return b.String()
}

// Encode takes a piece that is a whole token as that token without merging
// (so does tiktoken). HuggingFace always merges, so that is only right if
// merging every token's bytes gives the token back: check all of them.
func TestEveryTokenMergesToItself(t *testing.T) {
	tk := qwen3(t)
	p := tk.pieces
	for id, b := range tk.tokens[:tk.modelTokens] {
		if len(b) < 2 {
			continue
		}
		var got []int
		if len(b) > longPiece {
			got = p.mergeLong(nil, string(b))
		} else {
			got = p.merge(nil, string(b))
		}
		if len(got) != 1 || got[0] != id {
			t.Fatalf("token %d %q merges to %v", id, b, got)
		}
	}
}

// The full general path (regexp2 and tiktoken-go) against Encode on the
// whole benchmark corpus.
func TestEncodeMatchesReference(t *testing.T) {
	tk := qwen25(t)
	text := corpus(t, 1<<20)
	got, want := tk.Encode(text), tk.encodeReference(text)
	if !slices.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		t.Fatalf("Encode and the reference path differ at token %d of %d: %v vs %v",
			i, len(want), got[i:min(i+8, len(got))], want[i:min(i+8, len(want))])
	}
}
