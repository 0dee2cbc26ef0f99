package tokenizer

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Qwen's tokenizer.json is 11 MB, nearly all of it the vocabulary and the
// merge list. encoding/json takes most of a second over it, so Load cuts
// those two values out with the small scanner below, decodes the rest with
// encoding/json, and parses the two big values with dedicated loops.

// scanner reads JSON from data, strictly: any deviation from the grammar
// is an error at pos.
type scanner struct {
	data  []byte
	pos   int
	depth int // objects and arrays skip is inside
}

// maxDepth bounds the nesting skip follows, as encoding/json's does: each
// level is a Go call, and "[[[…" 10 MB deep would otherwise overflow the
// stack, which kills the process instead of returning an error.
const maxDepth = 10000

func (s *scanner) errorf(format string, a ...any) error {
	return &scanError{Offset: s.pos, Msg: fmt.Sprintf(format, a...)}
}

// scanError is a JSON syntax error at a byte offset of the scanned data.
type scanError struct {
	Offset int
	Msg    string
}

func (e *scanError) Error() string { return e.Msg }

func (s *scanner) ws() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, 0 at the end.
func (s *scanner) peek() byte {
	s.ws()
	if s.pos >= len(s.data) {
		return 0
	}
	return s.data[s.pos]
}

func (s *scanner) expect(c byte) error {
	if s.peek() != c {
		return s.errorf("want %q", c)
	}
	s.pos++
	return nil
}

// str reads a string and appends its decoded UTF-8 to dst.
func (s *scanner) str(dst []byte) ([]byte, error) {
	if err := s.expect('"'); err != nil {
		return dst, err
	}
	d := s.data
	for {
		start := s.pos
		for s.pos < len(d) && d[s.pos] != '"' && d[s.pos] != '\\' && d[s.pos] >= 0x20 {
			s.pos++
		}
		dst = append(dst, d[start:s.pos]...)
		if s.pos >= len(d) {
			return dst, s.errorf("unterminated string")
		}
		switch c := d[s.pos]; {
		case c == '"':
			s.pos++
			return dst, nil
		case c < 0x20:
			return dst, s.errorf("control character in string")
		}
		// An escape.
		if s.pos+1 >= len(d) {
			return dst, s.errorf("unterminated escape")
		}
		e := d[s.pos+1]
		s.pos += 2
		switch e {
		case '"', '\\', '/':
			dst = append(dst, e)
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, err := s.hex4()
			if err != nil {
				return dst, err
			}
			if utf16.IsSurrogate(r) {
				// A pair, or a lone half, which encoding/json makes U+FFFD.
				r2 := rune(-1)
				if s.pos+1 < len(d) && d[s.pos] == '\\' && d[s.pos+1] == 'u' {
					save := s.pos
					s.pos += 2
					if r2, err = s.hex4(); err != nil {
						return dst, err
					}
					if utf16.DecodeRune(r, r2) == utf8.RuneError {
						s.pos = save
						r2 = -1
					}
				}
				if r2 < 0 {
					r = utf8.RuneError
				} else {
					r = utf16.DecodeRune(r, r2)
				}
			}
			dst = utf8.AppendRune(dst, r)
		default:
			return dst, s.errorf("invalid escape \\%c", e)
		}
	}
}

func (s *scanner) hex4() (rune, error) {
	if s.pos+4 > len(s.data) {
		return 0, s.errorf("short \\u escape")
	}
	v, err := strconv.ParseUint(string(s.data[s.pos:s.pos+4]), 16, 32)
	if err != nil {
		return 0, s.errorf("invalid \\u escape")
	}
	s.pos += 4
	return rune(v), nil
}

// int reads a JSON number that must be an integer.
func (s *scanner) int() (int, error) {
	s.ws()
	start := s.pos
	if s.pos < len(s.data) && s.data[s.pos] == '-' {
		s.pos++
	}
	digits := s.pos
	for s.pos < len(s.data) && '0' <= s.data[s.pos] && s.data[s.pos] <= '9' {
		s.pos++
	}
	n, err := strconv.Atoi(string(s.data[start:s.pos]))
	if err != nil || s.data[digits] == '0' && s.pos-digits > 1 { // JSON has no leading zeros
		s.pos = start
		return 0, s.errorf("want an integer")
	}
	if s.pos < len(s.data) {
		switch s.data[s.pos] {
		case '.', 'e', 'E':
			return 0, s.errorf("want an integer")
		}
	}
	return n, nil
}

