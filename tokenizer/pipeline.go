package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode"
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
	re, err := regexp2.Compile(foldCaseGroups(pattern), regexp2.None)
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

// preStep is one step of a pre-tokenizer as the file states it, kept to
// tell which of llama.cpp's pre-tokenizers it is (gguf.go).
type preStep struct {
	kind       string // "Split", "Digits" or "ByteLevel"
	pattern    string // Split's regular expression
	individual bool   // Digits' individual_digits
	useRegex   bool   // ByteLevel's use_regex
}

// parsePreTokenizer builds the file's pre-tokenizer, and a hand-written
// equivalent when its only pattern is one of fastPatterns.
func parsePreTokenizer(raw json.RawMessage) (general, fast splitter, steps []preStep, err error) {
	if isNull(raw) {
		return nil, nil, nil, errors.New("none given; byte-level BPE needs a ByteLevel pre-tokenizer")
	}
	var top componentJSON
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, nil, nil, err
	}
	list := []json.RawMessage{raw}
	if top.Type == "Sequence" {
		if err := checkComponent("pre_tokenizer", top.Type, raw); err != nil {
			return nil, nil, nil, err
		}
		list = top.Pretokenizers
	}
	for i, st := range list {
		var c componentJSON
		if err := json.Unmarshal(st, &c); err != nil {
			return nil, nil, nil, err
		}
		if err := checkComponent("pre_tokenizer", c.Type, st); err != nil {
			return nil, nil, nil, err
		}
		if len(steps) > 0 && steps[len(steps)-1].kind == "ByteLevel" {
			return nil, nil, nil, fmt.Errorf("step %d (%s) follows ByteLevel; only a final ByteLevel is supported", i, c.Type)
		}
		switch c.Type {
		case "Split":
			if c.Behavior != "Isolated" {
				return nil, nil, nil, fmt.Errorf("Split behavior %q is not supported (only Isolated)", c.Behavior)
			}
			if c.Invert {
				return nil, nil, nil, errors.New("Split with invert is not supported")
			}
			if c.Pattern == nil || (c.Pattern.Regex == nil) == (c.Pattern.String == nil) {
				return nil, nil, nil, errors.New("Split needs a pattern with exactly one of Regex or String")
			}
			pat := ""
			if c.Pattern.Regex != nil {
				pat = *c.Pattern.Regex
			} else {
				pat = regexp2.Escape(*c.Pattern.String)
			}
			steps = append(steps, preStep{kind: "Split", pattern: pat})
		case "Digits":
			steps = append(steps, preStep{kind: "Digits", individual: c.IndividualDigits})
		case "ByteLevel":
			if c.AddPrefixSpace {
				return nil, nil, nil, errors.New("ByteLevel add_prefix_space is not supported")
			}
			// HuggingFace's default for use_regex is true.
			steps = append(steps, preStep{kind: "ByteLevel", useRegex: c.UseRegex == nil || *c.UseRegex})
		default:
			return nil, nil, nil, fmt.Errorf("pre-tokenizer %q is not supported (only Split, Digits and ByteLevel)", c.Type)
		}
	}
	if len(steps) == 0 || steps[len(steps)-1].kind != "ByteLevel" {
		return nil, nil, nil, errors.New("no ByteLevel step; only byte-level BPE is supported")
	}
	general, fast, err = buildSplitters(steps)
	return general, fast, steps, err
}

// buildSplitters turns pre-tokenizer steps into splitters.
func buildSplitters(steps []preStep) (general, fast splitter, err error) {
	var seq seqSplitter
	var patterns []string
	for _, st := range steps {
		pat := st.pattern
		switch {
		case st.kind == "Digits":
			seq = append(seq, digitsSplitter{individual: st.individual})
			continue
		case st.kind == "ByteLevel" && !st.useRegex:
			continue
		case st.kind == "ByteLevel":
			pat = gpt2Pattern
		}
		s, err := newRegexSplitter(pat)
		if err != nil {
			return nil, nil, err
		}
		seq = append(seq, s)
		patterns = append(patterns, pat)
	}
	if len(seq) == 1 && len(patterns) == 1 {
		if f, ok := fastPatterns[patterns[0]]; ok {
			fast = f
		}
	}
	return seq, fast, nil
}

// digitsSplitter is HuggingFace's Digits pre-tokenizer: numbers (Unicode
// category N, Rust's char::is_numeric) are cut out, each on its own with
// individual_digits, else in runs.
type digitsSplitter struct {
	individual bool
}

func (d digitsSplitter) split(s string, emit func(string)) {
	start := 0 // of the pending piece
	inRun := false
	for i, r := range s {
		num := r < utf8.RuneSelf && '0' <= r && r <= '9' || r >= utf8.RuneSelf && unicode.IsNumber(r)
		switch {
		case num && (d.individual || !inRun):
			if i > start {
				emit(s[start:i])
			}
			start = i
		case !num && inRun:
			emit(s[start:i])
			start = i
		}
		inRun = num
	}
	if start < len(s) {
		emit(s[start:])
	}
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
	if err := checkComponent("normalizer", c.Type, raw); err != nil {
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
	if err := checkComponent("decoder", c.Type, raw); err != nil {
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
