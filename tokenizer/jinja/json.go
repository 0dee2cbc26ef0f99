package jinja

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// DecodeJSON decodes JSON into template values, keeping the order of
// object keys as Python's json.loads does (objects become *Dict), integers
// as int64 and other numbers as float64. It is the way to hand a template
// messages and tools whose key order must survive into tojson.
func DecodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec, 0)
	if err != nil {
		return nil, fmt.Errorf("decoding JSON: %w", err)
	}
	if _, err := dec.Token(); err == nil {
		return nil, errors.New("decoding JSON: data after the value")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder, depth int) (any, error) {
	if depth > maxConvertDepth {
		return nil, fmt.Errorf("the value nests more than %d deep", maxConvertDepth)
	}
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := t.(type) {
	case json.Delim:
		switch t {
		case '[':
			list := []any{}
			for dec.More() {
				v, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				list = append(list, v)
			}
			_, err := dec.Token()
			return list, err
		case '{':
			d := NewDict()
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				d.set(k.(string), v)
			}
			_, err := dec.Token()
			return d, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	case json.Number:
		return numberFromJSON(string(t))
	case string:
		return strings.ToValidUTF8(t, "\uFFFD"), nil
	}
	return t, nil // bool or nil
}

// numberFromJSON is Python's reading of a JSON number: int without a
// fraction or exponent, float otherwise.
func numberFromJSON(s string) (any, error) {
	if !strings.ContainsAny(s, ".eE") {
		if v, err := strconv.ParseInt(s, 10, 64); err == nil {
			return v, nil
		}
		return nil, fmt.Errorf("the integer %s does not fit in 64 bits", s)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !math.IsInf(f, 0) {
		return nil, err
	}
	return f, nil
}

// jsonOpts are the arguments of transformers' tojson filter, which calls
// json.dumps(x, ensure_ascii=False, indent=indent, separators=separators,
// sort_keys=sort_keys) (its own filter, not Jinja's HTML-safe one).
type jsonOpts struct {
	ensureASCII   bool
	indent        string
	hasIndent     bool
	itemSep, kSep string
	sortKeys      bool
}

// dumps is Python's json.dumps with opts.
func (r *renderer) dumps(v any, o jsonOpts) (string, error) {
	var b strings.Builder
	if err := r.dumpValue(&b, v, o, 0); err != nil {
		return "", err
	}
	return b.String(), nil
}

func (r *renderer) dumpValue(b *strings.Builder, v any, o jsonOpts, level int) error {
	if level > maxConvertDepth {
		return errors.New("tojson: the value nests too deep")
	}
	if err := r.checkSize(b.Len()); err != nil {
		return err
	}
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if v {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case int64:
		b.WriteString(strconv.FormatInt(v, 10))
	case float64:
		switch {
		case math.IsNaN(v):
			b.WriteString("NaN")
		case math.IsInf(v, 1):
			b.WriteString("Infinity")
		case math.IsInf(v, -1):
			b.WriteString("-Infinity")
		default:
			b.WriteString(floatRepr(v))
		}
	case string:
		jsonString(b, v, o.ensureASCII)
	case markup:
		jsonString(b, string(v), o.ensureASCII)
	case []any:
		return r.dumpList(b, v, o, level)
	case tuple:
		return r.dumpList(b, v, o, level)
	case *Dict:
		return r.dumpDict(b, v, o, level)
	default:
		return fmt.Errorf("Object of type %s is not JSON serializable", typeName(v))
	}
	return nil
}

// newline writes the line break and indent of level, with an indent.
func (o jsonOpts) newline(b *strings.Builder, level int) {
	if o.hasIndent {
		b.WriteByte('\n')
		b.WriteString(strings.Repeat(o.indent, level))
	}
}

func (r *renderer) dumpList(b *strings.Builder, items []any, o jsonOpts, level int) error {
	if len(items) == 0 {
		b.WriteString("[]")
		return nil
	}
	b.WriteByte('[')
	for i, x := range items {
		if i > 0 {
			b.WriteString(o.itemSep)
		}
		o.newline(b, level+1)
		if err := r.dumpValue(b, x, o, level+1); err != nil {
			return err
		}
	}
	o.newline(b, level)
	b.WriteByte(']')
	return nil
}

func (r *renderer) dumpDict(b *strings.Builder, d *Dict, o jsonOpts, level int) error {
	if d.Len() == 0 {
		b.WriteString("{}")
		return nil
	}
	order := make([]int, d.Len())
	for i := range order {
		order[i] = i
	}
	if o.sortKeys {
		var err error
		sort.SliceStable(order, func(i, j int) bool {
			less, e := pyLess(d.keys[order[i]], d.keys[order[j]])
			if e != nil && err == nil {
				err = e
			}
			return less
		})
		if err != nil {
			return err
		}
	}
	b.WriteByte('{')
	for n, i := range order {
		if n > 0 {
			b.WriteString(o.itemSep)
		}
		o.newline(b, level+1)
		var key string
		switch k := d.keys[i].(type) {
		case string:
			key = k
		case markup:
			key = string(k)
		case nil:
			key = "null"
		case bool:
			key = map[bool]string{true: "true", false: "false"}[k]
		case int64:
			key = strconv.FormatInt(k, 10)
		case float64:
			var kb strings.Builder
			if err := r.dumpValue(&kb, k, o, level); err != nil {
				return err
			}
			key = kb.String()
		default:
			return fmt.Errorf("keys must be str, int, float, bool or None, not %s", typeName(k))
		}
		jsonString(b, key, o.ensureASCII)
		b.WriteString(o.kSep)
		if err := r.dumpValue(b, d.vals[i], o, level+1); err != nil {
			return err
		}
	}
	o.newline(b, level)
	b.WriteByte('}')
	return nil
}

// jsonString writes s quoted as Python's json module does: ", \ and
// control characters escaped, and with ensureASCII all non-ASCII as
// \uXXXX (surrogate pairs beyond the BMP).
func jsonString(b *strings.Builder, s string, ensureASCII bool) {
	const hex = "0123456789abcdef"
	u4 := func(r rune) {
		b.WriteString(`\u`)
		for shift := 12; shift >= 0; shift -= 4 {
			b.WriteByte(hex[r>>uint(shift)&0xf])
		}
	}
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			switch {
			case r < 0x20:
				u4(r)
			case ensureASCII && r > 0x7e:
				if r >= 0x10000 {
					r -= 0x10000
					u4(0xd800 + r>>10)
					u4(0xdc00 + r&0x3ff)
				} else {
					u4(r)
				}
			default:
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}
