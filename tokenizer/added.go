package tokenizer

import (
	"sort"
	"strings"
)

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
