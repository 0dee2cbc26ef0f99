package tokenizer

import (
	"strings"
	"unicode"
)

// foldCaseGroups rewrites each case-insensitive group (?i:...) of a pattern
// whose body is only literal letters, apostrophes and alternation, such as
// Qwen2's and Llama 3's (?i:'s|'t|'re|'ve|'m|'ll|'d), into a plain group
// whose letters are classes of their whole case-folding orbit:
// (?:'[sSſ]|'[tT]|...). HuggingFace runs patterns with Oniguruma, which
// matches case-insensitively by Unicode case folding, so that "'ſ" (U+017F
// LATIN SMALL LETTER LONG S, which folds to s) is a contraction there;
// regexp2 compares lower-cased runes instead and misses it. Groups with any
// other syntax are left as they are.
func foldCaseGroups(pattern string) string {
	const open = "(?i:"
	var b strings.Builder
	for {
		i := strings.Index(pattern, open)
		if i < 0 {
			b.WriteString(pattern)
			return b.String()
		}
		end := strings.IndexByte(pattern[i:], ')')
		body := ""
		if end >= 0 {
			body = pattern[i+len(open) : i+end]
		}
		if end < 0 || (i > 0 && pattern[i-1] == '\\') || !literalAlternation(body) {
			b.WriteString(pattern[:i+len(open)])
			pattern = pattern[i+len(open):]
			continue
		}
		b.WriteString(pattern[:i])
		b.WriteString("(?:")
		for _, r := range body {
			if unicode.IsLetter(r) {
				b.WriteString(foldClass(r))
			} else {
				b.WriteRune(r)
			}
		}
		b.WriteByte(')')
		pattern = pattern[i+end+1:]
	}
}

// literalAlternation reports whether s is ASCII letters and apostrophes
// separated by |, which have no meaning in a regular expression but
// themselves.
func literalAlternation(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '\'' || c == '|') {
			return false
		}
	}
	return s != ""
}

// foldClass is the character class of every rune that case-folds like r,
// e.g. [sSſ] for s and [kKK] for k (U+212A KELVIN SIGN).
func foldClass(r rune) string {
	var b strings.Builder
	b.WriteByte('[')
	b.WriteRune(r)
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		b.WriteRune(f)
	}
	b.WriteByte(']')
	return b.String()
}
