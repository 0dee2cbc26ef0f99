package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
	"golang.org/x/text/unicode/norm"
)

// splitter is one pre-tokenization step: it cuts a normalised segment into
// pieces, each of which is byte-pair encoded on its own.
type splitter interface {
	// split calls emit with the pieces of s, in order; together they are s.
	split(s string, emit func(piece string))
}

// gpt2Pattern is what ByteLevel splits with when use_regex is on.
const gpt2Pattern = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`

// regexSplitter is HuggingFace's Split pre-tokenizer with behavior
// "Isolated": every match is a piece, and so is the text between matches.
type regexSplitter struct {
	re *regexp2.Regexp
}

func newRegexSplitter(pattern string) (*regexSplitter, error) {
	re, err := regexp2.Compile(pattern, regexp2.None)
	if err != nil {
		return nil, fmt.Errorf("pattern %q: %w", pattern, err)
	}
	return &regexSplitter{re: re}, nil
}

func (r *regexSplitter) split(s string, emit func(string)) {
	// regexp2 reports matches in runes; walk a byte cursor along with them
	// (s is valid UTF-8, so runes and decoded characters agree).
	runePos, bytePos := 0, 0
	to := func(rn int) int {
		for runePos < rn {
			_, n := utf8.DecodeRuneInString(s[bytePos:])
			bytePos += n
			runePos++
		}
		return bytePos
	}
	prev := 0
	m, err := r.re.FindStringMatch(s)
	for err == nil && m != nil {
		start := to(m.Index)
		end := to(m.Index + m.Length)
		if start > prev {
			emit(s[prev:start])
		}
		if end > start {
			emit(s[start:end])
		}
		prev = end
		m, err = r.re.FindNextMatch(m)
	}
	// regexp2 errors only on a match timeout, and none is set.
	if prev < len(s) {
		emit(s[prev:])
	}
}

// seqSplitter applies splitters one after another, each to the pieces of the
// one before, as HuggingFace's Sequence pre-tokenizer does.
type seqSplitter []splitter

func (q seqSplitter) split(s string, emit func(string)) {
	if len(q) == 0 {
		if s != "" {
			emit(s)
		}
		return
	}
	q[0].split(s, func(p string) { q[1:].split(p, emit) })
}

// parsePreTokenizer builds the file's pre-tokenizer, and the fast splitter
// when the file's is exactly Qwen2's.
func parsePreTokenizer(raw json.RawMessage) (general, fast splitter, err error) {
	if isNull(raw) {
		return nil, nil, errors.New("none given; byte-level BPE needs a ByteLevel pre-tokenizer")
	}
	var top componentJSON
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, nil, err
	}
	steps := []json.RawMessage{raw}
	if top.Type == "Sequence" {
		steps = top.Pretokenizers
	}
	var seq seqSplitter
	var patterns []string
	byteLevel := false
	for i, st := range steps {
		var c componentJSON
		if err := json.Unmarshal(st, &c); err != nil {
			return nil, nil, err
		}
		if byteLevel {
			return nil, nil, fmt.Errorf("step %d (%s) follows ByteLevel; only a final ByteLevel is supported", i, c.Type)
		}
		switch c.Type {
		case "Split":
			if c.Behavior != "Isolated" {
				return nil, nil, fmt.Errorf("Split behavior %q is not supported (only Isolated)", c.Behavior)
			}
			if c.Invert {
				return nil, nil, errors.New("Split with invert is not supported")
			}
			if c.Pattern == nil || (c.Pattern.Regex == nil) == (c.Pattern.String == nil) {
				return nil, nil, errors.New("Split needs a pattern with exactly one of Regex or String")
			}
			pat := ""
			if c.Pattern.Regex != nil {
				pat = *c.Pattern.Regex
			} else {
				pat = regexp2.Escape(*c.Pattern.String)
			}
			s, err := newRegexSplitter(pat)
			if err != nil {
				return nil, nil, err
			}
			seq = append(seq, s)
			patterns = append(patterns, pat)
		case "ByteLevel":
			if c.AddPrefixSpace {
				return nil, nil, errors.New("ByteLevel add_prefix_space is not supported")
			}
			if c.UseRegex == nil || *c.UseRegex { // HuggingFace's default is true
				s, err := newRegexSplitter(gpt2Pattern)
				if err != nil {
					return nil, nil, err
				}
				seq = append(seq, s)
				patterns = append(patterns, gpt2Pattern)
			}
			byteLevel = true
		default:
			return nil, nil, fmt.Errorf("pre-tokenizer %q is not supported (only Split and ByteLevel)", c.Type)
		}
	}
	if !byteLevel {
		return nil, nil, errors.New("no ByteLevel step; only byte-level BPE is supported")
	}
	if len(patterns) == 1 && patterns[0] == qwen2Pattern {
		fast = qwen2Splitter{}
	}
	return seq, fast, nil
}

// parseNormalizer returns the file's normalizer, nil when there is none.
func parseNormalizer(raw json.RawMessage) (func(string) string, error) {
	if isNull(raw) {
		return nil, nil
	}
	var c componentJSON
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, err
	}
	// Form.String returns s itself when it is already normal.
	unicodeForm := func(f norm.Form) func(string) string { return f.String }
	switch c.Type {
	case "NFC":
		return unicodeForm(norm.NFC), nil
	case "NFD":
		return unicodeForm(norm.NFD), nil
	case "NFKC":
		return unicodeForm(norm.NFKC), nil
	case "NFKD":
		return unicodeForm(norm.NFKD), nil
	case "Sequence":
		var fs []func(string) string
		for _, n := range c.Normalizers {
			f, err := parseNormalizer(n)
			if err != nil {
				return nil, err
			}
			if f != nil {
				fs = append(fs, f)
			}
		}
		return func(s string) string {
			for _, f := range fs {
				s = f(s)
			}
			return s
		}, nil
	default:
		return nil, fmt.Errorf("normalizer %q is not supported (only NFC, NFD, NFKC, NFKD and Sequence)", c.Type)
	}
}

// checkPostProcessor accepts post-processors that add no tokens.
func checkPostProcessor(raw json.RawMessage) error {
	if isNull(raw) {
		return nil
	}
	var c componentJSON
	if err := json.Unmarshal(raw, &c); err != nil {
		return err
	}
	switch c.Type {
	case "ByteLevel":
		return nil // it adjusts offsets only
	case "TemplateProcessing":
		for _, item := range c.Single {
			if bytes.Contains(item, []byte(`"SpecialToken"`)) {
				return errors.New("TemplateProcessing that adds special tokens is not supported")
			}
		}
		return nil
	default:
		return fmt.Errorf("post-processor %q is not supported", c.Type)
	}
}

// checkDecoder requires the ByteLevel decoder, the inverse of the byte-level
// alphabet, which is what Decode implements.
func checkDecoder(raw json.RawMessage) error {
	if isNull(raw) {
		return errors.New("none given; byte-level BPE needs the ByteLevel decoder")
	}
	var c componentJSON
	if err := json.Unmarshal(raw, &c); err != nil {
		return err
	}
	if c.Type != "ByteLevel" {
		return fmt.Errorf("decoder %q is not supported (only ByteLevel)", c.Type)
	}
	return nil
}

func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || bytes.Equal(raw, []byte("null"))
}
