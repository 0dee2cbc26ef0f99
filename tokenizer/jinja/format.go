package jinja

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
)

// pyStr is Python's str(v), which {{ v }} prints: None, True, 1.0,
// ['a', 1], {'k': 'v'}; undefined prints as "". Renders print through
// renderer.str, which bounds the size.
func pyStr(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case markup:
		return string(v)
	case *undefined:
		return ""
	}
	return pyRepr(v)
}

// pyRepr is Python's repr(v), cut after about a megabyte: it names values
// in error messages and keys.
func pyRepr(v any) string {
	w := &reprWriter{limit: 1 << 20}
	w.repr(v, 0)
	return w.String()
}

// str is pyStr within MaxOutput: a list holding one long string many
// times prints far longer than it weighs.
func (r *renderer) str(v any) (string, error) {
	switch v.(type) {
	case string, markup, *undefined, nil, bool, int64, float64:
		return pyStr(v), nil
	}
	w := &reprWriter{limit: r.opts.MaxOutput}
	w.repr(v, 0)
	if err := r.checkSize(w.Len()); err != nil {
		return "", err
	}
	return w.String(), nil
}

// repr is pyRepr within MaxOutput.
func (r *renderer) repr(v any) (string, error) {
	w := &reprWriter{limit: r.opts.MaxOutput}
	w.repr(v, 0)
	if err := r.checkSize(w.Len()); err != nil {
		return "", err
	}
	return w.String(), nil
}

// reprWriter writes reprs, stopping past limit bytes.
type reprWriter struct {
	strings.Builder
	limit int
	open  []*Dict // dicts being written: Python prints {...} on re-entry
}

func (w *reprWriter) repr(v any, depth int) {
	if w.Len() > w.limit {
		return
	}
	if depth > maxConvertDepth {
		w.WriteString("...")
		return
	}
	switch v := v.(type) {
	case nil:
		w.WriteString("None")
	case bool:
		if v {
			w.WriteString("True")
		} else {
			w.WriteString("False")
		}
	case int64:
		w.WriteString(strconv.FormatInt(v, 10))
	case float64:
		w.WriteString(floatRepr(v))
	case string:
		strRepr(&w.Builder, v)
	case markup:
		w.WriteString("Markup(")
		strRepr(&w.Builder, string(v))
		w.WriteString(")")
	case []any:
		w.items("[", "]", v, depth)
	case tuple:
		if len(v) == 1 {
			w.WriteString("(")
			w.repr(v[0], depth+1)
			w.WriteString(",)")
			return
		}
		w.items("(", ")", v, depth)
	case *Dict:
		w.dict(v, depth)
	case *namespace:
		w.WriteString("<Namespace ")
		w.dict(v.attrs, depth)
		w.WriteString(">")
	case *undefined:
		w.WriteString("Undefined")
	case *iterator:
		fmt.Fprintf(w, "<generator object %s>", v.name)
	case *view:
		w.WriteString(v.kind)
		w.WriteString("(")
		w.items("[", "]", v.items, depth)
		w.WriteString(")")
	case *rangeVal:
		if v.step == 1 {
			fmt.Fprintf(w, "range(%d, %d)", v.start, v.stop)
		} else {
			fmt.Fprintf(w, "range(%d, %d, %d)", v.start, v.stop, v.step)
		}
	case *loopCtx:
		fmt.Fprintf(w, "<LoopContext %d/%d>", v.index0+1, v.length)
	case *sliceKey:
		w.WriteString("slice(")
		w.items("", "", []any{v.start, v.stop, v.step}, depth)
		w.WriteString(")")
	case callable:
		fmt.Fprintf(w, "<function %s>", v.funcName())
	default:
		fmt.Fprintf(w, "<%T>", v)
	}
}

func (w *reprWriter) items(open, close string, items []any, depth int) {
	w.WriteString(open)
	for i, x := range items {
		if i > 0 {
			w.WriteString(", ")
		}
		w.repr(x, depth+1)
	}
	w.WriteString(close)
}

// dict writes a dict; a namespace holding itself shows as {...}.
func (w *reprWriter) dict(d *Dict, depth int) {
	for _, o := range w.open {
		if o == d {
			w.WriteString("{...}")
			return
		}
	}
	w.open = append(w.open, d)
	w.WriteString("{")
	for i, k := range d.keys {
		if i > 0 {
			w.WriteString(", ")
		}
		w.repr(k, depth+1)
		w.WriteString(": ")
		w.repr(d.vals[i], depth+1)
	}
	w.WriteString("}")
	w.open = w.open[:len(w.open)-1]
}

// strRepr writes Python's repr of a str: single quotes unless the text
// has a single quote and no double one; backslash escapes for quotes,
// backslashes, \t \n \r and characters that are not printable.
func strRepr(b *strings.Builder, s string) {
	q := byte('\'')
	if strings.Contains(s, "'") && !strings.Contains(s, `"`) {
		q = '"'
	}
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == rune(q) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(b, `\x%02x`, r)
		case r < 0x7f || unicode.IsPrint(r):
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(b, `\x%02x`, r)
		case r < 0x10000:
			fmt.Fprintf(b, `\u%04x`, r)
		default:
			fmt.Fprintf(b, `\U%08x`, r)
		}
	}
	b.WriteByte(q)
}

// floatRepr is Python's repr of a float: the shortest digits that read
// back to f, positional for exponents from -4 to 15 (with ".0" when
// integral), scientific otherwise ("1e-05", "1.5e+16").
func floatRepr(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // -d.ddde±dd
	mant, exp, _ := strings.Cut(e, "e")
	x, _ := strconv.Atoi(exp)
	if x >= -4 && x < 16 {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.ContainsAny(s, ".") {
			s += ".0"
		}
		return s
	}
	sign := "+"
	if x < 0 {
		sign, x = "-", -x
	}
	return fmt.Sprintf("%se%s%02d", mant, sign, x)
}
