package jinja

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Python's string formatting: "..." % args (and the format filter) and
// str.format, with the common conversions and format specs.

// percentFormat is format % arg.
func (r *renderer) percentFormat(format string, arg any) (string, error) {
	var args []any
	mapping, isMap := arg.(*Dict)
	// Python takes any non-tuple, non-str argument with item access as a
	// mapping, which exempts it from the "not all converted" check.
	_, isList := arg.([]any)
	_, isUndef := arg.(*undefined)
	_, isRange := arg.(*rangeVal)
	if t, ok := arg.(tuple); ok {
		args = t
	} else {
		args = []any{arg}
	}
	used := 0
	next := func() (any, error) {
		if used >= len(args) {
			return nil, errors.New("not enough arguments for format string")
		}
		used++
		return args[used-1], nil
	}
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(format) {
			return "", errors.New("incomplete format")
		}
		var val any
		haveVal := false
		if format[i] == '(' {
			end := strings.IndexByte(format[i:], ')')
			if end < 0 {
				return "", errors.New("incomplete format key")
			}
			if !isMap {
				return "", errors.New("format requires a mapping")
			}
			key := format[i+1 : i+end]
			v, ok := mapping.Get(key)
			if !ok {
				return "", fmt.Errorf("KeyError: %s", pyRepr(key))
			}
			val, haveVal = v, true
			i += end + 1
		}
		spec := numSpec{align: '>', fill: ' '}
		for ; i < len(format) && strings.IndexByte("-+ #0", format[i]) >= 0; i++ {
			switch format[i] {
			case '-':
				spec.align, spec.alignGiven = '<', true
			case '+', ' ':
				spec.sign = format[i]
			case '#':
				spec.alt = true
			case '0':
				spec.zero = true
			}
		}
		num := func() (int, error) {
			if i < len(format) && format[i] == '*' {
				i++
				v, err := next()
				if err != nil {
					return 0, err
				}
				n, _, isInt, ok := number(v)
				if !ok || !isInt {
					return 0, errors.New("* wants int")
				}
				return int(max(-1<<20, min(n, 1<<20))), nil
			}
			j := i
			for i < len(format) && format[i] >= '0' && format[i] <= '9' {
				i++
			}
			if j == i {
				return -1, nil
			}
			n, err := strconv.Atoi(format[j:i])
			if err != nil || n > 1<<20 {
				return 0, errors.New("width too big")
			}
			return n, nil
		}
		var err error
		if spec.width, err = num(); err != nil {
			return "", err
		}
		if spec.width < -1 {
			spec.align, spec.alignGiven, spec.width = '<', true, -spec.width
		}
		spec.prec = -1
		if i < len(format) && format[i] == '.' {
			i++
			if spec.prec, err = num(); err != nil {
				return "", err
			}
			spec.prec = max(spec.prec, 0)
		}
		for i < len(format) && strings.IndexByte("hlL", format[i]) >= 0 {
			i++
		}
		if i >= len(format) {
			return "", errors.New("incomplete format")
		}
		conv := format[i]
		if conv == '%' {
			b.WriteByte('%')
			continue
		}
		if !haveVal {
			if val, err = next(); err != nil {
				return "", err
			}
		}
		s, err := r.percentConv(conv, val, spec)
		if err != nil {
			return "", err
		}
		if err := r.checkSize(b.Len() + len(s)); err != nil {
			return "", err
		}
		b.WriteString(s)
	}
	if used < len(args) && !isMap && !isList && !isRange && !isUndef {
		return "", errors.New("not all arguments converted during string formatting")
	}
	return b.String(), nil
}

// percentConv formats one value of a %-format.
func (r *renderer) percentConv(conv byte, v any, spec numSpec) (string, error) {
	switch conv {
	case 's', 'r', 'a':
		s, err := r.str(v)
		if conv != 's' {
			s, err = r.repr(v)
		}
		if err != nil {
			return "", err
		}
		if spec.prec >= 0 {
			s = truncRunes(s, spec.prec)
		}
		spec.zero = false
		return spec.pad(s, ""), nil
	case 'c':
		if s, ok := asString(v); ok && utf8.RuneCountInString(s) == 1 {
			return spec.pad(s, ""), nil
		}
		n, _, isInt, ok := number(v)
		if !ok || !isInt || n < 0 || n > 0x10ffff {
			return "", errors.New("%c requires an int or a unicode character")
		}
		return spec.pad(string(rune(n)), ""), nil
	case 'd', 'i', 'u', 'o', 'x', 'X':
		n, f, isInt, ok := number(v)
		if !ok {
			return "", fmt.Errorf("%%%c format: a real number is required, not %s", conv, typeName(v))
		}
		if !isInt {
			if conv != 'd' && conv != 'i' && conv != 'u' {
				return "", fmt.Errorf("%%%c format: an integer is required, not float", conv)
			}
			n = int64(f)
		}
		t := conv
		if t == 'i' || t == 'u' {
			t = 'd'
		}
		spec.typ = t
		return spec.formatInt(n), nil
	case 'e', 'E', 'f', 'F', 'g', 'G':
		_, f, _, ok := number(v)
		if !ok {
			return "", fmt.Errorf("must be real number, not %s", typeName(v))
		}
		if spec.prec < 0 {
			spec.prec = 6
		}
		spec.typ = conv
		return spec.formatFloat(f), nil
	}
	return "", fmt.Errorf("unsupported format character %s", pyRepr(string(conv)))
}

