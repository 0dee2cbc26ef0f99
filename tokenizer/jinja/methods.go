package jinja

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// callMethod calls a bound method: the str, dict, list and tuple methods
// that the immutable sandbox allows, and loop.cycle / loop.changed.
func (r *renderer) callMethod(m *method, args []any, kw []kwval) (any, error) {
	switch recv := m.recv.(type) {
	case string:
		return strMethod(r, recv, m.name, args, kw)
	case markup:
		switch m.name {
		case "escape", "striptags", "unescape":
			return nil, fmt.Errorf("the method Markup.%s is not supported", m.name)
		}
		v, err := strMethod(r, string(recv), m.name, args, kw)
		if s, ok := v.(string); ok && err == nil {
			return markup(s), nil
		}
		return v, err
	case *Dict:
		return dictMethod(recv, m.name, args, kw)
	case []any:
		return seqMethod(recv, m.name, args, kw)
	case tuple:
		return seqMethod(recv, m.name, args, kw)
	case *loopCtx:
		if err := noKwargs(m.name, kw); err != nil {
			return nil, err
		}
		return recv.call(m.name, args)
	}
	return nil, fmt.Errorf("the method %s of %s is not supported", m.name, typeName(m.recv))
}

func dictMethod(d *Dict, name string, args []any, kw []kwval) (any, error) {
	if err := noKwargs(name, kw); err != nil {
		return nil, err
	}
	switch name {
	case "items", "keys", "values", "copy":
		if len(args) > 0 {
			return nil, fmt.Errorf("dict.%s() takes no arguments (%d given)", name, len(args))
		}
	}
	switch name {
	case "items":
		return &view{kind: "dict_items", items: dictItems(d)}, nil
	case "keys":
		return &view{kind: "dict_keys", items: append([]any(nil), d.keys...)}, nil
	case "values":
		return &view{kind: "dict_values", items: append([]any(nil), d.vals...)}, nil
	case "copy":
		c := NewDict()
		for i, k := range d.keys {
			c.set(k, d.vals[i])
		}
		return c, nil
	case "get":
		if len(args) < 1 || len(args) > 2 {
			return nil, fmt.Errorf("get expected 1 or 2 arguments, got %d", len(args))
		}
		if _, ok := hashKey(args[0]); !ok {
			return nil, errUnhashable(args[0])
		}
		if v, ok := d.Get(args[0]); ok {
			return v, nil
		}
		if len(args) == 2 {
			return args[1], nil
		}
		return nil, nil
	}
	return nil, fmt.Errorf("the method dict.%s is not supported", name)
}

func seqMethod(items []any, name string, args []any, kw []kwval) (any, error) {
	if err := noKwargs(name, kw); err != nil {
		return nil, err
	}
	switch name {
	case "copy":
		return append([]any{}, items...), nil
	case "count":
		if len(args) != 1 {
			return nil, fmt.Errorf("count() takes exactly one argument (%d given)", len(args))
		}
		n := int64(0)
		for _, it := range items {
			if pyEq(it, args[0]) {
				n++
			}
		}
		return n, nil
	case "index":
		if len(args) != 1 {
			return nil, fmt.Errorf("the method index is supported with one argument only")
		}
		for i, it := range items {
			if pyEq(it, args[0]) {
				return int64(i), nil
			}
		}
		return nil, fmt.Errorf("%s is not in list", pyRepr(args[0]))
	}
	return nil, fmt.Errorf("the method list.%s is not supported", name)
}

// strArgs binds a str method's arguments; Python's str methods take
// positional arguments only, except split, rsplit and splitlines.
func strArgs(name string, args []any, kw []kwval, params ...string) ([]any, []bool, error) {
	switch name {
	case "split", "rsplit", "splitlines", "format":
	default:
		if err := noKwargs(name, kw); err != nil {
			return nil, nil, err
		}
	}
	return bindArgs(name, args, kw, params...)
}

// strMethod calls str.<name>.
func strMethod(r *renderer, s, name string, args []any, kw []kwval) (any, error) {
	if name == "format" {
		return r.strFormat(s, args, kw)
	}
	params, ok := strParams[name]
	if !ok {
		return nil, fmt.Errorf("the method str.%s is not supported", name)
	}
	a, given, err := strArgs(name, args, kw, params...)
	if err != nil {
		return nil, err
	}
	switch name {
	case "strip", "lstrip", "rstrip":
		return pyStrip(s, a[0], name != "rstrip", name != "lstrip")
	case "upper":
		return pyUpper(s), nil
	case "lower", "casefold":
		return pyLower(s), nil
	case "title":
		return pyTitle(s), nil
	case "capitalize":
		return pyCapitalize(s), nil
	case "swapcase":
		return pySwapcase(s), nil
	case "split", "rsplit":
		return pySplit(s, a[0], a[1], given[1], name == "rsplit")
	case "splitlines":
		lines := splitLines(s, truthy(a[0]))
		out := make([]any, len(lines))
		for i, l := range lines {
			out[i] = l
		}
		return out, nil
	case "startswith", "endswith":
		return affix(s, a[0], name == "startswith")
	case "replace":
		return strReplace(r, s, a, given)
	case "join":
		return strJoin(r, s, a[0])
	case "find", "rfind", "index", "rindex", "count":
		return strSearch(s, name, a, given)
	case "removeprefix", "removesuffix":
		x, ok := asString(a[0])
		if !given[0] || !ok {
			return nil, fmt.Errorf("%s() argument must be str", name)
		}
		if name == "removeprefix" {
			return strings.TrimPrefix(s, x), nil
		}
		return strings.TrimSuffix(s, x), nil
	case "partition", "rpartition":
		return partition(s, a[0], name == "rpartition")
	case "center", "ljust", "rjust", "zfill":
		return pad(r, s, name, a, given)
	case "isalnum", "isalpha", "isascii", "isdecimal", "isdigit", "isidentifier",
		"islower", "isnumeric", "isprintable", "isspace", "istitle", "isupper":
		return strIs(s, name), nil
	}
	return nil, fmt.Errorf("the method str.%s is not supported", name)
}

