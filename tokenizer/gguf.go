package tokenizer

import (
	"fmt"
	"slices"
	"strings"
)

// GGUF token types, llama.cpp's llama_token_type (tokenizer.ggml.token_type).
const (
	GGUFTokenNormal      = 1
	GGUFTokenUnknown     = 2
	GGUFTokenControl     = 3 // a special token: <|im_start|>, <|eot_id|>
	GGUFTokenUserDefined = 4 // an added token that is not special
	GGUFTokenUnused      = 5
	GGUFTokenByte        = 6
)

// GGUFVocab is the tokenizer metadata of a GGUF file, the keys llama.cpp's
// vocabulary loader reads (src/llama-vocab.cpp). Ids are -1 when the file
// has no such key.
type GGUFVocab struct {
	Source       string   // the GGUF file, for messages
	Model        string   // tokenizer.ggml.model; "gpt2" is byte-level BPE
	Pre          string   // tokenizer.ggml.pre: the pre-tokenizer's name
	Tokens       []string // tokenizer.ggml.tokens, byte-level text; added tokens as written
	TokenTypes   []int32  // tokenizer.ggml.token_type (GGUFTokenNormal, ...); nil: all normal
	Merges       []string // tokenizer.ggml.merges, "left right", earliest first
	BOS          int      // tokenizer.ggml.bos_token_id
	EOS          int      // tokenizer.ggml.eos_token_id
	Pad          int      // tokenizer.ggml.padding_token_id
	Unk          int      // tokenizer.ggml.unknown_token_id
	AddBOS       bool     // tokenizer.ggml.add_bos_token; if absent, GGUFDefaultAddBOS(Pre)
	ChatTemplate string   // tokenizer.chat_template
}

// ggufPre is one of llama.cpp's pre-tokenizers for byte-level BPE, with the
// settings llama.cpp gives it and its HuggingFace form.
type ggufPre struct {
	names        []string  // tokenizer.ggml.pre values; the first is written
	steps        []preStep // the pre-tokenizer as HuggingFace's steps
	ignoreMerges bool      // llama.cpp's ignore_merges for it
	addBOS       bool      // llama.cpp's add_bos when the file does not say
}

// ggufPres are the pre-tokenizers FromGGUF reproduces, from llama.cpp's
// llm_tokenizer_bpe (regexes) and llama_vocab::impl::load (names, flags).
// llama.cpp writes the contractions of Llama 3's and Qwen2's patterns as
// '[sS] ...; HuggingFace's (?i:'s ...) also takes "'ſ", which llama.cpp
// does not, so these steps hold llama.cpp's form (GGUFVocab accepts both).
var ggufPres = []ggufPre{
	{names: []string{"llama-bpe", "llama3", "llama-v3"}, ignoreMerges: true, addBOS: true,
		steps: []preStep{{kind: "Split", pattern: asciiVariant(llama3Pattern)}, {kind: "ByteLevel"}}},
	{names: []string{"qwen2"},
		steps: []preStep{{kind: "Split", pattern: asciiVariant(qwen2Pattern)}, {kind: "ByteLevel"}}},
	{names: []string{"smollm", "starcoder"},
		steps: []preStep{{kind: "Digits", individual: true}, {kind: "ByteLevel", useRegex: true}}},
	{names: []string{"gpt-2"},
		steps: []preStep{{kind: "ByteLevel", useRegex: true}}},
	// llama.cpp's fallback, also for files without tokenizer.ggml.pre.
	{names: []string{"default", ""},
		steps: []preStep{
			{kind: "Split", pattern: `[\p{P}\$\+<=>\^~\|]+`},
			{kind: "Split", pattern: gpt2Pattern},
			{kind: "Split", pattern: `\p{N}+`},
			{kind: "Split", pattern: `[0-9][0-9][0-9]`},
			{kind: "ByteLevel"},
		}},
}

// eogTexts are the texts llama.cpp takes as end-of-generation tokens and
// makes control tokens whatever type the file gives them (its "control-
// looking token" override), so they are matched in text as special tokens.
var eogTexts = []string{"<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>",
	"<|calls|>", "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]",
	"[EOS]", "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
	"<｜end▁of▁sentence｜>", "[e~["}

func findGGUFPre(name string) (ggufPre, bool) {
	for _, p := range ggufPres {
		if slices.Contains(p.names, name) {
			return p, true
		}
	}
	return ggufPre{}, false
}

