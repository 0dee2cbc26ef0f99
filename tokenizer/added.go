package tokenizer

import (
	"sort"
	"strings"
)

// addedSplitter finds added tokens in text: split calls text for each
// stretch of s without added tokens and token for each added token, in
// order.
type addedSplitter interface {
	split(s string, text func(string), token func(id int))
}

// addedMatcher finds added tokens in text, leftmost-longest, as
// HuggingFace's AddedVocabulary does with its Aho-Corasick automaton.
type addedMatcher struct {
	// byFirst[b] lists the tokens whose text starts with byte b, longest
	// first; nil for most bytes.
	byFirst [256][]addedEntry
	any     bool
}

type addedEntry struct {
	text string
	id   int
}

func newAddedMatcher(tokens []addedTokenJSON) *addedMatcher {
	m := &addedMatcher{}
	for _, a := range tokens {
		b := a.Content[0]
		m.byFirst[b] = append(m.byFirst[b], addedEntry{a.Content, a.ID})
		m.any = true
	}
	for _, es := range m.byFirst {
		sort.SliceStable(es, func(i, j int) bool { return len(es[i].text) > len(es[j].text) })
	}
	return m
}

// split calls text for each stretch of s without added tokens and token for
// each added token, in order.
func (m *addedMatcher) split(s string, text func(string), token func(id int)) {
	if !m.any {
		text(s)
		return
	}
	start := 0
	for i := 0; i < len(s); {
		es := m.byFirst[s[i]]
		matched := false
		for _, e := range es {
			if strings.HasPrefix(s[i:], e.text) {
				if i > start {
					text(s[start:i])
				}
				token(e.id)
				i += len(e.text)
				start = i
				matched = true
				break
			}
		}
		if !matched {
			i++
		}
	}
	if start < len(s) {
		text(s[start:])
	}
}

// longestFirst finds added tokens in text as llama.cpp's tokenizer does
// (tokenizer_st_partition in src/llama-vocab.cpp): token by token, longest
// first, every occurrence in the text not yet taken is cut out, left to
// right. Where no two tokens overlap in part (see partialOverlap), that
// takes the same occurrences as addedMatcher: the outermost ones.
type longestFirst []addedEntry

func newLongestFirst(tokens []addedTokenJSON) longestFirst {
	m := make(longestFirst, len(tokens))
	for i, a := range tokens {
		m[i] = addedEntry{a.Content, a.ID}
	}
	// llama.cpp's std::sort leaves the order of equal lengths unspecified;
	// ids decide here.
	sort.SliceStable(m, func(i, j int) bool {
		if len(m[i].text) != len(m[j].text) {
			return len(m[i].text) > len(m[j].text)
		}
		return m[i].id < m[j].id
	})
	return m
}

func (m longestFirst) split(s string, text func(string), token func(id int)) {
	type fragment struct{ start, end, id int } // id -1: text s[start:end]
	frags := []fragment{{0, len(s), -1}}
	var next []fragment
	for _, e := range m {
		next = next[:0]
		for _, f := range frags {
			if f.id >= 0 {
				next = append(next, f)
				continue
			}
			at := f.start
			for {
				i := strings.Index(s[at:f.end], e.text)
				if i < 0 {
					break
				}
				if i > 0 {
					next = append(next, fragment{at, at + i, -1})
				}
				at += i + len(e.text)
				next = append(next, fragment{at - len(e.text), at, e.id})
			}
			if at < f.end {
				next = append(next, fragment{at, f.end, -1})
			}
		}
		frags, next = next, frags
	}
	for _, f := range frags {
		if f.id >= 0 {
			token(f.id)
		} else {
			text(s[f.start:f.end])
		}
	}
}

// partialOverlap returns two texts such that the end of the first is the
// start of the second, without either holding the other there (a text may
// overlap itself, as "aba" does), and ok false when there are none. Without
// such a pair, the occurrences of the texts in any string nest or are
// disjoint, and leftmost-longest matching and llama.cpp's longest-first
// matching cut the same ones.
func partialOverlap(texts []string) (a, b string, ok bool) {
	for _, x := range texts {
		for _, y := range texts {
			for k := min(len(x), len(y)) - 1; k > 0; k-- {
				if x[len(x)-k:] == y[:k] {
					return x, y, true
				}
			}
		}
	}
	return "", "", false
}
