package jinja

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Python's str methods over Go strings, indexing by code point.

// specialUpper are the full uppercase mappings Python applies where Go's
// simple one keeps the character (Unicode SpecialCasing.txt).
var specialUpper = map[rune]string{
	'ß': "SS", 'ŉ': "ʼN", 'ǰ': "J̌", 'ΐ': "Ϊ́", 'ΰ': "Ϋ́", 'և': "ԵՒ",
	'ﬀ': "FF", 'ﬁ': "FI", 'ﬂ': "FL", 'ﬃ': "FFI", 'ﬄ': "FFL", 'ﬅ': "ST", 'ﬆ': "ST",
}

func pyUpper(s string) string {
	var b strings.Builder
	for _, r := range s {
		if u, ok := specialUpper[r]; ok {
			b.WriteString(u)
		} else {
			b.WriteRune(unicode.ToUpper(r))
		}
	}
	return b.String()
}

// specialTitle are the full titlecase mappings Python applies where Go's
// simple one keeps the character.
var specialTitle = map[rune]string{
	'ß': "Ss", 'ŉ': "ʼN", 'ǰ': "J̌", 'ΐ': "Ϊ́", 'ΰ': "Ϋ́", 'և': "Եւ",
	'ﬀ': "Ff", 'ﬁ': "Fi", 'ﬂ': "Fl", 'ﬃ': "Ffi", 'ﬄ': "Ffl", 'ﬅ': "St", 'ﬆ': "St",
}

func titleRune(r rune) string {
	if t, ok := specialTitle[r]; ok {
		return t
	}
	return string(unicode.ToTitle(r))
}

