package jinja

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"
)

// truthy is Python's bool(v).
func truthy(v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case bool:
		return v
	case int64:
		return v != 0
	case float64:
		return v != 0
	case string:
		return v != ""
	case markup:
		return v != ""
	case []any:
		return len(v) > 0
	case tuple:
		return len(v) > 0
	case *Dict:
		return v.Len() > 0
	case *undefined:
		return false
	case *view:
		return len(v.items) > 0
	case *rangeVal:
		return v.len() > 0
	}
	return true // namespaces, iterators, functions, the loop
}

// number returns v as a float and whether v is an int (bool counts as
// one, as in Python).
func number(v any) (i int64, f float64, isInt, ok bool) {
	switch v := v.(type) {
	case bool:
		if v {
			return 1, 1, true, true
		}
		return 0, 0, true, true
	case int64:
		return v, float64(v), true, true
	case float64:
		return 0, v, false, true
	}
	return 0, 0, false, false
}

// asString returns the text of a str or Markup.
func asString(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case markup:
		return string(v), true
	}
	return "", false
}

// asSeq returns the items of a list or tuple.
func asSeq(v any) ([]any, bool) {
	switch v := v.(type) {
	case []any:
		return v, true
	case tuple:
		return v, true
	}
	return nil, false
}

// pyEq is Python's ==.
func pyEq(a, b any) bool {
	if ai, af, aInt, ok := number(a); ok {
		bi, bf, bInt, ok := number(b)
		if !ok {
			return false
		}
		if aInt && bInt {
			return ai == bi
		}
		return af == bf
	}
	if as, ok := asString(a); ok {
		bs, ok := asString(b)
		return ok && as == bs
	}
	switch a := a.(type) {
	case nil:
		return b == nil
	case []any:
		bl, ok := b.([]any)
		return ok && seqEq(a, bl)
	case tuple:
		bt, ok := b.(tuple)
		return ok && seqEq(a, bt)
	case *Dict:
		bd, ok := b.(*Dict)
		if !ok || a.Len() != bd.Len() {
			return false
		}
		for i, k := range a.keys {
			bv, ok := bd.Get(k)
			if !ok || !pyEq(a.vals[i], bv) {
				return false
			}
		}
		return true
	case *undefined:
		_, ok := b.(*undefined)
		return ok
	case *rangeVal:
		br, ok := b.(*rangeVal)
		return ok && seqEq(a.items(), br.items())
	case *view:
		bv, ok := b.(*view)
		return ok && a.kind == bv.kind && a.kind != "dict_values" && seqEq(a.items, bv.items)
	}
	return a == b // identity for namespaces, functions, iterators
}

func seqEq(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !pyEq(a[i], b[i]) {
			return false
		}
	}
	return true
}

// pyLess is Python's a < b, an error for values without an order.
func pyLess(a, b any) (bool, error) {
	c, err := pyCompare(a, b, "<")
	return c < 0, err
}

// pyCompare orders a and b: numbers, strings (by code point) and lists or
// tuples (lexicographically); op names the operator for the error.
func pyCompare(a, b any, op string) (int, error) {
	if ai, af, aInt, ok := number(a); ok {
		if bi, bf, bInt, ok := number(b); ok {
			switch {
			case aInt && bInt:
				return cmp3(ai < bi, ai > bi), nil
			case math.IsNaN(af) || math.IsNaN(bf):
				return 2, nil // unordered: every comparison false
			}
			return cmp3(af < bf, af > bf), nil
		}
	}
	if as, ok := asString(a); ok {
		if bs, ok := asString(b); ok {
			return strings.Compare(as, bs), nil // UTF-8 keeps code point order
		}
	}
	al, aok := a.([]any)
	bl, bok := b.([]any)
	if !aok || !bok {
		at, aok2 := a.(tuple)
		bt, bok2 := b.(tuple)
		aok, bok, al, bl = aok2, bok2, at, bt
	}
	if aok && bok {
		for i := 0; i < len(al) && i < len(bl); i++ {
			if !pyEq(al[i], bl[i]) {
				return pyCompare(al[i], bl[i], op)
			}
		}
		return cmp3(len(al) < len(bl), len(al) > len(bl)), nil
	}
	if u, ok := a.(*undefined); ok {
		return 0, u.err()
	}
	if u, ok := b.(*undefined); ok {
		return 0, u.err()
	}
	return 0, fmt.Errorf("'%s' not supported between instances of '%s' and '%s'", op, typeName(a), typeName(b))
}