// strParams are the parameters of the supported str methods.
var strParams = map[string][]string{
	"strip": {"chars"}, "lstrip": {"chars"}, "rstrip": {"chars"},
	"upper": nil, "lower": nil, "casefold": nil, "title": nil,
	"capitalize": nil, "swapcase": nil,
	"split": {"sep", "maxsplit"}, "rsplit": {"sep", "maxsplit"},
	"splitlines": {"keepends"}, "startswith": {"prefix"}, "endswith": {"suffix"},
	"replace": {"old", "new", "count"}, "join": {"iterable"},
	"find": {"sub", "start", "end"}, "rfind": {"sub", "start", "end"},
	"index": {"sub", "start", "end"}, "rindex": {"sub", "start", "end"},
	"count": {"sub", "start", "end"}, "removeprefix": {"prefix"},
	"removesuffix": {"suffix"}, "partition": {"sep"}, "rpartition": {"sep"},
	"center": {"width", "fillchar"}, "ljust": {"width", "fillchar"},
	"rjust": {"width", "fillchar"}, "zfill": {"width"},
	"isalnum": nil, "isalpha": nil, "isascii": nil, "isdecimal": nil,
	"isdigit": nil, "isidentifier": nil, "islower": nil, "isnumeric": nil,
	"isprintable": nil, "isspace": nil, "istitle": nil, "isupper": nil,
}

func strReplace(r *renderer, s string, a []any, given []bool) (any, error) {
	old, ok1 := asString(a[0])
	new, ok2 := asString(a[1])
	if !given[0] || !given[1] || !ok1 || !ok2 {
		return nil, fmt.Errorf("replace() arguments must be str")
	}
	n := int64(-1)
	if given[2] {
		c, _, isInt, ok := number(a[2])
		if !ok || !isInt {
			return nil, fmt.Errorf("'%s' object cannot be interpreted as an integer", typeName(a[2]))
		}
		n = c
	}
	if old == "" && len(new) > 0 {
		if err := r.checkSize(len(s) + (utf8.RuneCountInString(s)+1)*len(new)); err != nil {
			return nil, err
		}
	}
	if old != "" && len(new) > len(old) {
		if err := r.checkSize(len(s) / len(old) * len(new)); err != nil {
			return nil, err
		}
	}
	return pyReplace(s, old, new, n), nil
}

func strJoin(r *renderer, sep string, it any) (any, error) {
	items, err := iterate(it)
	if err != nil {
		return nil, fmt.Errorf("can only join an iterable")
	}
	var b strings.Builder
	for i, x := range items {
		s, ok := asString(x)
		if !ok {
			return nil, fmt.Errorf("sequence item %d: expected str instance, %s found", i, typeName(x))
		}
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(s)
		if err := r.checkSize(b.Len()); err != nil {
			return nil, err
		}
	}
	return b.String(), nil
}

// affix is startswith/endswith with a string or a tuple of strings.
func affix(s string, x any, prefix bool) (any, error) {
	cands := []any{x}
	if t, ok := x.(tuple); ok {
		cands = t
	}
	for _, c := range cands {
		cs, ok := asString(c)
		if !ok {
			return nil, fmt.Errorf("startswith first arg must be str or a tuple of str, not %s", typeName(c))
		}
		if prefix && strings.HasPrefix(s, cs) || !prefix && strings.HasSuffix(s, cs) {
			return true, nil
		}
	}
	return false, nil
}

func partition(s string, sep any, last bool) (any, error) {
	p, ok := asString(sep)
	if !ok {
		return nil, fmt.Errorf("must be str, not %s", typeName(sep))
	}
	if p == "" {
		return nil, fmt.Errorf("empty separator")
	}
	i := strings.Index(s, p)
	if last {
		i = strings.LastIndex(s, p)
	}
	if i < 0 {
		if last {
			return tuple{"", "", s}, nil
		}
		return tuple{s, "", ""}, nil
	}
	return tuple{s[:i], p, s[i+len(p):]}, nil
}
