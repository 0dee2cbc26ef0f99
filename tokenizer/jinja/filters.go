package jinja

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
)

// filterFunc is a filter: the value on its left, then its arguments.
type filterFunc func(r *renderer, v any, args []any, kw []kwval) (any, error)

// filters are the supported filters of Jinja and transformers (whose
// tojson replaces Jinja's). Others fail at Parse. Filled in init because
// map and select call filters and tests by name.
var filters map[string]filterFunc

func init() {
	filters = map[string]filterFunc{
		"abs": fAbs, "attr": fAttr, "batch": fBatch, "capitalize": strFilter(pyCapitalize),
		"center": fCenter, "count": fLength, "d": fDefault, "default": fDefault,
		"dictsort": fDictsort, "e": fEscape, "escape": fEscape, "first": fFirst,
		"float": fFloat, "forceescape": fForceEscape, "format": fFormat,
		"indent": fIndent, "int": fInt, "items": fItems, "join": fJoin,
		"last": fLast, "length": fLength, "list": fList, "lower": strFilter(pyLower),
		"map": fMap, "max": fMax, "min": fMin, "reject": fReject,
		"rejectattr": fRejectAttr, "replace": fReplace, "reverse": fReverse,
		"round": fRound, "safe": fSafe, "select": fSelect, "selectattr": fSelectAttr,
		"sort": fSort, "string": fString, "sum": fSum, "title": strFilter(jinjaTitle),
		"tojson": fToJSON, "trim": fTrim, "unique": fUnique, "upper": strFilter(pyUpper),
		"wordcount": fWordcount,
	}
	tests = baseTests()
}

// callFilter applies filter f to v.
func (r *renderer) callFilter(f *filterExpr, v any, s *scope) (any, error) {
	args, kw, err := r.evalArgs(f.args, f.kwargs, s)
	if err != nil {
		return nil, err
	}
	return filters[f.name](r, v, args, kw)
}

// strFilter makes a filter of a function of the value's text.
func strFilter(fn func(string) string) filterFunc {
	return func(r *renderer, v any, args []any, kw []kwval) (any, error) {
		if _, _, err := bindArgs("filter", args, kw); err != nil {
			return nil, err
		}
		s, err := r.str(v) // Jinja's soft_str
		if err != nil {
			return nil, err
		}
		return fn(s), nil
	}
}

func fAbs(_ *renderer, v any, args []any, kw []kwval) (any, error) {
	switch x := v.(type) {
	case bool:
		if x {
			return int64(1), nil
		}
		return int64(0), nil
	case int64:
		if x == math.MinInt64 {
			return nil, errOverflow
		}
		return absInt(x), nil
	case float64:
		return math.Abs(x), nil
	}
	return nil, fmt.Errorf("bad operand type for abs(): '%s'", typeName(v))
}

func fAttr(_ *renderer, v any, args []any, kw []kwval) (any, error) {
	a, _, err := bindArgs("attr", args, kw, "name")
	if err != nil {
		return nil, err
	}
	name, ok := a[0].(string)
	if !ok {
		return nil, fmt.Errorf("attribute name must be string, not '%s'", typeName(a[0]))
	}
	if u, ok := v.(*undefined); ok {
		return nil, u.err()
	}
	if x, ok := pyAttr(v, name); ok {
		return x, nil
	}
	return missingAttr(v, name), nil
}

func fCenter(r *renderer, v any, args []any, kw []kwval) (any, error) {
	a, given, err := bindArgs("center", args, kw, "width")
	if err != nil {
		return nil, err
	}
	if !given[0] {
		a[0] = int64(80)
	}
	s, err := r.str(v)
	if err != nil {
		return nil, err
	}
	return strMethod(r, s, "center", a[:1], nil)
}

func fLength(_ *renderer, v any, args []any, kw []kwval) (any, error) {
	if _, _, err := bindArgs("length", args, kw); err != nil {
		return nil, err
	}
	n, err := length(v)
	return int64(n), err
}

