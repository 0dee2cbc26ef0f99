package tokenizer

import "strings"

// Transcript decodes one generated sequence as it grows (special tokens
// skipped, never a broken UTF-8 sequence) and tells whether its text ends
// with one of the stop strings, e.g. "</answer>".
type Transcript struct {
	dec   *StreamDecoder
	text  strings.Builder
	stops []string
}

// NewTranscript starts an empty transcript.
func (t *Tokenizer) NewTranscript(stops []string) *Transcript {
	return &Transcript{dec: t.NewStreamDecoder(true), stops: stops}
}

// Add appends a token and returns the text it completes (possibly empty).
// An id outside the vocabulary adds nothing.
func (tr *Transcript) Add(id int) string {
	piece, _ := tr.dec.Add(id)
	tr.text.WriteString(piece)
	return piece
}

// Stopped reports whether the text so far ends with a stop string.
func (tr *Transcript) Stopped() bool {
	s := tr.text.String()
	for _, stop := range tr.stops {
		if strings.HasSuffix(s, stop) {
			return true
		}
	}
	return false
}

// Finish flushes any bytes held back and returns them.
func (tr *Transcript) Finish() string {
	rest := tr.dec.Flush()
	tr.text.WriteString(rest)
	return rest
}

// Text is everything decoded so far.
func (tr *Transcript) Text() string { return tr.text.String() }

// StopIDs are the ids that end a generated turn: the configured eos, the
// special token the chat template closes an assistant message with
// (<|im_end|>, <|eot_id|>, ...), and ChatML's <|im_end|> and <|endoftext|>
// where the vocabulary has them.
func (t *Tokenizer) StopIDs() []int {
	var ids []int
	seen := map[int]bool{}
	add := func(id int) {
		if id >= 0 && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	add(t.EOS())
	if id, ok := t.endOfTurn(); ok {
		add(id)
	}
	for _, s := range []string{"<|im_end|>", "<|endoftext|>"} {
		if id, ok := t.TokenID(s); ok {
			add(id)
		}
	}
	return ids
}

// endOfTurn is the special token the chat template writes right after an
// assistant message's content, if it writes one.
func (t *Tokenizer) endOfTurn() (int, bool) {
	const mark = "\ue000ragen-end-of-turn\ue001"
	if !t.HasChatTemplate() {
		return 0, false
	}
	text, err := t.RenderChat([]Message{{RoleUser, "x"}, {RoleAssistant, mark}}, false)
	if err != nil {
		return 0, false
	}
	_, tail, ok := strings.Cut(text, mark)
	if !ok {
		return 0, false
	}
	best, bestLen := 0, 0
	for content, id := range t.addedIDs {
		if t.special[id] && len(content) > bestLen && strings.HasPrefix(tail, content) {
			best, bestLen = id, len(content)
		}
	}
	return best, bestLen > 0
}