// ggufPreNames lists the supported tokenizer.ggml.pre values, for messages.
func ggufPreNames() string {
	var names []string
	for _, p := range ggufPres {
		for _, n := range p.names {
			if n != "" {
				names = append(names, fmt.Sprintf("%q", n))
			}
		}
	}
	return strings.Join(names, ", ")
}

// GGUFDefaultAddBOS is llama.cpp's add_bos for a pre-tokenizer name when the
// file has no tokenizer.ggml.add_bos_token: true for Llama 3's.
func GGUFDefaultAddBOS(pre string) bool {
	p, _ := findGGUFPre(pre)
	return p.addBOS
}

// FromGGUF builds the tokenizer llama.cpp builds from a GGUF file's
// metadata, for byte-level BPE (tokenizer.ggml.model "gpt2"): the
// pre-tokenizer llama.cpp uses for tokenizer.ggml.pre, with its
// ignore_merges; the merges, earliest first; and control, user-defined and
// unknown tokens cut out of the text before anything else, longest first,
// as llama.cpp's tokenize(text, add_special=false, parse_special=true)
// does. Encode gives llama.cpp's ids; EncodeSpecial adds BOS when AddBOS
// is set. Control and unknown tokens are special (DecodeSkipSpecial leaves
// them out); tokens decode as HuggingFace would decode the files WriteHF
// writes (llama.cpp's detokenizer differs: it drops unused tokens and may
// clean up spaces).
//
// Differences from llama.cpp that remain: Unicode character classes are
// Go's (llama.cpp has its own tables, and classes unassigned code points as
// neither letter, number nor symbol); invalid UTF-8 becomes U+FFFD per
// maximal invalid sequence, not per byte; and of llama.cpp's name-based
// token fixes only the end-of-generation override (eogTexts) is applied,
// not its fill-in-the-middle or model-specific ones.
func FromGGUF(v GGUFVocab) (*Tokenizer, error) {
	fail := func(format string, a ...any) error {
		return fmt.Errorf("%s: %s", v.Source, fmt.Sprintf(format, a...))
	}
	if v.Model != "gpt2" {
		return nil, fail("tokenizer.ggml.model %q is not supported: only \"gpt2\" (byte-level BPE) is", v.Model)
	}
	pre, ok := findGGUFPre(v.Pre)
	if !ok {
		return nil, fail("tokenizer.ggml.pre %q is not supported (supported: %s)", v.Pre, ggufPreNames())
	}
	n := len(v.Tokens)
	if n == 0 {
		return nil, fail("tokenizer.ggml.tokens is empty")
	}
	if v.TokenTypes != nil && len(v.TokenTypes) != n {
		return nil, fail("tokenizer.ggml.token_type has %d entries for %d tokens", len(v.TokenTypes), n)
	}
	t := &Tokenizer{path: v.Source, tokens: make([][]byte, n), vocabSize: n,
		eos: -1, pad: -1, bos: -1, unk: -1, chatTempl: v.ChatTemplate, chatName: v.Source + " (tokenizer.chat_template)"}
	ranks, err := t.ggufTokens(v, fail)
	if err != nil {
		return nil, err
	}
	t.ranks, t.modelTokens = ranks, len(ranks)
	if t.merges, err = ggufMerges(v.Merges, ranks, n, fail); err != nil {
		return nil, err
	}
	for _, s := range []struct {
		key string
		id  int
		dst *int
	}{{"bos_token_id", v.BOS, &t.bos}, {"eos_token_id", v.EOS, &t.eos},
		{"padding_token_id", v.Pad, &t.pad}, {"unknown_token_id", v.Unk, &t.unk}} {
		if s.id >= n {
			return nil, fail("tokenizer.ggml.%s %d is not a token id (%d tokens)", s.key, s.id, n)
		}
		if s.id >= 0 {
			*s.dst = s.id
			t.special[s.id] = true
		}
	}
	if v.AddBOS {
		if t.bos < 0 {
			return nil, fail("tokenizer.ggml.add_bos_token is true but there is no tokenizer.ggml.bos_token_id")
		}
		t.post.prefix = []int{t.bos}
	}
	if t.pre, t.fast, err = buildSplitters(pre.steps); err != nil {
		return nil, fail("tokenizer.ggml.pre %q: %v", v.Pre, err)
	}
	t.preSteps = pre.steps
	if t.pieces, err = newPieceEncoder(ranks, t.merges, pre.ignoreMerges, true); err != nil {
		return nil, fail("%v", err)
	}
	return t, nil
}

