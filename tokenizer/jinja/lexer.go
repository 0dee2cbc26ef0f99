package jinja

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// tokKind is the kind of a lexer token.
type tokKind int

const (
	tEOF tokKind = iota
	tData
	tVarBegin
	tVarEnd
	tBlockBegin
	tBlockEnd
	tName
	tString
	tInt
	tFloat
	tOp
)

// token is one lexeme; val holds the text of data, names, strings (already
// unescaped), numbers and operators.
type token struct {
	kind tokKind
	val  string
	line int
}

// operators of Jinja's expression syntax, longest first so that "**" wins
// over "*".
var operators = []string{
	"//", "**", "==", "!=", ">=", "<=",
	"+", "-", "/", "*", "%", "~", "[", "]", "(", ")", "{", "}",
	">", "<", "=", ".", ":", "|", ",", ";",
}

// closer is the closing bracket of each opening one.
var closer = map[byte]byte{'(': ')', '[': ']', '{': '}'}

// lexer splits a template the way Jinja's lexer does with transformers'
// settings: trim_blocks and lstrip_blocks on, newlines normalised to "\n",
// one trailing newline dropped (keep_trailing_newline off).
type lexer struct {
	src          string
	pos          int
	line         int
	toks         []token
	lineStarting bool // the previous match ended with a newline (lstrip_blocks)
}

// lex returns the tokens of src, or a syntax error as (line, message).
func lex(src string) ([]token, int, error) {
	src = strings.ToValidUTF8(src, "\uFFFD")
	src = strings.ReplaceAll(src, "\r\n", "\n")
	src = strings.ReplaceAll(src, "\r", "\n")
	src = strings.TrimSuffix(src, "\n")
	l := &lexer{src: src, line: 1, lineStarting: true}
	if err := l.root(); err != nil {
		return nil, l.line, err
	}
	l.emit(tEOF, "")
	return l.toks, 0, nil
}

func (l *lexer) emit(k tokKind, v string) {
	l.toks = append(l.toks, token{kind: k, val: v, line: l.line})
}

