package jinja

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// strFormat is str.format(*args, **kwargs) as the sandbox's formatter
// runs it: fields {}, {0}, {name}, with .attr and [key] lookups, !r/!s/!a
// conversions and format specs.
func (r *renderer) strFormat(s string, args []any, kw []kwval) (any, error) {
	var b strings.Builder
	auto, manual := 0, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '{' && i+1 < len(s) && s[i+1] == '{', c == '}' && i+1 < len(s) && s[i+1] == '}':
			b.WriteByte(c)
			i++
			continue
		case c == '}':
			return nil, errors.New("Single '}' encountered in format string")
		case c != '{':
			b.WriteByte(c)
			continue
		}
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return nil, errors.New("Single '{' encountered in format string")
		}
		field := s[i+1 : i+end]
		if strings.ContainsRune(field, '{') {
			return nil, errors.New("nested replacement fields in format specs are not supported")
		}
		i += end
		name, spec, _ := strings.Cut(field, ":")
		name, conv, hasConv := strings.Cut(name, "!")
		first, rest := name, ""
		if j := strings.IndexAny(name, ".["); j >= 0 {
			first, rest = name[:j], name[j:]
		}
		var v any
		switch {
		case first == "":
			if manual {
				return nil, errors.New("cannot switch from manual field specification to automatic field numbering")
			}
			if auto >= len(args) {
				return nil, fmt.Errorf("Replacement index %d out of range for positional args tuple", auto)
			}
			v = args[auto]
			auto++
		case strings.Trim(first, "0123456789") == "":
			if auto > 0 {
				return nil, errors.New("cannot switch from automatic field numbering to manual field specification")
			}
			manual = true
			n, err := strconv.Atoi(first)
			if err != nil || n >= len(args) {
				return nil, fmt.Errorf("Replacement index %s out of range for positional args tuple", first)
			}
			v = args[n]
		default:
			found := false
			for _, k := range kw {
				if k.name == first {
					v, found = k.v, true
				}
			}
			if !found {
				return nil, fmt.Errorf("KeyError: %s", pyRepr(first))
			}
		}
		v, err := fieldPath(v, rest)
		if err != nil {
			return nil, err
		}
		if hasConv {
			switch conv {
			case "r", "a":
				v, err = r.repr(v)
			case "s":
				v, err = r.str(v)
			default:
				return nil, fmt.Errorf("Unknown conversion specifier %s", conv)
			}
			if err != nil {
				return nil, err
			}
		}
		out, err := r.formatSpec(v, spec)
		if err != nil {
			return nil, err
		}
		if err := r.checkSize(b.Len() + len(out)); err != nil {
			return nil, err
		}
		b.WriteString(out)
	}
	return b.String(), nil
}

// fieldPath follows ".attr" and "[key]" of a replacement field.
func fieldPath(v any, rest string) (any, error) {
	for rest != "" {
		var err error
		switch rest[0] {
		case '.':
			j := strings.IndexAny(rest[1:], ".[")
			if j < 0 {
				j = len(rest) - 1
			}
			if v, err = getattr(v, rest[1:1+j]); err != nil {
				return nil, err
			}
			rest = rest[1+j:]
		case '[':
			j := strings.IndexByte(rest, ']')
			if j < 0 {
				return nil, errors.New("Missing ']' in format string")
			}
			var key any = rest[1:j]
			if n, err := strconv.ParseInt(rest[1:j], 10, 64); err == nil {
				key = n
			}
			if v, err = getitem(v, key); err != nil {
				return nil, err
			}
			rest = rest[j+1:]
		default:
			return nil, errors.New("Only '.' or '[' may follow ']' in format field specifier")
		}
	}
	return v, nil
}