func cmp3(less, greater bool) int {
	switch {
	case less:
		return -1
	case greater:
		return 1
	}
	return 0
}

// compare applies a comparison operator of the template.
func compare(op string, a, b any) (bool, error) {
	switch op {
	case "==":
		return pyEq(a, b), nil
	case "!=":
		return !pyEq(a, b), nil
	case "in":
		return contains(b, a)
	case "notin":
		in, err := contains(b, a)
		return !in, err
	}
	c, err := pyCompare(a, b, op)
	if err != nil || c == 2 {
		return false, err
	}
	switch op {
	case "<":
		return c < 0, nil
	case ">":
		return c > 0, nil
	case "<=":
		return c <= 0, nil
	}
	return c >= 0, nil
}

// contains is Python's "x in container".
func contains(container, x any) (bool, error) {
	if s, ok := asString(container); ok {
		sub, ok := asString(x)
		if !ok {
			return false, fmt.Errorf("'in <string>' requires string as left operand, not %s", typeName(x))
		}
		return strings.Contains(s, sub), nil
	}
	switch c := container.(type) {
	case *Dict:
		if _, ok := hashKey(x); !ok {
			return false, errUnhashable(x)
		}
		_, ok := c.Get(x)
		return ok, nil
	case *namespace:
		return false, errors.New("argument of type 'Namespace' is not iterable")
	}
	items, err := iterate(container)
	if err != nil {
		return false, fmt.Errorf("argument of type '%s' is not iterable", typeName(container))
	}
	for _, it := range items {
		if pyEq(it, x) {
			return true, nil
		}
	}
	return false, nil
}

// iterate returns the items of an iterable as Python's iter() yields them:
// a list's items, a str's characters, a dict's keys; consuming an iterator.
func iterate(v any) ([]any, error) {
	switch v := v.(type) {
	case []any:
		return v, nil
	case tuple:
		return v, nil
	case string:
		return chars(v), nil
	case markup:
		return chars(string(v)), nil
	case *Dict:
		return v.keys, nil
	case *undefined:
		return nil, nil
	case *iterator:
		return v.rest()
	case *view:
		return v.items, nil
	case *rangeVal:
		return v.items(), nil
	case *loopCtx:
		// Jinja's loop is its own iterator: iterating it would consume the
		// rest of the running loop.
		return nil, errors.New("iterating over the loop variable is not supported")
	}
	return nil, fmt.Errorf("'%s' object is not iterable", typeName(v))
}

// chars splits s into one-character strings.
func chars(s string) []any {
	out := make([]any, 0, utf8.RuneCountInString(s))
	for _, r := range s {
		out = append(out, string(r))
	}
	return out
}

// length is Python's len(v).
func length(v any) (int, error) {
	switch v := v.(type) {
	case string:
		return utf8.RuneCountInString(v), nil
	case markup:
		return utf8.RuneCountInString(string(v)), nil
	case []any:
		return len(v), nil
	case tuple:
		return len(v), nil
	case *Dict:
		return v.Len(), nil
	case *undefined:
		return 0, nil
	case *view:
		return len(v.items), nil
	case *rangeVal:
		return int(v.len()), nil
	case *loopCtx:
		return v.length, nil
	}
	return 0, fmt.Errorf("object of type '%s' has no len()", typeName(v))
}