// root lexes template data up to each tag and the tag itself.
func (l *lexer) root() error {
	for l.pos < len(l.src) {
		i, kind := l.nextTag()
		if i < 0 {
			l.emit(tData, l.src[l.pos:])
			return nil
		}
		text := l.src[l.pos:i]
		sign := byte(0)
		if j := i + 2; j < len(l.src) && (l.src[j] == '-' || l.src[j] == '+') {
			sign = l.src[j]
		}
		if kind == tBlockBegin {
			body, bodyEnd, end, isRaw, err := l.rawBlock(i)
			if err != nil {
				return err
			}
			if isRaw {
				l.data(text, sign, true)
				l.raw(i, body, bodyEnd, end)
				continue
			}
		}
		l.data(text, sign, kind != tVarBegin)
		l.pos = i + 2
		if sign != 0 {
			l.pos++
		}
		l.lineStarting = false
		var err error
		switch kind {
		case '#':
			err = l.comment()
		case tVarBegin:
			l.emit(tVarBegin, "")
			err = l.tag(tVarEnd)
		default:
			l.emit(tBlockBegin, "")
			err = l.tag(tBlockEnd)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// nextTag finds the next "{{", "{%" or "{#" at or after l.pos.
func (l *lexer) nextTag() (int, tokKind) {
	for j := l.pos; ; j++ {
		k := strings.IndexByte(l.src[j:], '{')
		if k < 0 || j+k+1 >= len(l.src) {
			return -1, tEOF
		}
		j += k
		switch l.src[j+1] {
		case '{':
			return j, tVarBegin
		case '%':
			return j, tBlockBegin
		case '#':
			return j, '#'
		}
	}
}

// data emits the text before a tag after the tag's whitespace control:
// "-" strips all whitespace before it, and lstrip_blocks strips spaces and
// tabs from the start of the line to a block or comment tag ("+" keeps them).
func (l *lexer) data(text string, sign byte, block bool) {
	orig := text
	switch {
	case sign == '-':
		text = strings.TrimRightFunc(text, isPySpace)
	case sign != '+' && block:
		lpos := strings.LastIndexByte(text, '\n') + 1
		if (lpos > 0 || l.lineStarting) && lpos < len(text) && allSpace(text[lpos:]) {
			text = text[:lpos]
		}
	}
	if text != "" {
		l.emit(tData, text)
	}
	l.line += strings.Count(orig, "\n")
}

// rawBlock matches "{% raw %}" at i (as Jinja: "-%}" strips the
// whitespace after it, a plain "%}" keeps its newline) and returns where its
// body starts, where the body ends and where "{% endraw %}" ends.
func (l *lexer) rawBlock(i int) (body, bodyEnd, end int, ok bool, err error) {
	body, ok = l.rawTag(i, "raw", false)
	if !ok {
		return 0, 0, 0, false, nil
	}
	for k := body; k+1 < len(l.src); k++ {
		if l.src[k] != '{' || l.src[k+1] != '%' {
			continue
		}
		if e, ok := l.rawTag(k, "endraw", true); ok {
			return body, k, e, true, nil
		}
	}
	return 0, 0, 0, true, fmt.Errorf("the {%% raw %%} block is not closed with {%% endraw %%}")
}

// rawTag matches "{%[-+] word [-+]%}" at i and returns where it ends:
// after the whitespace that follows "-%}", and for a closing tag after
// trim_blocks' newline that follows "%}".
func (l *lexer) rawTag(i int, word string, closing bool) (int, bool) {
	s := l.src
	j := i + 2
	if j < len(s) && (s[j] == '-' || s[j] == '+') {
		j++
	}
	j = skipSpace(s, j)
	if !strings.HasPrefix(s[j:], word) {
		return 0, false
	}
	j = skipSpace(s, j+len(word))
	switch {
	case closing && strings.HasPrefix(s[j:], "+%}"):
		return j + 3, true
	case strings.HasPrefix(s[j:], "-%}"):
		return skipSpace(s, j+3), true
	case strings.HasPrefix(s[j:], "%}"):
		j += 2
		if closing && j < len(s) && s[j] == '\n' {
			j++
		}
		return j, true
	}
	return 0, false
}

// raw emits the body of a raw block as data, with the whitespace control
// of its closing tag, and moves past the closing tag.
func (l *lexer) raw(start, body, bodyEnd, end int) {
	l.line += strings.Count(l.src[start:body], "\n")
	l.lineStarting = l.src[body-1] == '\n'
	sign := l.src[bodyEnd+2]
	l.data(l.src[body:bodyEnd], sign, true)
	l.line += strings.Count(l.src[bodyEnd:end], "\n")
	l.lineStarting = l.src[end-1] == '\n'
	l.pos = end
}

// comment skips a comment up to "#}", with trim_blocks' newline after a
// plain "#}" and all whitespace after "-#}".
func (l *lexer) comment() error {
	s := l.src
	if l.pos == len(s) {
		return nil // Jinja's lexer stops quietly on a "{#" that ends the template
	}
	for p := l.pos; p < len(s); p++ {
		end := -1
		switch {
		case strings.HasPrefix(s[p:], "+#}"):
			end = p + 3
		case strings.HasPrefix(s[p:], "-#}"):
			end = skipSpace(s, p+3)
		case strings.HasPrefix(s[p:], "#}"):
			end = p + 2
			if end < len(s) && s[end] == '\n' {
				end++
			}
		}
		if end >= 0 {
			l.line += strings.Count(s[l.pos:end], "\n")
			l.lineStarting = s[end-1] == '\n'
			l.pos = end
			return nil
		}
	}
	return fmt.Errorf("the comment is not closed with #}")
}

// tag lexes the inside of a {{ }} or {% %} tag up to its end token. As in
// Jinja, the end is only recognised outside brackets, so "{{ {'a': 1}}}"
// closes at the last "}}".
func (l *lexer) tag(endKind tokKind) error {
	s := l.src
	var brackets []byte
	for l.pos < len(s) {
		if len(brackets) == 0 {
			if end, ok := l.tagEnd(endKind); ok {
				l.emit(endKind, "")
				l.line += strings.Count(s[l.pos:end], "\n")
				l.lineStarting = s[end-1] == '\n'
				l.pos = end
				return nil
			}
		}
		c := s[l.pos]
		r, size := utf8.DecodeRuneInString(s[l.pos:])
		switch {
		case isPySpace(r):
			if c == '\n' {
				l.line++
			}
			l.pos += size
		case c >= '0' && c <= '9':
			if err := l.number(); err != nil {
				return err
			}
		case r == '_' || unicode.IsLetter(r) || unicode.Is(unicode.Nl, r) || unicode.Is(unicode.Other_ID_Start, r):
			l.name()
		case c == '\'' || c == '"':
			if err := l.str(); err != nil {
				return err
			}
		default:
			op := ""
			for _, o := range operators {
				if strings.HasPrefix(s[l.pos:], o) {
					op = o
					break
				}
			}
			if op == "" {
				return fmt.Errorf("the character %s is not valid in an expression", pyRepr(string(r)))
			}
			switch op {
			case "(", "[", "{":
				if len(brackets) >= maxDepth {
					return fmt.Errorf("brackets nest more than %d deep", maxDepth)
				}
				brackets = append(brackets, closer[op[0]])
			case ")", "]", "}":
				if len(brackets) == 0 {
					return fmt.Errorf("the bracket %q is not opened", op)
				}
				if want := brackets[len(brackets)-1]; want != op[0] {
					return fmt.Errorf("the bracket %q closes %q", op, string(want))
				}
				brackets = brackets[:len(brackets)-1]
			}
			l.emit(tOp, op)
			l.pos += len(op)
		}
	}
	return fmt.Errorf("the template ends inside a tag")
}

// tagEnd matches the end of the current tag at l.pos: "}}" or "-}}" (which
// strips the whitespace after it) for a variable; "%}" (trim_blocks: plus
// one newline), "-%}" or "+%}" for a block.
func (l *lexer) tagEnd(kind tokKind) (int, bool) {
	s := l.src[l.pos:]
	if kind == tVarEnd {
		switch {
		case strings.HasPrefix(s, "-}}"):
			return skipSpace(l.src, l.pos+3), true
		case strings.HasPrefix(s, "}}"):
			return l.pos + 2, true
		}
		return 0, false
	}
	switch {
	case strings.HasPrefix(s, "+%}"):
		return l.pos + 3, true
	case strings.HasPrefix(s, "-%}"):
		return skipSpace(l.src, l.pos+3), true
	case strings.HasPrefix(s, "%}"):
		end := l.pos + 2
		if end < len(l.src) && l.src[end] == '\n' {
			end++
		}
		return end, true
	}
	return 0, false
}

// name lexes an identifier.
func (l *lexer) name() {
	s := l.src
	j := l.pos
	for j < len(s) {
		r, size := utf8.DecodeRuneInString(s[j:])
		if r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.In(r, unicode.Mn, unicode.Mc, unicode.Nd, unicode.Pc, unicode.Nl, unicode.Other_ID_Start, unicode.Other_ID_Continue) {
			break
		}
		j += size
	}
	l.emit(tName, s[l.pos:j])
	l.pos = j
}