// formatSpec is Python's format(v, spec) for str, int, float and, with
// an empty spec, anything (str(v)).
func (r *renderer) formatSpec(v any, spec string) (string, error) {
	if spec == "" {
		return r.str(v)
	}
	sp, err := parseSpec(spec)
	if err != nil {
		return "", err
	}
	if s, ok := asString(v); ok {
		if sp.typ != 0 && sp.typ != 's' || sp.sign != 0 || sp.group != 0 {
			return "", fmt.Errorf("Unknown format code or option in %s for object of type 'str'", pyRepr(spec))
		}
		if sp.prec >= 0 {
			s = truncRunes(s, sp.prec)
		}
		if !sp.alignGiven {
			sp.align = '<'
		}
		return sp.pad(s, ""), nil
	}
	i, f, isInt, ok := number(v)
	if !ok {
		return "", fmt.Errorf("unsupported format string passed to %s.__format__", typeName(v))
	}
	if !sp.alignGiven {
		sp.align = '>'
	}
	switch sp.typ {
	case 0, 'd', 'b', 'o', 'x', 'X', 'c', 'n':
		if !isInt {
			if sp.typ != 0 {
				return "", fmt.Errorf("Unknown format code %s for object of type 'float'", pyRepr(string(sp.typ)))
			}
			if sp.prec >= 0 {
				return "", errors.New("format specs with a precision and no type are not supported")
			}
			s := floatRepr(f)
			neg := strings.HasPrefix(s, "-")
			return sp.pad(strings.TrimPrefix(s, "-"), sp.signOf(neg)), nil
		}
		if sp.prec >= 0 {
			return "", errors.New("Precision not allowed in integer format specifier")
		}
		if sp.typ == 'c' {
			return sp.pad(string(rune(i)), ""), nil
		}
		if sp.typ == 0 || sp.typ == 'n' {
			sp.typ = 'd'
		}
		return sp.formatInt(i), nil
	case 'e', 'E', 'f', 'F', 'g', 'G', '%':
		if sp.prec < 0 {
			sp.prec = 6
		}
		return sp.formatFloat(f), nil
	}
	return "", fmt.Errorf("Unknown format code %s", pyRepr(string(sp.typ)))
}

// parseSpec parses [[fill]align][sign][#][0][width][,|_][.precision][type].
func parseSpec(spec string) (numSpec, error) {
	sp := numSpec{fill: ' ', align: '>', prec: -1}
	isAlign := func(c byte) bool { return c == '<' || c == '>' || c == '^' || c == '=' }
	if r, size := utf8.DecodeRuneInString(spec); size < len(spec) && isAlign(spec[size]) {
		sp.fill, sp.align, sp.alignGiven = r, spec[size], true
		spec = spec[size+1:]
	} else if spec != "" && isAlign(spec[0]) {
		sp.align, sp.alignGiven = spec[0], true
		spec = spec[1:]
	}
	if spec != "" && (spec[0] == '+' || spec[0] == '-' || spec[0] == ' ') {
		sp.sign = spec[0]
		spec = spec[1:]
	}
	if spec != "" && spec[0] == '#' {
		sp.alt = true
		spec = spec[1:]
	}
	if spec != "" && spec[0] == '0' {
		sp.zero = true
		if !sp.alignGiven {
			sp.fill, sp.align, sp.alignGiven = '0', '=', true
		}
		spec = spec[1:]
	}
	j := 0
	for j < len(spec) && spec[j] >= '0' && spec[j] <= '9' {
		j++
	}
	if j > 0 {
		w, err := strconv.Atoi(spec[:j])
		if err != nil || w > 1<<20 {
			return sp, errors.New("Too many decimal digits in format string")
		}
		sp.width = w
		spec = spec[j:]
	}
	if spec != "" && (spec[0] == ',' || spec[0] == '_') {
		sp.group = spec[0]
		spec = spec[1:]
	}
	if spec != "" && spec[0] == '.' {
		j := 1
		for j < len(spec) && spec[j] >= '0' && spec[j] <= '9' {
			j++
		}
		p, err := strconv.Atoi(spec[1:j])
		if err != nil || p > 1<<10 {
			return sp, errors.New("Format specifier missing precision")
		}
		sp.prec = p
		spec = spec[j:]
	}
	if len(spec) > 1 {
		return sp, errors.New("Invalid format specifier")
	}
	if spec != "" {
		sp.typ = spec[0]
	}
	sp.zero = false // handled as fill '0' with '=' alignment
	return sp, nil
}
