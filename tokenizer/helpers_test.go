package tokenizer

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ragen-go/ragen/tokenizer/tokenizertest"
)

// The test vocabulary is Qwen's real one (tokenizertest.Path), loaded once
// per test binary. qwen3 is the file as shipped; qwen25 drops the four added
// tokens Qwen3 has beyond Qwen2.5 (ids 151665-151668: <tool_response>,
// </tool_response>, <think>, </think>), which makes Qwen2.5-Instruct's
// tokenizer, the one RAGEN trains.

var vocab struct {
	once           sync.Once
	qwen3, qwen25  *Tokenizer
	err            error
	loadTime       time.Duration
	path, cfgPath  string
	tokenizerBytes int
}

const qwen25LastID = 151664

func loadVocab(tb testing.TB) {
	tb.Helper()
	p := tokenizertest.Path(tb)
	vocab.once.Do(func() {
		start := time.Now()
		vocab.qwen3, vocab.err = Load(p)
		vocab.loadTime = time.Since(start)
		if vocab.err != nil {
			return
		}
		vocab.qwen25, vocab.err = loadQwen25(p)
	})
	if vocab.err != nil {
		tb.Fatalf("loading the test vocabulary: %v", vocab.err)
	}
}

// loadQwen25 builds the Qwen2.5 variant from the same files, in memory.
func loadQwen25(p string) (*Tokenizer, error) {
	tokPath, cfgPath, err := locate(p)
	if err != nil {
		return nil, err
	}
	src, err := readSource(tokPath)
	if err != nil {
		return nil, err
	}
	var kept []addedTokenJSON
	for _, a := range src.file.AddedTokens {
		if a.ID <= qwen25LastID {
			kept = append(kept, a)
		}
	}
	src.file.AddedTokens = kept
	var cfg *configJSON
	if cfgPath != "" {
		cfg = new(configJSON)
		if err := readJSON(cfgPath, cfg); err != nil {
			return nil, err
		}
		for k := range cfg.AddedTokensDecoder {
			var id int
			fmt.Sscan(k, &id)
			if id > qwen25LastID {
				delete(cfg.AddedTokensDecoder, k)
			}
		}
	}
	return build(src, cfg, cfgPath)
}

func qwen3(tb testing.TB) *Tokenizer {
	tb.Helper()
	loadVocab(tb)
	return vocab.qwen3
}

func qwen25(tb testing.TB) *Tokenizer {
	tb.Helper()
	loadVocab(tb)
	return vocab.qwen25
}

// golden is the layout of testdata/*_golden.json (see gen-golden.mjs).
type golden[C any] struct {
	Generator           string `json:"generator"`
	Reference           string `json:"reference"`
	Vocabulary          string `json:"vocabulary"`
	TokenizerJSONSHA256 string `json:"tokenizer_json_sha256"`
	Cases               []C    `json:"cases"`
}

func readGolden[C any](tb testing.TB, name string) golden[C] {
	tb.Helper()
	var g golden[C]
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		tb.Fatal(err)
	}
	if err := json.Unmarshal(data, &g); err != nil {
		tb.Fatalf("testdata/%s: %v", name, err)
	}
	if len(g.Cases) == 0 {
		tb.Fatalf("testdata/%s has no cases", name)
	}
	return g
}

// textCase is one entry of testdata/texts.json.
type textCase struct {
	Name string `json:"name"`
	Text string `json:"text"`
}

func readTexts(tb testing.TB) []textCase {
	tb.Helper()
	var ts []textCase
	data, err := os.ReadFile("testdata/texts.json")
	if err != nil {
		tb.Fatal(err)
	}
	if err := json.Unmarshal(data, &ts); err != nil {
		tb.Fatalf("testdata/texts.json: %v", err)
	}
	return ts
}

// corpus returns about size bytes of mixed text for the benchmark and the
// splitter equivalence test: the hand-written texts (multilingual prose,
// code, special tokens, RAGEN prompts), generated Sokoban and FrozenLake
// turns, and random strings, shuffled with a fixed seed.
func corpus(tb testing.TB, size int) string {
	tb.Helper()
	texts := readTexts(tb)
	rng := rand.New(rand.NewPCG(7, 11))
	var b strings.Builder
	b.Grow(size + 4096)
	for b.Len() < size {
		switch k := rng.IntN(10); {
		case k < 6:
			b.WriteString(texts[rng.IntN(len(texts))].Text)
		case k < 8:
			b.WriteString(ragenTurn(rng))
		default:
			b.WriteString(randomText(rng, 1+rng.IntN(200)))
		}
		b.WriteString([]string{"\n\n", "\n", " ", "\t"}[rng.IntN(4)])
	}
	return b.String()
}

