package jinja

import (
	"fmt"
	"unicode"
)

// testFunc is a Jinja test ("x is name(args)").
type testFunc func(r *renderer, v any, args []any) (bool, error)

// tests are the supported Jinja tests; others fail at Parse.
var tests map[string]testFunc

func baseTests() map[string]testFunc {
	cmp := func(op string) testFunc {
		return func(_ *renderer, v any, a []any) (bool, error) { return compare(op, v, a[0]) }
	}
	t := map[string]testFunc{
		"odd":         func(r *renderer, v any, _ []any) (bool, error) { return modIs(r, v, int64(2), 1) },
		"even":        func(r *renderer, v any, _ []any) (bool, error) { return modIs(r, v, int64(2), 0) },
		"divisibleby": func(r *renderer, v any, a []any) (bool, error) { return modIs(r, v, a[0], 0) },
		"defined":     func(_ *renderer, v any, _ []any) (bool, error) { _, u := v.(*undefined); return !u, nil },
		"undefined":   func(_ *renderer, v any, _ []any) (bool, error) { _, u := v.(*undefined); return u, nil },
		"none":        func(_ *renderer, v any, _ []any) (bool, error) { return v == nil, nil },
		"boolean":     func(_ *renderer, v any, _ []any) (bool, error) { _, ok := v.(bool); return ok, nil },
		"true":        func(_ *renderer, v any, _ []any) (bool, error) { return v == true, nil },
		"false":       func(_ *renderer, v any, _ []any) (bool, error) { return v == false, nil },
		"integer":     func(_ *renderer, v any, _ []any) (bool, error) { _, ok := v.(int64); return ok, nil },
		"float":       func(_ *renderer, v any, _ []any) (bool, error) { _, ok := v.(float64); return ok, nil },
		"number":      func(_ *renderer, v any, _ []any) (bool, error) { _, _, _, ok := number(v); return ok, nil },
		"string":      func(_ *renderer, v any, _ []any) (bool, error) { _, ok := asString(v); return ok, nil },
		"mapping":     func(_ *renderer, v any, _ []any) (bool, error) { _, ok := v.(*Dict); return ok, nil },
		"lower":       func(_ *renderer, v any, _ []any) (bool, error) { return casedAll(pyStr(v), unicode.IsLower), nil },
		"upper":       func(_ *renderer, v any, _ []any) (bool, error) { return casedAll(pyStr(v), unicode.IsUpper), nil },
		"escaped":     func(_ *renderer, v any, _ []any) (bool, error) { _, ok := v.(markup); return ok, nil },
		"sequence":    isSequence,
		"iterable":    isIterable,
		"callable":    isCallable,
		"sameas":      func(_ *renderer, v any, a []any) (bool, error) { return sameAs(v, a[0]), nil },
		"in":          func(_ *renderer, v any, a []any) (bool, error) { return contains(a[0], v) },
		"filter": func(_ *renderer, v any, _ []any) (bool, error) {
			_, ok := filters[pyStr(v)]
			return ok, nil
		},
		"test": func(_ *renderer, v any, _ []any) (bool, error) {
			_, ok := tests[pyStr(v)]
			return ok, nil
		},
	}
	for _, names := range [][]string{
		{"==", "eq", "equalto"}, {"!=", "ne"}, {">", "gt", "greaterthan"},
		{">=", "ge"}, {"<", "lt", "lessthan"}, {"<=", "le"},
	} {
		for _, n := range names {
			t[n] = cmp(names[0])
		}
	}
	return t
}

// testArity is the number of arguments of the tests that take one.
var testArity = map[string]int{
	"divisibleby": 1, "sameas": 1, "in": 1, "==": 1, "eq": 1, "equalto": 1,
	"!=": 1, "ne": 1, ">": 1, "gt": 1, "greaterthan": 1, ">=": 1, "ge": 1,
	"<": 1, "lt": 1, "lessthan": 1, "<=": 1, "le": 1,
}

// testParams names the argument of the one-argument tests, for keywords.
var testParams = map[string]string{
	"divisibleby": "num", "sameas": "other", "in": "seq",
}

// runTest applies the named test to v.
func (r *renderer) runTest(name string, v any, args []any, kw []kwval) (any, error) {
	n := testArity[name]
	params := []string{"b"}
	if p, ok := testParams[name]; ok {
		params = []string{p}
	}
	if n == 0 && len(args) > 0 {
		return nil, fmt.Errorf("test_%s() takes 1 positional argument but %d were given", name, len(args)+1)
	}
	a, given, err := bindArgs(name, args, kw, params[:n]...)
	if err != nil {
		return nil, err
	}
	if n == 1 && !given[0] {
		return nil, fmt.Errorf("the test %s needs an argument", name)
	}
	return tests[name](r, v, a)
}

// modIs is value % n == want, with Python's % (so 3.0 is odd).
func modIs(r *renderer, v, n any, want int64) (bool, error) {
	m, err := r.binop("%", v, n)
	if err != nil {
		return false, err
	}
	return pyEq(m, want), nil
}

// casedAll is str.islower/isupper: some cased character and none of the
// other case.
func casedAll(s string, is func(rune) bool) bool {
	cased := false
	for _, c := range s {
		if unicode.IsUpper(c) || unicode.IsLower(c) || unicode.IsTitle(c) {
			if !is(c) {
				return false
			}
			cased = true
		}
	}
	return cased
}

// isSequence: len() and item access work (str, list, tuple, dict, range,
// and Undefined, whose item access exists but fails).
func isSequence(_ *renderer, v any, _ []any) (bool, error) {
	switch v.(type) {
	case string, markup, []any, tuple, *Dict, *rangeVal, *undefined:
		return true, nil
	}
	return false, nil
}

// isIterable: iter() works.
func isIterable(_ *renderer, v any, _ []any) (bool, error) {
	switch v.(type) {
	case string, markup, []any, tuple, *Dict, *rangeVal, *undefined, *iterator, *view, *loopCtx:
		return true, nil
	}
	return false, nil
}

// isCallable: Python's callable(); Undefined and the loop count, as their
// classes define __call__.
func isCallable(_ *renderer, v any, _ []any) (bool, error) {
	switch v.(type) {
	case callable, *undefined, *loopCtx:
		return true, nil
	}
	return false, nil
}

// sameAs approximates Python's "is": singletons and small values by
// value, containers by identity.
func sameAs(a, b any) bool {
	switch x := a.(type) {
	case nil, bool, int64, string:
		return a == b
	case float64:
		y, ok := b.(float64)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		return ok && len(x) == len(y) && (len(x) == 0 || &x[0] == &y[0])
	case tuple:
		y, ok := b.(tuple)
		return ok && len(x) == len(y) && (len(x) == 0 || &x[0] == &y[0])
	case *Dict, *namespace, *iterator, *macro, *builtin, *loopCtx:
		return a == b
	}
	return false
}