// ggufTokens fills t.tokens, t.special and the added tokens from the
// vocabulary and returns the byte-pair encoder's ranks: the bytes of every
// token whose text is in the byte-level alphabet, as llama.cpp looks up
// every token by its text.
func (t *Tokenizer) ggufTokens(v GGUFVocab, fail func(string, ...any) error) (map[string]int, error) {
	ranks := make(map[string]int, len(v.Tokens))
	t.special = make([]bool, len(v.Tokens))
	t.addedIDs = map[string]int{}
	var added []addedTokenJSON
	for id, text := range v.Tokens {
		if text == "" {
			return nil, fail("token %d is empty", id)
		}
		typ := int32(GGUFTokenNormal)
		if v.TokenTypes != nil {
			typ = v.TokenTypes[id]
		}
		if slices.Contains(eogTexts, text) && typ != GGUFTokenUnknown {
			typ = GGUFTokenControl
		}
		b, inAlphabet := byteLevelDecode(text)
		switch typ {
		case GGUFTokenControl, GGUFTokenUserDefined, GGUFTokenUnknown:
			if prev, dup := t.addedIDs[text]; dup {
				return nil, fail("tokens %d and %d are both %q", prev, id, text)
			}
			added = append(added, addedTokenJSON{ID: id, Content: text, Special: typ != GGUFTokenUserDefined})
			t.addedIDs[text] = id
			t.tokens[id] = []byte(addedBytes(text))
			t.special[id] = typ != GGUFTokenUserDefined
		default:
			if !inAlphabet {
				return nil, fail("token %d %q (type %d) is not in the byte-level alphabet", id, text, typ)
			}
			t.tokens[id] = b
		}
		if inAlphabet {
			if prev, dup := ranks[string(b)]; dup {
				return nil, fail("tokens %d and %d are both %q", prev, id, text)
			}
			ranks[string(b)] = id
		}
	}
	t.added = added
	t.normAdded = newAddedMatcher(nil)
	texts := make([]string, len(added))
	for i, a := range added {
		texts[i] = a.Content
	}
	if _, _, overlap := partialOverlap(texts); overlap {
		t.rawAdded = newLongestFirst(added)
	} else {
		t.rawAdded = newAddedMatcher(added) // the same cuts, faster
	}
	return ranks, nil
}

// ggufMerges resolves tokenizer.ggml.merges, "left right" in byte-level
// text, split at the first space after the first character as llama.cpp
// splits them.
func ggufMerges(merges []string, ranks map[string]int, ntokens int, fail func(string, ...any) error) (mergeList, error) {
	ml := mergeList{pairs: make([][2]int32, 0, len(merges)), ids: make([]int32, 0, len(merges))}
	seen := make(map[uint64]int, len(merges))
	lookup := func(text string) (int, bool) {
		b, ok := byteLevelDecode(text)
		if !ok {
			return 0, false
		}
		id, ok := ranks[string(b)]
		return id, ok
	}
	for i, m := range merges {
		sp := -1
		if len(m) > 1 {
			if sp = strings.IndexByte(m[1:], ' '); sp >= 0 {
				sp++
			}
		}
		if sp < 0 {
			return ml, fail("merge %d %q has no space", i, m)
		}
		a, b := m[:sp], m[sp+1:]
		left, lok := lookup(a)
		right, rok := lookup(b)
		if !lok || !rok {
			return ml, fail("merge %d %q uses a token missing from tokenizer.ggml.tokens", i, m)
		}
		id, ok := lookup(a + b)
		if !ok {
			return ml, fail("merge %d %q makes %q, which is not a token", i, m, a+b)
		}
		key := pairKey(int32(left), int32(right))
		if j, dup := seen[key]; dup {
			// llama.cpp keeps the first, HuggingFace the last: refuse.
			return ml, fail("merge %d %q repeats merge %d", i, m, j)
		}
		seen[key] = i
		ml.pairs = append(ml.pairs, [2]int32{int32(left), int32(right)})
		ml.ids = append(ml.ids, int32(id))
	}
	if len(ml.pairs) == 0 {
		return ml, fail("tokenizer.ggml.merges is empty")
	}
	ml.rankIsID = rankIsID(ml, ranks, ntokens)
	return ml, nil
}