// skip moves past one value of any kind.
func (s *scanner) skip() error {
	switch c := s.peek(); c {
	case '"':
		return s.skipString()
	case '{', '[':
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		if s.depth++; s.depth > maxDepth {
			return s.errorf("nested more than %d levels deep", maxDepth)
		}
		defer func() { s.depth-- }()
		s.pos++
		if s.peek() == closer {
			s.pos++
			return nil
		}
		for {
			if c == '{' {
				if _, err := s.str(nil); err != nil {
					return err
				}
				if err := s.expect(':'); err != nil {
					return err
				}
			}
			if err := s.skip(); err != nil {
				return err
			}
			switch s.peek() {
			case ',':
				s.pos++
			case closer:
				s.pos++
				return nil
			default:
				return s.errorf("want ',' or %q", closer)
			}
		}
	default:
		start := s.pos
		for s.pos < len(s.data) {
			switch s.data[s.pos] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
			default:
				s.pos++
				continue
			}
			break
		}
		if s.pos == start {
			return s.errorf("want a value")
		}
		return nil // the literal itself is checked by encoding/json later
	}
}

// skipString moves past a string without decoding it. It is lenient: the
// strings it skips are either parsed strictly later or decoded by
// encoding/json.
func (s *scanner) skipString() error {
	d := s.data
	s.pos++ // the opening quote
	for {
		j := bytes.IndexByte(d[s.pos:], '"')
		if j < 0 {
			return s.errorf("unterminated string")
		}
		end := s.pos + j
		// The quote is escaped when an odd number of backslashes precede it.
		k := end
		for k > s.pos && d[k-1] == '\\' {
			k--
		}
		s.pos = end + 1
		if (end-k)%2 == 0 {
			return nil
		}
	}
}

// members calls f at each member of the object at the scanner, positioned
// at the member's value; f must consume the value. key is only valid
// during the call.
func (s *scanner) members(f func(key []byte) error) error {
	if err := s.expect('{'); err != nil {
		return err
	}
	if s.peek() == '}' {
		s.pos++
		return nil
	}
	var key []byte
	for {
		var err error
		if key, err = s.str(key[:0]); err != nil {
			return err
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		if err := f(key); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.pos++
		case '}':
			s.pos++
			return nil
		default:
			return s.errorf("want ',' or '}'")
		}
	}
}

// span is a byte range of the scanned data.
type span struct{ start, end int }

// findModelParts locates the values of model.vocab and model.merges in a
// tokenizer.json; a missing one is left empty.
func findModelParts(data []byte) (vocab, merges span, err error) {
	s := &scanner{data: data}
	err = s.members(func(key []byte) error {
		if string(key) != "model" || s.peek() != '{' {
			return s.skip()
		}
		return s.members(func(key []byte) error {
			start := s.pos
			err := s.skip()
			switch string(key) {
			case "vocab":
				vocab = span{start, s.pos}
			case "merges":
				merges = span{start, s.pos}
			}
			return err
		})
	})
	if err == nil && s.peek() != 0 {
		err = s.errorf("data after the top-level object")
	}
	return vocab, merges, err
}

// blankOut returns data with the given spans replaced by null, so that
// encoding/json can decode the rest cheaply.
func blankOut(data []byte, spans ...span) []byte {
	sort.Slice(spans, func(i, j int) bool { return spans[i].start < spans[j].start })
	out := make([]byte, 0, 64<<10)
	prev := 0
	for _, sp := range spans {
		if sp.end == 0 {
			continue // absent
		}
		out = append(out, data[prev:sp.start]...)
		out = append(out, "null"...)
		prev = sp.end
	}
	return append(out, data[prev:]...)
}
