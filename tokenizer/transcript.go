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

// StopIDs are the ids that end a generated turn: the configured eos, and
// ChatML's <|im_end|> and <|endoftext|> where the vocabulary has them.
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
	for _, s := range []string{"<|im_end|>", "<|endoftext|>"} {
		if id, ok := t.TokenID(s); ok {
			add(id)
		}
	}
	return ids
}