func fDefault(_ *renderer, v any, args []any, kw []kwval) (any, error) {
	a, given, err := bindArgs("default", args, kw, "default_value", "boolean")
	if err != nil {
		return nil, err
	}
	if !given[0] {
		a[0] = ""
	}
	if _, ok := v.(*undefined); ok || truthy(a[1]) && !truthy(v) {
		return a[0], nil
	}
	return v, nil
}

// htmlEscape is markupsafe's escaping.
func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "'", "&#39;", `"`, "&#34;").Replace(s)
}

// textFilter is a filter without arguments of v's text (Jinja's
// soft_str: the text of a str or Markup, str(v) else); fn also sees v.
func textFilter(name string, fn func(v any, s string) any) filterFunc {
	return func(r *renderer, v any, args []any, kw []kwval) (any, error) {
		if _, _, err := bindArgs(name, args, kw); err != nil {
			return nil, err
		}
		s, err := r.str(v)
		if err != nil {
			return nil, err
		}
		out := fn(v, s)
		if t, ok := asString(out); ok {
			if err := r.checkSize(len(t)); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
}

var (
	fEscape = textFilter("escape", func(v any, s string) any {
		if m, ok := v.(markup); ok {
			return m
		}
		return markup(htmlEscape(s))
	})
	fForceEscape = textFilter("forceescape", func(_ any, s string) any { return markup(htmlEscape(s)) })
	fSafe        = textFilter("safe", func(_ any, s string) any { return markup(s) })
	fString      = textFilter("string", func(v any, s string) any {
		if m, ok := v.(markup); ok {
			return m
		}
		return s
	})
)

func fFloat(_ *renderer, v any, args []any, kw []kwval) (any, error) {
	a, given, err := bindArgs("float", args, kw, "default")
	if err != nil {
		return nil, err
	}
	if !given[0] {
		a[0] = 0.0
	}
	if u, ok := v.(*undefined); ok {
		return nil, u.err()
	}
	if f, ok := pyFloat(v); ok {
		return f, nil
	}
	return a[0], nil
}

// pyFloat is Python's float(v), ok false where it raises.
func pyFloat(v any) (float64, bool) {
	if _, f, _, ok := number(v); ok {
		return f, true
	}
	s, ok := asString(v)
	if !ok {
		return 0, false
	}
	s = strings.TrimFunc(s, isPySpace)
	if strings.Contains(s, "__") || strings.HasPrefix(s, "_") || strings.HasSuffix(s, "_") {
		return 0, false
	}
	switch strings.ToLower(strings.TrimLeft(s, "+-")) {
	case "inf", "infinity", "nan":
	default:
		if strings.ContainsAny(strings.ToLower(s), "xpn") {
			return 0, false // Go reads hex floats and "nan"-like words Python does not
		}
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64)
	if err != nil && !math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

func fInt(_ *renderer, v any, args []any, kw []kwval) (any, error) {
	a, given, err := bindArgs("int", args, kw, "default", "base")
	if err != nil {
		return nil, err
	}
	if !given[0] {
		a[0] = int64(0)
	}
	base := int64(10)
	if given[1] {
		b, _, isInt, ok := number(a[1])
		if !ok || !isInt {
			return a[0], nil
		}
		base = b
	}
	switch x := v.(type) {
	case *undefined:
		return nil, x.err()
	case bool, int64:
		i, _, _, _ := number(x)
		return i, nil
	case float64:
		if math.IsNaN(x) {
			return a[0], nil
		}
		if math.IsInf(x, 0) || math.Abs(x) >= 1<<63 {
			return nil, fmt.Errorf("cannot convert float infinity to integer")
		}
		return int64(x), nil
	}
	s, ok := asString(v)
	if !ok {
		return a[0], nil
	}
	if i, ok := pyParseInt(s, base); ok {
		return i, nil
	}
	if f, ok := pyFloat(s); ok && !math.IsNaN(f) && !math.IsInf(f, 0) && math.Abs(f) < 1<<63 {
		return int64(f), nil
	}
	return a[0], nil
}

// pyParseInt is Python's int(s, base) for bases 0 and 2 to 36.
func pyParseInt(s string, base int64) (int64, bool) {
	if base != 0 && (base < 2 || base > 36) {
		return 0, false
	}
	s = strings.TrimFunc(s, isPySpace)
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	lower := strings.ToLower(s)
	for _, p := range []struct {
		prefix string
		base   int64
	}{{"0x", 16}, {"0o", 8}, {"0b", 2}} {
		if strings.HasPrefix(lower, p.prefix) && (base == 0 || base == p.base) {
			s, base = s[2:], p.base
			if strings.HasPrefix(s, "_") {
				s = s[1:]
			}
			break
		}
	}
	if base == 0 {
		base = 10
		if len(strings.TrimLeft(s, "0_")) > 0 && strings.HasPrefix(s, "0") {
			return 0, false // Python refuses leading zeros in base 0
		}
	}
	if s == "" || strings.HasPrefix(s, "_") || strings.HasSuffix(s, "_") || strings.Contains(s, "__") {
		return 0, false
	}
	u, err := strconv.ParseUint(strings.ReplaceAll(s, "_", ""), int(base), 64)
	if err != nil || u > math.MaxInt64 && !(neg && u == 1<<63) {
		return 0, false
	}
	if neg {
		return -int64(u), true
	}
	return int64(u), true
}

func fFormat(r *renderer, v any, args []any, kw []kwval) (any, error) {
	if len(args) > 0 && len(kw) > 0 {
		return nil, fmt.Errorf("can't handle positional and keyword arguments at the same time")
	}
	var operand any = tuple(args)
	if len(kw) > 0 {
		d := NewDict()
		for _, k := range kw {
			d.set(k.name, k.v)
		}
		operand = d
	}
	s, err := r.str(v)
	if err != nil {
		return nil, err
	}
	return r.percentFormat(s, operand)
}

func fIndent(_ *renderer, v any, args []any, kw []kwval) (any, error) {
	a, given, err := bindArgs("indent", args, kw, "width", "first", "blank")
	if err != nil {
		return nil, err
	}
	s, ok := asString(v)
	if !ok {
		switch v := v.(type) {
		case *undefined:
			return nil, v.err()
		case []any: // list += "\n" extends it; then splitlines fails
			return nil, fmt.Errorf("'list' object has no attribute 'splitlines'")
		case tuple:
			return nil, fmt.Errorf("can only concatenate tuple (not \"str\") to tuple")
		}
		return nil, fmt.Errorf("unsupported operand type(s) for +=: '%s' and 'str'", typeName(v))
	}
	indent := "    "
	if given[0] {
		if w, ok := asString(a[0]); ok {
			indent = w
		} else if n, _, isInt, ok := number(a[0]); ok && isInt {
			indent = strings.Repeat(" ", int(max(0, min(n, 1<<20))))
		} else {
			return nil, fmt.Errorf("can't multiply sequence by non-int of type '%s'", typeName(a[0]))
		}
	}
	lines := splitLines(s+"\n", false)
	var b strings.Builder
	if truthy(a[2]) {
		for i, l := range lines {
			if i > 0 {
				b.WriteString("\n" + indent)
			}
			b.WriteString(l)
		}
	} else {
		b.WriteString(lines[0])
		for _, l := range lines[1:] {
			b.WriteString("\n")
			if l != "" {
				b.WriteString(indent)
			}
			b.WriteString(l)
		}
	}
	out := b.String()
	if truthy(a[1]) {
		out = indent + out
	}
	if _, ok := v.(markup); ok {
		return markup(out), nil
	}
	return out, nil
}

func fReplace(r *renderer, v any, args []any, kw []kwval) (any, error) {
	a, given, err := bindArgs("replace", args, kw, "old", "new", "count")
	if err != nil {
		return nil, err
	}
	if !given[0] || !given[1] {
		return nil, fmt.Errorf("replace() missing required arguments 'old' and 'new'")
	}
	n := int64(-1)
	if given[2] && a[2] != nil {
		c, _, isInt, ok := number(a[2])
		if !ok || !isInt {
			return nil, fmt.Errorf("'%s' object cannot be interpreted as an integer", typeName(a[2]))
		}
		n = c
	}
	var strs [3]string
	for i, x := range []any{v, a[0], a[1]} {
		if strs[i], err = r.str(x); err != nil {
			return nil, err
		}
	}
	return strReplace(r, strs[0], []any{strs[1], strs[2], n}, []bool{true, true, true})
}

// pyReplace is str.replace with Python's count (negative: all).
func pyReplace(s, old, new string, n int64) string {
	if n < 0 || n > int64(len(s))+1 {
		n = -1
	}
	return strings.Replace(s, old, new, int(n))
}

func fTrim(r *renderer, v any, args []any, kw []kwval) (any, error) {
	a, _, err := bindArgs("trim", args, kw, "chars")
	if err != nil {
		return nil, err
	}
	s, err := r.str(v)
	if err != nil {
		return nil, err
	}
	return pyStrip(s, a[0], true, true)
}

// pyStrip is str.strip/lstrip/rstrip: whitespace, or the characters of
// chars when it is a string.
func pyStrip(s string, chars any, left, right bool) (string, error) {
	cut := isPySpace
	if chars != nil {
		cs, ok := asString(chars)
		if !ok {
			return "", fmt.Errorf("strip arg must be None or str")
		}
		cut = func(r rune) bool { return strings.ContainsRune(cs, r) }
	}
	if left {
		s = strings.TrimLeftFunc(s, cut)
	}
	if right {
		s = strings.TrimRightFunc(s, cut)
	}
	return s, nil
}

func fWordcount(r *renderer, v any, args []any, kw []kwval) (any, error) {
	s, err := r.str(v)
	if err != nil {
		return nil, err
	}
	n, in := int64(0), false
	for _, c := range s {
		w := c == '_' || unicode.IsLetter(c) || unicode.IsDigit(c) || unicode.IsNumber(c)
		if w && !in {
			n++
		}
		in = w
	}
	return n, nil
}

func fToJSON(r *renderer, v any, args []any, kw []kwval) (any, error) {
	a, given, err := bindArgs("tojson", args, kw, "ensure_ascii", "indent", "separators", "sort_keys")
	if err != nil {
		return nil, err
	}
	o := jsonOpts{ensureASCII: given[0] && truthy(a[0]), sortKeys: truthy(a[3])}
	if given[1] && a[1] != nil {
		o.hasIndent = true
		if s, ok := asString(a[1]); ok {
			o.indent = s
		} else if n, _, isInt, ok := number(a[1]); ok && isInt {
			o.indent = strings.Repeat(" ", int(max(0, min(n, 1<<10))))
		} else {
			return nil, fmt.Errorf("tojson: indent must be an int or a string, not %s", typeName(a[1]))
		}
	}
	o.itemSep, o.kSep = ", ", ": "
	if o.hasIndent {
		o.itemSep = ","
	}
	if given[2] && a[2] != nil {
		seps, ok := asSeq(a[2])
		if !ok || len(seps) != 2 {
			return nil, fmt.Errorf("tojson: separators must be a pair of strings")
		}
		i, ok1 := asString(seps[0])
		k, ok2 := asString(seps[1])
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("tojson: separators must be a pair of strings")
		}
		o.itemSep, o.kSep = i, k
	}
	return r.dumps(v, o)
}