// ragenTurn is a user message of a RAGEN rollout (docs/ragen.md#prompts) with
// a random Sokoban or FrozenLake state.
func ragenTurn(rng *rand.Rand) string {
	var grid strings.Builder
	if rng.IntN(2) == 0 {
		const cells = "#_OX√PS"
		for y := 0; y < 6; y++ {
			for x := 0; x < 6; x++ {
				c := '#'
				if y > 0 && y < 5 && x > 0 && x < 5 {
					c = []rune(cells)[rng.IntN(len([]rune(cells)))]
				}
				grid.WriteRune(c)
			}
			if y < 5 {
				grid.WriteByte('\n')
			}
		}
	} else {
		const cells = "P_OG√X"
		for y := 0; y < 4; y++ {
			for x := 0; x < 4; x++ {
				grid.WriteRune([]rune(cells)[rng.IntN(len([]rune(cells)))])
			}
			if y < 3 {
				grid.WriteByte('\n')
			}
		}
	}
	rewards := []string{"0", "0.0", "1.0", "-0.1", "-0.30000000000000004", "10.9", "-1"}
	return fmt.Sprintf("Reward:\n%s\n\nTurn %d:\nState:\n%s\nYou have %d actions left. Always output: "+
		"<think> [Your thoughts] </think> <answer> [your answer] </answer> with no extra text. "+
		"Strictly follow this format. Max response length: 100 words (tokens).\n",
		rewards[rng.IntN(len(rewards))], 1+rng.IntN(10), grid.String(), rng.IntN(11))
}

// randomText draws n characters from pools that exercise every branch of
// the pre-tokenizer: letters of several scripts, numbers of several kinds,
// each kind of whitespace, apostrophes and contraction letters, symbols,
// combining marks, emoji, and added-token text.
func randomText(rng *rand.Rand, n int) string {
	type pool struct {
		weight int
		draw   func() string
	}
	span := func(lo, hi rune) func() string {
		return func() string { return string(lo + rune(rng.IntN(int(hi-lo+1)))) }
	}
	oneOf := func(s string) func() string {
		rs := []rune(s)
		return func() string { return string(rs[rng.IntN(len(rs))]) }
	}
	pools := []pool{
		{12, span('a', 'z')}, {4, span('A', 'Z')}, {3, span('0', '9')},
		{8, oneOf(" ")}, {3, oneOf("\n\r\t")}, {3, oneOf("'")}, {2, oneOf("sStTrReEvVmMlLdD")},
		{4, oneOf(".,;:!?-_()[]{}<>|/\\\"#$%&*+=@^`~")},
		{2, span(0xC0, 0xFF)}, {2, span(0x300, 0x36F)}, {3, span(0x4E00, 0x9FA5)},
		{2, span(0xAC00, 0xD7A3)}, {1, span(0x3041, 0x3096)}, {1, span(0x0410, 0x044F)},
		{1, span(0x0627, 0x064A)}, {1, span(0x1F600, 0x1F64F)},
		{1, oneOf("\u00a0\u2000\u2003\u200a\u3000\u0085\u2028\u2029\u000b\u000c\u200b\ufeff\u001c\u180e")},
		{1, oneOf("\u0660\u0669\u0966\uff10\uff19\u00b2\u00bd\u2160\u2460")},
		{1, oneOf("√×÷→∑€£™©°")}, {1, oneOf("\u017f\u212a\u0130")},
		{1, func() string {
			return []string{"<|im_start|>", "<|im_end|>", "<|endoftext|>", "<think>", "</think>", "<|im", "|>"}[rng.IntN(7)]
		}},
		{1, span(0x10000, 0x10FFFF)}, // anything, assigned or not
	}
	total := 0
	for _, p := range pools {
		total += p.weight
	}
	var b strings.Builder
	for i := 0; i < n; i++ {
		r := rng.IntN(total)
		for _, p := range pools {
			if r -= p.weight; r < 0 {
				b.WriteString(p.draw())
				break
			}
		}
	}
	return b.String()
}
