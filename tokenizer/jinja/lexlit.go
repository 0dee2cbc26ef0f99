package jinja

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Literals of the lexer: numbers and strings as Jinja (and Python) read
// them, and Python's notion of whitespace.

// number lexes an integer (decimal, 0b, 0o, 0x, with "_" separators) or a
// float (with a fraction or an exponent), as Jinja's patterns do.
func (l *lexer) number() error {
	s := l.src
	if f := floatLen(s[l.pos:]); f > 0 && (l.pos == 0 || s[l.pos-1] != '.') {
		l.emit(tFloat, strings.ReplaceAll(s[l.pos:l.pos+f], "_", ""))
		l.pos += f
		return nil
	}
	n := intLen(s[l.pos:])
	l.emit(tInt, strings.ReplaceAll(s[l.pos:l.pos+n], "_", ""))
	l.pos += n
	return nil
}

// digitsLen is the length of (\d+_)*\d+ at the start of s.
func digitsLen(s string) int {
	n := 0
	for {
		j := n
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j == n {
			if n > 0 && s[n-1] == '_' {
				return n - 1
			}
			return n
		}
		n = j
		if n < len(s) && s[n] == '_' {
			n++
			continue
		}
		return n
	}
}

// floatLen is the length of Jinja's float pattern at the start of s, or 0.
func floatLen(s string) int {
	n := digitsLen(s)
	if n == 0 {
		return 0
	}
	exp := func(i int) int {
		if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
			j := i + 1
			if j < len(s) && (s[j] == '+' || s[j] == '-') {
				j++
			}
			if d := digitsLen(s[j:]); d > 0 {
				return j + d
			}
		}
		return 0
	}
	if n < len(s) && s[n] == '.' {
		if d := digitsLen(s[n+1:]); d > 0 {
			if e := exp(n + 1 + d); e > 0 {
				return e
			}
			return n + 1 + d
		}
		return 0
	}
	return exp(n)
}

// intLen is the length of Jinja's integer pattern at the start of s, which
// starts with a digit.
func intLen(s string) int {
	if len(s) > 2 && s[0] == '0' {
		var ok func(byte) bool
		switch s[1] {
		case 'b', 'B':
			ok = func(c byte) bool { return c == '0' || c == '1' }
		case 'o', 'O':
			ok = func(c byte) bool { return c >= '0' && c <= '7' }
		case 'x', 'X':
			ok = func(c byte) bool {
				return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
			}
		}
		if ok != nil {
			n := 2
			for n < len(s) {
				if ok(s[n]) {
					n++
				} else if s[n] == '_' && n+1 < len(s) && ok(s[n+1]) {
					n += 2
				} else {
					break
				}
			}
			if n > 2 {
				return n
			}
		}
	}
	digit := func(c byte) bool { return c >= '0' && c <= '9' }
	if s[0] == '0' {
		digit = func(c byte) bool { return c == '0' }
	}
	n := 1
	for n < len(s) {
		if digit(s[n]) {
			n++
		} else if s[n] == '_' && n+1 < len(s) && digit(s[n+1]) {
			n += 2
		} else {
			break
		}
	}
	return n
}

// str lexes a quoted string and unescapes it as Python's "unicode-escape"
// codec does.
func (l *lexer) str() error {
	s := l.src
	q := s[l.pos]
	j := l.pos + 1
	for j < len(s) && s[j] != q {
		if s[j] == '\\' {
			j++
		}
		j++
	}
	if j >= len(s) {
		return fmt.Errorf("the string is not closed")
	}
	v, err := unescape(s[l.pos+1 : j])
	if err != nil {
		return err
	}
	l.emit(tString, v)
	l.line += strings.Count(s[l.pos:j], "\n")
	l.pos = j + 1
	return nil
}

// unescape decodes Python's backslash escapes; unknown escapes stay as
// they are, as in Python.
func unescape(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case '\n':
		case '\\', '\'', '"':
			b.WriteByte(e)
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case '0', '1', '2', '3', '4', '5', '6', '7': // up to three octal digits
			n, k := 0, 0
			for ; k < 3 && i+k < len(s) && s[i+k] >= '0' && s[i+k] <= '7'; k++ {
				n = n*8 + int(s[i+k]-'0')
			}
			b.WriteRune(rune(n))
			i += k - 1
		case 'x', 'u', 'U':
			n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			var r rune
			for k := 1; k <= n; k++ {
				if i+k >= len(s) {
					return "", fmt.Errorf("the string has a truncated \\%c escape", e)
				}
				d := hexVal(s[i+k])
				if d < 0 {
					return "", fmt.Errorf("the string has a truncated \\%c escape", e)
				}
				r = r*16 + rune(d)
			}
			if r > unicode.MaxRune {
				return "", fmt.Errorf("the string has an illegal Unicode character escape")
			}
			if r >= 0xD800 && r <= 0xDFFF {
				return "", fmt.Errorf("the string escapes a lone surrogate, which Go strings cannot hold")
			}
			b.WriteRune(r)
			i += n
		case 'N':
			return "", fmt.Errorf("the \\N{...} escape is not supported")
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return b.String(), nil
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// isPySpace reports whether r is whitespace to Python (str.isspace and the
// \s of its re module), which counts U+001C..U+001F where Go does not.
func isPySpace(r rune) bool {
	return r >= 0x1c && r <= 0x1f || unicode.IsSpace(r)
}

func allSpace(s string) bool {
	for _, r := range s {
		if !isPySpace(r) {
			return false
		}
	}
	return true
}

// skipSpace returns the index after the whitespace of s starting at i.
func skipSpace(s string, i int) int {
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !isPySpace(r) {
			break
		}
		i += size
	}
	return i
}