func truncRunes(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// numSpec is a parsed format specification.
type numSpec struct {
	fill       rune
	align      byte // < > ^ =
	sign       byte // + - or space
	alt, zero  bool
	width      int
	group      byte // , or _
	prec       int  // -1: none
	typ        byte
	alignGiven bool
}

// pad pads s (after a sign prefix) to the width.
func (sp numSpec) pad(s, sign string) string {
	n := utf8.RuneCountInString(s) + len(sign)
	if n >= sp.width {
		return sign + s
	}
	fill := strings.Repeat(string(sp.fill), sp.width-n)
	switch {
	case sp.zero && !sp.alignGiven:
		return sign + strings.Repeat("0", sp.width-n) + s
	case sp.align == '<':
		return sign + s + fill
	case sp.align == '^':
		half := (sp.width - n) / 2
		return strings.Repeat(string(sp.fill), half) + sign + s + strings.Repeat(string(sp.fill), sp.width-n-half)
	case sp.align == '=':
		return sign + fill + s
	}
	return fill + sign + s
}

func (sp numSpec) signOf(neg bool) string {
	switch {
	case neg:
		return "-"
	case sp.sign == '+':
		return "+"
	case sp.sign == ' ':
		return " "
	}
	return ""
}

func (sp numSpec) formatInt(n int64) string {
	neg := n < 0
	u := uint64(n)
	if neg {
		u = uint64(-n)
	}
	var s, prefix string
	switch sp.typ {
	case 'x':
		s, prefix = strconv.FormatUint(u, 16), "0x"
	case 'X':
		s, prefix = strings.ToUpper(strconv.FormatUint(u, 16)), "0X"
	case 'o':
		s, prefix = strconv.FormatUint(u, 8), "0o"
	case 'b':
		s, prefix = strconv.FormatUint(u, 2), "0b"
	default:
		s = strconv.FormatUint(u, 10)
		if sp.group != 0 {
			s = group(s, sp.group)
		}
	}
	if sp.prec > len(s) { // %-format: precision is a minimum digit count
		s = strings.Repeat("0", sp.prec-len(s)) + s
	}
	sign := sp.signOf(neg)
	if sp.alt && prefix != "" {
		sign += prefix
	}
	return sp.pad(s, sign)
}

func (sp numSpec) formatFloat(f float64) string {
	neg := f < 0 || f == 0 && 1/f < 0
	if neg {
		f = -f
	}
	var s string
	switch sp.typ {
	case '%':
		s = strconv.FormatFloat(f*100, 'f', sp.prec, 64) + "%"
	case 'g', 'G':
		p := sp.prec
		if p == 0 {
			p = 1
		}
		s = strconv.FormatFloat(f, 'g', p, 64)
		if sp.alt && !strings.Contains(s, ".") {
			s += "."
		}
	default:
		s = strconv.FormatFloat(f, sp.typ|0x20, sp.prec, 64)
	}
	if sp.typ == 'E' || sp.typ == 'G' || sp.typ == 'F' {
		s = strings.ToUpper(s)
	}
	switch s {
	case "+Inf", "+INF", "Inf", "INF":
		s = map[bool]string{true: "INF", false: "inf"}[sp.typ < 'a']
	case "NaN", "NAN":
		s = map[bool]string{true: "NAN", false: "nan"}[sp.typ < 'a']
	}
	if sp.group != 0 {
		intPart, frac, _ := strings.Cut(s, ".")
		if frac != "" || strings.Contains(s, ".") {
			frac = "." + frac
		}
		s = group(intPart, sp.group) + frac
	}
	return sp.pad(s, sp.signOf(neg))
}

// group inserts a separator every three digits from the right.
func group(digits string, sep byte) string {
	var b strings.Builder
	for i, c := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(sep)
		}
		b.WriteRune(c)
	}
	return b.String()
}
