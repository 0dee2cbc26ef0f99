package tokenizer

import (
	"bytes"
	"errors"
)

// maxTokenID is the largest token id accepted, model.MaxVocab − 1: the
// tokenizer allocates a slot for every id up to the largest, so an id of
// 2e9 in a damaged file would otherwise ask for 48 GB before any other
// check.
const maxTokenID = 1<<22 - 1

// checkModel accepts the BPE settings this package reproduces.
func checkModel(m *modelJSON, fail func(string, ...any) error) error {
	switch {
	case m.Type != "BPE":
		return fail("model type %q is not supported: only byte-level BPE is", m.Type)
	case m.Dropout != nil && *m.Dropout != 0:
		return fail("BPE dropout %v is not supported", *m.Dropout)
	case m.ContinuingSubwordPrefix != nil && *m.ContinuingSubwordPrefix != "":
		return fail("continuing_subword_prefix %q is not supported", *m.ContinuingSubwordPrefix)
	case m.EndOfWordSuffix != nil && *m.EndOfWordSuffix != "":
		return fail("end_of_word_suffix %q is not supported", *m.EndOfWordSuffix)
	case m.ByteFallback:
		return fail("byte_fallback is not supported (byte-level BPE needs none)")
	}
	return nil
}

// readVocab parses model.vocab into t.tokens and returns the ranks for the
// byte-pair encoder: byte string -> id.
func (t *Tokenizer) readVocab(src *source, fail func(string, ...any) error) (map[string]int, error) {
	type entry struct{ off, n, id int }
	var (
		arena   []byte // every token's bytes, back to back
		entries = make([]entry, 0, 1<<17)
		maxID   = -1
	)
	if src.vocab.end == 0 {
		return nil, fail("model has no vocab")
	}
	s := &scanner{data: src.data, pos: src.vocab.start}
	if s.peek() != '{' {
		return nil, fail("model.vocab is not an object")
	}
	arena = make([]byte, 0, (src.vocab.end-src.vocab.start)/3)
	err := s.members(func(key []byte) error {
		id, err := s.int()
		if err != nil {
			return s.errorf("vocab entry %q: the id is not an integer", key)
		}
		n := len(arena)
		var ok bool
		if arena, ok = appendByteLevelDecode(arena, key); !ok {
			return fail("vocab entry %q (id %d) is not in the byte-level alphabet", key, id)
		}
		if id < 0 || id > maxTokenID {
			return fail("vocab entry %q has id %d, outside 0…%d", key, id, maxTokenID)
		}
		entries = append(entries, entry{n, len(arena) - n, id})
		maxID = max(maxID, id)
		return nil
	})
	if err != nil {
		var se *scanError
		if errors.As(err, &se) {
			return nil, src.syntaxError(err)
		}
		return nil, err
	}
	if len(entries) == 0 {
		return nil, fail("model.vocab is empty")
	}
	keys := string(arena) // one allocation backs every map key
	t.tokens = make([][]byte, maxID+1)
	ranks := make(map[string]int, len(entries))
	for _, e := range entries {
		b := arena[e.off : e.off+e.n : e.off+e.n]
		if t.tokens[e.id] != nil {
			return nil, fail("vocab gives id %d to both %q and %q",
				e.id, byteLevelEncode(t.tokens[e.id]), byteLevelEncode(b))
		}
		t.tokens[e.id] = b
		ranks[keys[e.off:e.off+e.n]] = e.id
	}
	if len(ranks) != len(entries) {
		// Two keys decode to the same bytes: find them for the message.
		seen := make(map[string]int, len(entries))
		for _, e := range entries {
			k := keys[e.off : e.off+e.n]
			if prev, dup := seen[k]; dup {
				return nil, fail("vocab lists %q twice, as ids %d and %d", byteLevelEncode([]byte(k)), prev, e.id)
			}
			seen[k] = e.id
		}
	}
	t.modelTokens = len(entries)
	return ranks, nil
}

// readMerges resolves the merge list to ids. Every merge must join two
// vocabulary tokens into a third, as HuggingFace requires; the order is
// free. It also works out mergeList.rankIsID, under which tiktoken's
// rank-based BPE (join the adjacent pair whose concatenation has the lowest
// id) gives what the merge list gives: the merges come in increasing id
// order and every multi-byte token is made by one, as in Qwen's vocabulary,
// which was converted from tiktoken ranks.
func (t *Tokenizer) readMerges(src *source, ranks map[string]int, fail func(string, ...any) error) (mergeList, error) {
	var ml mergeList
	if src.merges.end == 0 {
		return ml, fail("model has no merges")
	}
	s := &scanner{data: src.data, pos: src.merges.start}
	if err := s.expect('['); err != nil {
		return ml, fail("model.merges is not a list")
	}
	ml.pairs = make([][2]int32, 0, len(ranks))
	ml.ids = make([]int32, 0, len(ranks))
	i := 0
	var a, b, pair, joined []byte
	// known looks up a byte-level token text, appending its bytes to joined.
	known := func(text []byte) (int, bool) {
		n := len(joined)
		var ok bool
		if joined, ok = appendByteLevelDecode(joined, text); !ok {
			return 0, false
		}
		id, ok := ranks[string(joined[n:])]
		return id, ok
	}
	if s.peek() == ']' {
		return ml, fail("model.merges is empty")
	}
	for ; ; i++ {
		var err error
		switch s.peek() {
		case '"': // "a b"
			if pair, err = s.str(pair[:0]); err != nil {
				return ml, src.syntaxError(err)
			}
			sp := bytes.IndexByte(pair, ' ')
			if sp < 0 {
				return ml, fail("merge %d %q has no space", i, pair)
			}
			a, b = pair[:sp], pair[sp+1:]
		case '[': // ["a", "b"]
			s.pos++
			if a, err = s.str(a[:0]); err == nil {
				if err = s.expect(','); err == nil {
					if b, err = s.str(b[:0]); err == nil {
						err = s.expect(']')
					}
				}
			}
			if err != nil {
				return ml, src.syntaxError(err)
			}
		default:
			return ml, src.syntaxError(s.errorf("want a merge, a string or a pair"))
		}
		joined = joined[:0]
		left, lok := known(a)
		right, rok := known(b)
		if !lok || !rok {
			return ml, fail("merge %d (%q %q) uses a token missing from the vocab", i, a, b)
		}
		id, ok := ranks[string(joined)]
		if !ok {
			return ml, fail("merge %d (%q %q) makes %q, which is not in the vocab", i, a, b, string(a)+string(b))
		}
		ml.pairs = append(ml.pairs, [2]int32{int32(left), int32(right)})
		ml.ids = append(ml.ids, int32(id))
		switch s.peek() {
		case ',':
			s.pos++
			continue
		case ']':
		default:
			return ml, src.syntaxError(s.errorf("want ',' or ']'"))
		}
		break
	}
	ml.rankIsID = rankIsID(ml, ranks, len(t.tokens))
	return ml, nil
}

// rankIsID reports whether the merges' ids strictly increase along the list
// and every multi-byte token of ranks is made by one.
func rankIsID(ml mergeList, ranks map[string]int, ntokens int) bool {
	made := make([]bool, ntokens)
	prev := int32(-1)
	for _, id := range ml.ids {
		if id <= prev {
			return false
		}
		prev = id
		made[id] = true
	}
	for tok, id := range ranks {
		if !made[id] && len(tok) > 1 {
			return false
		}
	}
	return true
}
