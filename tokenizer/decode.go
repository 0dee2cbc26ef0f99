package tokenizer

import (
	"fmt"
	"unicode/utf8"
)

// Decode returns the text of ids, special tokens included, as HuggingFace's
// tokenizer.decode(ids) does for Qwen: the tokens' bytes are joined and
// invalid UTF-8 (a character cut off by the end of ids, say) becomes U+FFFD.
// An id the vocabulary does not assign is an error naming it.
//
// tokenizer_config.json's clean_up_tokenization_spaces (Llama 3.2 sets it)
// is not applied, as transformers 5's decode does not apply it to BPE
// tokenizers (the parity test checks transformers 5.17's output).
func (t *Tokenizer) Decode(ids []int) (string, error) {
	return t.decode(ids, false)
}

// DecodeSkipSpecial is Decode with skip_special_tokens=True: the ids for
// which IsSpecial holds are left out. RAGEN decodes generations this way.
func (t *Tokenizer) DecodeSkipSpecial(ids []int) (string, error) {
	return t.decode(ids, true)
}

func (t *Tokenizer) decode(ids []int, skipSpecial bool) (string, error) {
	buf := make([]byte, 0, 4*len(ids))
	for _, id := range ids {
		b, err := t.tokenBytes(id)
		if err != nil {
			return "", err
		}
		if skipSpecial && t.special[id] {
			continue
		}
		buf = append(buf, b...)
	}
	if utf8.Valid(buf) {
		return string(buf), nil
	}
	return string(appendLossy(nil, buf)), nil
}

// tokenBytes returns the bytes of id, or an error naming an id outside the
// vocabulary.
func (t *Tokenizer) tokenBytes(id int) ([]byte, error) {
	if id < 0 || id >= len(t.tokens) {
		return nil, fmt.Errorf("token id %d is out of range [0, %d)", id, len(t.tokens))
	}
	b := t.tokens[id]
	if b == nil {
		return nil, fmt.Errorf("token id %d is not assigned by %s", id, t.path)
	}
	return b, nil
}

// StreamDecoder decodes ids one at a time as a model generates them. It
// holds back the bytes of a character that has not arrived in full, so it
// never emits a broken UTF-8 sequence, and the text it emits followed by
// Flush equals Decode (or DecodeSkipSpecial) of all the ids it was given;
// like vLLM's incremental detokenizer, it never applies
// clean_up_tokenization_spaces, whose rewrites span tokens.
// A StreamDecoder is not safe for concurrent use.
type StreamDecoder struct {
	t           *Tokenizer
	skipSpecial bool
	pending     []byte // the start of a character still being received
}

// NewStreamDecoder returns a decoder that starts empty. With skipSpecial, it
// leaves out special tokens as DecodeSkipSpecial does.
func (t *Tokenizer) NewStreamDecoder(skipSpecial bool) *StreamDecoder {
	return &StreamDecoder{t: t, skipSpecial: skipSpecial}
}

// Add takes the next id and returns the text that is now complete, often
// "" while a multi-byte character is split across tokens. An id outside the
// vocabulary is an error, and the decoder is left as it was.
func (d *StreamDecoder) Add(id int) (string, error) {
	b, err := d.t.tokenBytes(id)
	if err != nil {
		return "", err
	}
	if d.skipSpecial && d.t.special[id] {
		return "", nil
	}
	d.pending = append(d.pending, b...)
	keep := incompleteTail(d.pending)
	done := d.pending[:len(d.pending)-keep]
	var out string
	if utf8.Valid(done) {
		out = string(done)
	} else {
		out = string(appendLossy(nil, done))
	}
	d.pending = append(d.pending[:0], d.pending[len(d.pending)-keep:]...)
	return out, nil
}

// Flush returns what is held back, with U+FFFD for the unfinished
// character, and resets the decoder.
func (d *StreamDecoder) Flush() string {
	out := string(appendLossy(nil, d.pending))
	d.pending = d.pending[:0]
	return out
}

// appendLossy appends src to dst with each maximal invalid subsequence
// replaced by U+FFFD, the substitution Rust's String::from_utf8_lossy and
// Python's errors="replace" make (Unicode's "maximal subpart" practice). It
// differs from Go's per-byte replacement: a truncated three-byte character
// becomes one U+FFFD, not two.
func appendLossy(dst, src []byte) []byte {
	for i := 0; i < len(src); {
		c := src[i]
		if c < utf8.RuneSelf {
			dst = append(dst, c)
			i++
			continue
		}
		if r, n := utf8.DecodeRune(src[i:]); r != utf8.RuneError || n > 1 {
			dst = append(dst, src[i:i+n]...)
			i += n
			continue
		}
		// Invalid: skip the longest prefix of a well-formed sequence.
		dst = append(dst, "\uFFFD"...)
		i += validPrefix(src[i:])
	}
	return dst
}

// validPrefix returns how many bytes at the start of b (which does not begin
// with a valid character) form the beginning of a well-formed UTF-8 sequence,
// at least 1. These are the bytes one U+FFFD replaces.
func validPrefix(b []byte) int {
	n, _ := wellFormedPrefix(b)
	return max(n, 1)
}

// incompleteTail returns how many bytes at the end of b are the start of a
// well-formed character still missing bytes; 0 when b ends on a character
// boundary or with bytes that can never become valid.
func incompleteTail(b []byte) int {
	for back := 1; back <= 3 && back <= len(b); back++ {
		c := b[len(b)-back]
		if c < 0x80 {
			return 0
		}
		if c >= 0xC0 { // a lead byte
			n, complete := wellFormedPrefix(b[len(b)-back:])
			if n == back && !complete {
				return back
			}
			return 0
		}
	}
	return 0
}

// wellFormedPrefix scans one sequence from a lead byte: n is how many bytes
// of b follow the well-formed pattern (Unicode Table 3-7), and complete says
// whether they make a whole character.
func wellFormedPrefix(b []byte) (n int, complete bool) {
	if len(b) == 0 {
		return 0, false
	}
	lo, hi := byte(0x80), byte(0xBF) // allowed range of the second byte
	var width int
	switch c := b[0]; {
	case 0xC2 <= c && c <= 0xDF:
		width = 2
	case c == 0xE0:
		width, lo = 3, 0xA0
	case 0xE1 <= c && c <= 0xEC, c == 0xEE, c == 0xEF:
		width = 3
	case c == 0xED:
		width, hi = 3, 0x9F
	case c == 0xF0:
		width, lo = 4, 0x90
	case 0xF1 <= c && c <= 0xF3:
		width = 4
	case c == 0xF4:
		width, hi = 4, 0x8F
	default:
		return 0, false
	}
	n = 1
	for n < width {
		if n >= len(b) {
			return n, false
		}
		c := b[n]
		if n == 1 && (c < lo || c > hi) || n > 1 && (c < 0x80 || c > 0xBF) {
			return n, false
		}
		n++
	}
	return n, true
}