// pyLower is str.lower, with Python's full mapping of İ and its final
// sigma: Σ ending a word lowercases to ς.
func pyLower(s string) string {
	var b strings.Builder
	runes := []rune(s)
	for i, r := range runes {
		switch {
		case r == 'İ':
			b.WriteString("i̇")
		case r == 'Σ' && i > 0 && isCased(runes[i-1]) && (i+1 == len(runes) || !isCased(runes[i+1])):
			b.WriteRune('ς')
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

func isCased(r rune) bool { return unicode.IsUpper(r) || unicode.IsLower(r) || unicode.IsTitle(r) }

// pyTitle is str.title: a cased character after an uncased one starts a
// word and is titlecased, the others are lowercased.
func pyTitle(s string) string {
	var b strings.Builder
	prevCased := false
	for _, r := range s {
		if prevCased {
			b.WriteString(pyLower(string(r)))
		} else {
			b.WriteString(titleRune(r))
		}
		prevCased = isCased(r)
	}
	return b.String()
}

// pyCapitalize is str.capitalize: the first character titlecased, the
// rest lowercased.
func pyCapitalize(s string) string {
	r, size := utf8.DecodeRuneInString(s)
	if size == 0 {
		return s
	}
	return titleRune(r) + pyLower(s[size:])
}

func pySwapcase(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case unicode.IsUpper(r):
			b.WriteString(pyLower(string(r)))
		case unicode.IsLower(r):
			b.WriteString(pyUpper(string(r)))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// jinjaTitle is Jinja's title filter: words split at runs of "-", "(",
// "{", "[", "<" and whitespace; each word's first character uppercased
// and the rest lowercased.
func jinjaTitle(s string) string {
	isSep := func(r rune) bool { return strings.ContainsRune("-({[<", r) || isPySpace(r) }
	var b strings.Builder
	start := true
	for _, r := range s {
		switch {
		case isSep(r):
			b.WriteRune(r)
			start = true
		case start:
			b.WriteString(pyUpper(string(r)))
			start = false
		default:
			b.WriteString(pyLower(string(r)))
		}
	}
	return b.String()
}

// pySplit is str.split / str.rsplit.
func pySplit(s string, sep, maxsplit any, hasMax, right bool) (any, error) {
	n := int64(-1)
	if hasMax {
		m, _, isInt, ok := number(maxsplit)
		if !ok || !isInt {
			return nil, fmt.Errorf("'%s' object cannot be interpreted as an integer", typeName(maxsplit))
		}
		n = m
	}
	var parts []string
	if sep == nil {
		parts = splitSpace(s, n, right)
	} else {
		p, ok := asString(sep)
		if !ok {
			return nil, fmt.Errorf("must be str or None, not %s", typeName(sep))
		}
		if p == "" {
			return nil, fmt.Errorf("empty separator")
		}
		switch {
		case n < 0:
			parts = strings.Split(s, p)
		case !right:
			parts = strings.SplitN(s, p, int(min(n, int64(len(s))))+1)
		default:
			parts = rsplitN(s, p, n)
		}
	}
	out := make([]any, len(parts))
	for i, x := range parts {
		out[i] = x
	}
	return out, nil
}

func rsplitN(s, sep string, n int64) []string {
	var rev []string
	for ; n > 0; n-- {
		i := strings.LastIndex(s, sep)
		if i < 0 {
			break
		}
		rev = append(rev, s[i+len(sep):])
		s = s[:i]
	}
	out := []string{s}
	for i := len(rev) - 1; i >= 0; i-- {
		out = append(out, rev[i])
	}
	return out
}

// splitSpace splits at runs of whitespace, dropping empty strings, with
// at most n splits (negative: all) from the left or the right; the
// unsplit remainder keeps its whitespace, as in Python.
func splitSpace(s string, n int64, right bool) []string {
	var out []string
	if !right {
		rest := strings.TrimLeftFunc(s, isPySpace)
		for ; n != 0 && rest != ""; n-- {
			i := strings.IndexFunc(rest, isPySpace)
			if i < 0 {
				break
			}
			out = append(out, rest[:i])
			rest = strings.TrimLeftFunc(rest[i:], isPySpace)
		}
		if rest != "" {
			out = append(out, rest)
		}
		return out
	}
	rest := strings.TrimRightFunc(s, isPySpace)
	for ; n != 0 && rest != ""; n-- {
		i := strings.LastIndexFunc(rest, isPySpace)
		if i < 0 {
			break
		}
		_, size := utf8.DecodeRuneInString(rest[i:])
		out = append(out, rest[i+size:])
		rest = strings.TrimRightFunc(rest[:i], isPySpace)
	}
	if rest != "" {
		out = append(out, rest)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// isLineBreak is a line boundary of str.splitlines.
func isLineBreak(r rune) bool {
	switch r {
	case '\n', '\r', '\v', '\f', 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029:
		return true
	}
	return false
}

// splitLines is str.splitlines(keepends).
func splitLines(s string, keep bool) []string {
	var out []string
	start := 0
	for i, r := range s {
		if i < start || !isLineBreak(r) {
			continue
		}
		end := i + utf8.RuneLen(r)
		if r == '\r' && end < len(s) && s[end] == '\n' {
			end++
		}
		if keep {
			out = append(out, s[start:end])
		} else {
			out = append(out, s[start:i])
		}
		start = end
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// runeRange converts Python's optional start and end arguments to a
// range of code points of a string of n; beyond says the start lies past
// the end, where Python finds nothing, not even "".
func runeRange(a []any, given []bool, n int) (lo, hi int, beyond bool, err error) {
	lo, hi = 0, n
	for k, dst := range []*int{&lo, &hi} {
		if !given[k+1] || a[k+1] == nil {
			continue
		}
		v, _, isInt, ok := number(a[k+1])
		if !ok || !isInt {
			return 0, 0, false, fmt.Errorf("slice indices must be integers or None or have an __index__ method")
		}
		i := int(max(min(v, 1<<40), -1<<40))
		if i < 0 {
			i += n
		}
		beyond = beyond || k == 0 && i > n
		*dst = max(0, min(i, n))
	}
	return lo, hi, beyond, nil
}

// strSearch is find, rfind, index, rindex and count.
func strSearch(s, name string, a []any, given []bool) (any, error) {
	sub, ok := asString(a[0])
	if !given[0] || !ok {
		return nil, fmt.Errorf("must be str, not %s", typeName(a[0]))
	}
	runes := []rune(s)
	lo, hi, beyond, err := runeRange(a, given, len(runes))
	if err != nil {
		return nil, err
	}
	if beyond {
		lo = hi + 1
	}
	if lo > hi {
		if name == "count" {
			return int64(0), nil
		}
		lo = hi + 1 // nothing found, as Python
	}
	var hay string
	if lo <= hi {
		hay = string(runes[lo:hi])
	}
	if name == "count" {
		if sub == "" {
			return int64(utf8.RuneCountInString(hay) + 1), nil
		}
		return int64(strings.Count(hay, sub)), nil
	}
	i := -1
	if lo <= hi {
		if name == "find" || name == "index" {
			i = strings.Index(hay, sub)
		} else {
			i = strings.LastIndex(hay, sub)
		}
	}
	if i < 0 {
		if name == "index" || name == "rindex" {
			return nil, fmt.Errorf("substring not found")
		}
		return int64(-1), nil
	}
	return int64(lo + utf8.RuneCountInString(hay[:i])), nil
}

// pad is center, ljust, rjust and zfill.
func pad(r *renderer, s, name string, a []any, given []bool) (any, error) {
	w, _, isInt, ok := number(a[0])
	if !given[0] || !ok || !isInt {
		return nil, fmt.Errorf("%s() needs an integer width", name)
	}
	if err := r.checkSize(int(min(w, 1<<31))); err != nil {
		return nil, err
	}
	fill := " "
	if name != "zfill" && given[1] {
		f, ok := asString(a[1])
		if !ok || utf8.RuneCountInString(f) != 1 {
			return nil, fmt.Errorf("The fill character must be exactly one character long")
		}
		fill = f
	}
	n := utf8.RuneCountInString(s)
	total := int(w) - n
	if total <= 0 {
		return s, nil
	}
	switch name {
	case "ljust":
		return s + strings.Repeat(fill, total), nil
	case "rjust":
		return strings.Repeat(fill, total) + s, nil
	case "zfill":
		sign := ""
		if s != "" && (s[0] == '+' || s[0] == '-') {
			sign, s = s[:1], s[1:]
		}
		return sign + strings.Repeat("0", total) + s, nil
	}
	left := total/2 + (total & int(w) & 1) // CPython's centring
	return strings.Repeat(fill, left) + s + strings.Repeat(fill, total-left), nil
}

// strIs is the str.is* predicates.
func strIs(s, name string) bool {
	switch name {
	case "islower":
		return casedAll(s, unicode.IsLower)
	case "isupper":
		return casedAll(s, unicode.IsUpper)
	case "isascii":
		for i := 0; i < len(s); i++ {
			if s[i] >= 0x80 {
				return false
			}
		}
		return true
	case "isidentifier":
		for i, r := range s {
			if !(r == '_' || unicode.IsLetter(r) || i > 0 && (unicode.IsDigit(r) || unicode.In(r, unicode.Mn, unicode.Mc, unicode.Pc))) {
				return false
			}
		}
		return s != ""
	case "istitle":
		prevCased, any := false, false
		for _, r := range s {
			switch {
			case unicode.IsUpper(r) || unicode.IsTitle(r):
				if prevCased {
					return false
				}
				prevCased, any = true, true
			case unicode.IsLower(r):
				if !prevCased {
					return false
				}
			default:
				prevCased = false
			}
		}
		return any
	case "isprintable":
		for _, r := range s {
			if !unicode.IsPrint(r) {
				return false
			}
		}
		return true
	}
	if s == "" {
		return false
	}
	var ok func(rune) bool
	switch name {
	case "isalnum":
		ok = func(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }
	case "isalpha":
		ok = unicode.IsLetter
	case "isdecimal":
		ok = unicode.IsDigit
	case "isdigit":
		ok = func(r rune) bool { return unicode.IsDigit(r) || unicode.Is(unicode.No, r) && r != '½' }
	case "isnumeric":
		ok = unicode.IsNumber
	case "isspace":
		ok = isPySpace
	}
	for _, r := range s {
		if !ok(r) {
			return false
		}
	}
	return true
}
