package jinja

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Filters that order or aggregate sequences, and numbers.

// sortKeys computes sort's keys: the attribute paths (comma separated),
// lowercased unless case sensitive.
func sortKeys(items []any, attribute any, caseSensitive bool) ([]any, error) {
	var paths [][]any
	if s, ok := attribute.(string); ok {
		for _, part := range strings.Split(s, ",") {
			paths = append(paths, attrPath(part))
		}
	} else if attribute != nil {
		paths = [][]any{{attribute}}
	}
	keys := make([]any, len(items))
	for i, it := range items {
		if len(paths) == 0 {
			keys[i] = it
			if !caseSensitive {
				keys[i] = ignoreCase(it)
			}
			continue
		}
		k := make([]any, len(paths))
		for j, p := range paths {
			x, err := lookupPath(it, p, nil)
			if err != nil {
				return nil, err
			}
			if !caseSensitive {
				x = ignoreCase(x)
			}
			k[j] = x
		}
		keys[i] = k
	}
	return keys, nil
}

func fSort(_ *renderer, v any, args []any, kw []kwval) (any, error) {
	a, _, err := bindArgs("sort", args, kw, "reverse", "case_sensitive", "attribute")
	if err != nil {
		return nil, err
	}
	items, err := iterate(v)
	if err != nil {
		return nil, err
	}
	keys, err := sortKeys(items, a[2], truthy(a[1]))
	if err != nil {
		return nil, err
	}
	return sortByKeys(items, keys, truthy(a[0]))
}

func fUnique(_ *renderer, v any, args []any, kw []kwval) (any, error) {
	a, _, err := bindArgs("unique", args, kw, "case_sensitive", "attribute")
	if err != nil {
		return nil, err
	}
	items, err := iterate(v)
	if err != nil {
		return nil, err
	}
	var seen []any
	var out []any
	for _, it := range items {
		k := it
		if a[1] != nil {
			if k, err = lookupPath(it, attrPath(a[1]), nil); err != nil {
				return nil, err
			}
		}
		if !truthy(a[0]) {
			k = ignoreCase(k)
		}
		if _, ok := hashKey(k); !ok {
			if _, isU := k.(*undefined); !isU {
				return nil, errUnhashable(k)
			}
		}
		dup := false
		for _, s := range seen {
			if pyEq(s, k) {
				dup = true
				break
			}
		}
		if !dup {
			seen = append(seen, k)
			out = append(out, it)
		}
	}
	return &iterator{name: "sync_do_unique", items: out}, nil
}

func fMax(_ *renderer, v any, args []any, kw []kwval) (any, error) {
	return minMax(v, args, kw, "max", 1)
}

func fMin(_ *renderer, v any, args []any, kw []kwval) (any, error) {
	return minMax(v, args, kw, "min", -1)
}

func minMax(v any, args []any, kw []kwval, name string, sign int) (any, error) {
	a, _, err := bindArgs(name, args, kw, "case_sensitive", "attribute")
	if err != nil {
		return nil, err
	}
	items, err := iterate(v)
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return &undefined{hint: "No aggregated item, sequence was empty."}, nil
	}
	keys := make([]any, len(items))
	for i, it := range items {
		k := it
		if a[1] != nil {
			if k, err = lookupPath(it, attrPath(a[1]), nil); err != nil {
				return nil, err
			}
		}
		if !truthy(a[0]) {
			k = ignoreCase(k)
		}
		keys[i] = k
	}
	best := 0
	for i := 1; i < len(items); i++ {
		c, err := pyCompare(keys[i], keys[best], map[int]string{1: ">", -1: "<"}[sign])
		if err != nil {
			return nil, err
		}
		if c == sign {
			best = i
		}
	}
	return items[best], nil
}

func fReverse(_ *renderer, v any, args []any, kw []kwval) (any, error) {
	if s, ok := asString(v); ok {
		runes := []rune(s)
		for i, j := 0, len(runes)-1; i < j; i, j = i+1, j-1 {
			runes[i], runes[j] = runes[j], runes[i]
		}
		if _, isM := v.(markup); isM {
			return markup(runes), nil
		}
		return string(runes), nil
	}
	items, err := iterate(v)
	if err != nil {
		return nil, fmt.Errorf("argument must be iterable")
	}
	out := make([]any, len(items))
	for i, it := range items {
		out[len(items)-1-i] = it
	}
	if _, ok := v.(*iterator); ok {
		return out, nil // reversed() fails on generators, so Jinja builds a list
	}
	return &iterator{name: "reversed", items: out}, nil
}

func fRound(_ *renderer, v any, args []any, kw []kwval) (any, error) {
	a, given, err := bindArgs("round", args, kw, "precision", "method")
	if err != nil {
		return nil, err
	}
	prec := int64(0)
	if given[0] {
		p, _, isInt, ok := number(a[0])
		if !ok || !isInt {
			return nil, fmt.Errorf("'%s' object cannot be interpreted as an integer", typeName(a[0]))
		}
		prec = max(-400, min(p, 400))
	}
	method := "common"
	if given[1] {
		method = pyStr(a[1])
	}
	i, f, isInt, ok := number(v)
	if !ok {
		return nil, fmt.Errorf("type %s doesn't define __round__ method", typeName(v))
	}
	switch method {
	case "common":
		if isInt {
			if prec >= 0 {
				return i, nil
			}
			return roundInt(i, prec), nil
		}
		return roundFloat(f, prec), nil
	case "ceil", "floor":
		scale := math.Pow(10, float64(prec))
		x := f * scale
		if method == "ceil" {
			x = math.Ceil(x)
		} else {
			x = math.Floor(x)
		}
		return x / scale, nil
	}
	return nil, fmt.Errorf("method must be common, ceil or floor")
}

// roundFloat is Python's round(f, n): correctly rounded, halves to even.
func roundFloat(f float64, n int64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return f
	}
	if n >= 0 {
		r, _ := strconv.ParseFloat(strconv.FormatFloat(f, 'f', int(n), 64), 64)
		return r
	}
	scale := math.Pow(10, float64(-n))
	return math.RoundToEven(f/scale) * scale
}

// roundInt is round(i, n) for negative n: to a multiple of 10**-n, halves
// to even.
func roundInt(i, n int64) int64 {
	if n < -18 {
		return 0
	}
	p := int64(1)
	for range -n {
		p *= 10
	}
	q, rem := i/p, i%p
	if rem < 0 {
		q, rem = q-1, rem+p
	}
	if 2*rem > p || 2*rem == p && q%2 != 0 {
		q++
	}
	return q * p
}

func fSum(r *renderer, v any, args []any, kw []kwval) (any, error) {
	a, given, err := bindArgs("sum", args, kw, "attribute", "start")
	if err != nil {
		return nil, err
	}
	items, err := iterate(v)
	if err != nil {
		return nil, err
	}
	total := any(int64(0))
	if given[1] {
		total = a[1]
	}
	for _, it := range items {
		if a[0] != nil {
			if it, err = lookupPath(it, attrPath(a[0]), nil); err != nil {
				return nil, err
			}
		}
		if _, ok := asString(it); ok {
			return nil, fmt.Errorf("unsupported operand type(s) for +: '%s' and 'str'", typeName(total))
		}
		if total, err = r.binop("+", total, it); err != nil {
			return nil, err
		}
	}
	return total, nil
}
