package tokenizer

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// qwen2Pattern is the Split pattern of Qwen2, Qwen2.5 and Qwen3's
// tokenizer.json, byte for byte. When a file has it, qwen2Splitter stands in
// for running it with regexp2.
const qwen2Pattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`

// llama3Pattern is Llama 3's: Qwen2's but for \p{N}{1,3}, numbers in
// threes.
const llama3Pattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`

// asciiContractions is how llama.cpp writes the contractions of these
// patterns (src/llama-vocab.cpp): case-insensitive in ASCII only.
const asciiContractions = `(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])`

// fastPatterns are the patterns a qwen2Splitter stands in for: Qwen2's and
// Llama 3's, as in tokenizer.json and as llama.cpp adapts them.
var fastPatterns = map[string]qwen2Splitter{
	qwen2Pattern:                {},
	llama3Pattern:               {digits3: true},
	asciiVariant(qwen2Pattern):  {asciiCase: true},
	asciiVariant(llama3Pattern): {digits3: true, asciiCase: true},
}

// asciiVariant is pattern with llama.cpp's ASCII-only contractions.
func asciiVariant(pattern string) string {
	return strings.Replace(pattern, `(?i:'s|'t|'re|'ve|'m|'ll|'d)`, asciiContractions, 1)
}

// qwen2Splitter cuts text exactly where regexp2 running qwen2Pattern (as
// foldCaseGroups rewrites it) does, without a regex engine; its fields
// select the relatives of that pattern in fastPatterns. Every character
// matches some alternative, so the pieces tile the text; at each position
// the first alternative that matches wins (backtracking semantics, not
// longest match):
//
//	A1 (?i:'s|'t|'re|'ve|'m|'ll|'d)  contraction; the only non-ASCII rune
//	                                 that case-folds onto these letters is
//	                                 U+017F ſ (to s)
//	A2 [^\r\n\p{L}\p{N}]?\p{L}+      a letter run, with one leading non-letter
//	A3 \p{N}                         one number (\p{N}{1,3}: up to three)
//	A4 ' '?[^\s\p{L}\p{N}]+[\r\n]*   a symbol run, then any newlines
//	A5 \s*[\r\n]+                    whitespace up to its last newline
//	A6 \s+(?!\S)                     whitespace but the last one before text
//	A7 \s+                           whitespace
//
// Character classes are regexp2's: \p{L} is unicode.Letter, \p{N}
// unicode.Number, \s unicode.IsSpace.
type qwen2Splitter struct {
	digits3   bool // A3 is \p{N}{1,3} (Llama 3)
	asciiCase bool // A1 is asciiContractions (llama.cpp), without ſ
}

func (q qwen2Splitter) split(s string, emit func(string)) {
	for i := 0; i < len(s); {
		j := q.next(s, i)
		emit(s[i:j])
		i = j
	}
}

// Character classes of ASCII, looked up in a table.
const (
	clsL = 1 << iota // \p{L}
	clsN             // \p{N}
	clsS             // \s
)

var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for c := range t {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
			t[c] = clsL
		case '0' <= c && c <= '9':
			t[c] = clsN
		case c == ' ', '\t' <= c && c <= '\r':
			t[c] = clsS
		}
	}
	return t
}()

// runeAt decodes the rune at byte i of s, which is valid UTF-8.
func runeAt(s string, i int) (rune, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(s[i:])
}

func class(r rune) uint8 {
	if r < utf8.RuneSelf {
		return asciiClass[r]
	}
	switch {
	case unicode.IsLetter(r):
		return clsL
	case unicode.IsNumber(r):
		return clsN
	case unicode.IsSpace(r):
		return clsS
	}
	return 0
}

// next returns the end of the piece that starts at byte i.
func (q qwen2Splitter) next(s string, i int) int {
	r0, n0 := runeAt(s, i)
	c0 := class(r0)

	// A1
	if r0 == '\'' {
		if j := contraction(s, i+1, !q.asciiCase); j > 0 {
			return j
		}
	}
	// A2
	if c0 == clsL {
		return letterRun(s, i+n0)
	}
	if r0 != '\r' && r0 != '\n' && c0 != clsN && i+n0 < len(s) {
		if r1, n1 := runeAt(s, i+n0); class(r1) == clsL {
			return letterRun(s, i+n0+n1)
		}
	}
	// A3
	if c0 == clsN {
		j := i + n0
		for k := 1; q.digits3 && k < 3 && j < len(s); k++ {
			r, n := runeAt(s, j)
			if class(r) != clsN {
				break
			}
			j += n
		}
		return j
	}
	// A4
	k := i
	if r0 == ' ' {
		k++
	}
	if k < len(s) {
		if r, n := runeAt(s, k); class(r) == 0 {
			j := k + n
			for j < len(s) {
				r, n := runeAt(s, j)
				if class(r) != 0 {
					break
				}
				j += n
			}
			for j < len(s) && (s[j] == '\r' || s[j] == '\n') {
				j++
			}
			return j
		}
	}
	// r0 is whitespace: every other character matched above.
	end, lastNL, lastStart := i, -1, i
	for end < len(s) {
		r, n := runeAt(s, end)
		if class(r) != clsS {
			break
		}
		if r == '\r' || r == '\n' {
			lastNL = end
		}
		lastStart = end
		end += n
	}
	switch {
	case lastNL >= 0: // A5: \s* backtracks to the last newline
		return lastNL + 1
	case end == len(s): // A6 at the end of the text
		return end
	case lastStart > i: // A6: give back the space before the text
		return lastStart
	default: // A7
		return end
	}
}

// contraction returns the end of A1 after an apostrophe, or -1. longS
// counts ſ as s.
func contraction(s string, k int, longS bool) int {
	if k >= len(s) {
		return -1
	}
	if longS && strings.HasPrefix(s[k:], "ſ") {
		return k + len("ſ")
	}
	lower := func(c byte) byte {
		if 'A' <= c && c <= 'Z' {
			return c + 'a' - 'A'
		}
		return c
	}
	switch lower(s[k]) {
	case 's', 't', 'm', 'd':
		return k + 1
	case 'r', 'v':
		if k+1 < len(s) && lower(s[k+1]) == 'e' {
			return k + 2
		}
	case 'l':
		if k+1 < len(s) && lower(s[k+1]) == 'l' {
			return k + 2
		}
	}
	return -1
}

// letterRun returns the end of the run of letters starting at byte j.
func letterRun(s string, j int) int {
	for j < len(s) {
		r, n := runeAt(s, j)
		if class(r) != clsL {
			break
		}
		j += n
	}
	return j
}
