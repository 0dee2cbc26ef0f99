package jinja

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strings"
)

var (
	errOverflow = errors.New("the integer result does not fit in 64 bits (Python's integers are unbounded; this package's are not)")
	errZeroDiv  = errors.New("division by zero")
)

// binop applies an arithmetic operator of the template with Python's
// semantics: int and float arithmetic, + on strings, lists and tuples,
// * repeating them, % formatting strings, / always a float, // and %
// flooring towards negative infinity.
func (r *renderer) binop(op string, a, b any) (any, error) {
	if u, ok := a.(*undefined); ok {
		return nil, u.err()
	}
	if _, isStr := asString(a); isStr && op == "%" {
		// str % Undefined never calls Undefined's methods: Python takes it
		// as a mapping.
	} else if u, ok := b.(*undefined); ok {
		return nil, u.err()
	}
	ai, af, aInt, aNum := number(a)
	bi, bf, bInt, bNum := number(b)
	if aNum && bNum {
		if aInt && bInt {
			return intOp(op, ai, bi)
		}
		return floatOp(op, af, bf)
	}
	switch op {
	case "+":
		return r.add(a, b)
	case "*":
		if s, n, ok := repeatArgs(a, b); ok {
			return r.repeat(s, n)
		}
		if repeatable(a) || repeatable(b) {
			other := b
			if !repeatable(a) {
				other = a
			}
			return nil, fmt.Errorf("can't multiply sequence by non-int of type '%s'", typeName(other))
		}
	case "%":
		if s, ok := asString(a); ok {
			out, err := r.percentFormat(s, b)
			if _, isMarkup := a.(markup); isMarkup && err == nil {
				return markup(out), nil
			}
			return out, err
		}
	}
	if op == "**" {
		op = "** or pow()"
	}
	return nil, fmt.Errorf("unsupported operand type(s) for %s: '%s' and '%s'", op, typeName(a), typeName(b))
}

// repeatable reports a str, list or tuple, which * repeats.
func repeatable(v any) bool {
	switch v.(type) {
	case string, markup, []any, tuple:
		return true
	}
	return false
}

// add is + on sequences. Markup escapes a plain string added to it, as
// markupsafe does.
func (r *renderer) add(a, b any) (any, error) {
	am, aIsMarkup := a.(markup)
	bm, bIsMarkup := b.(markup)
	as, aStr := asString(a)
	bs, bStr := asString(b)
	switch {
	case aStr && bStr:
		if err := r.checkSize(len(as) + len(bs)); err != nil {
			return nil, err
		}
		switch {
		case aIsMarkup && !bIsMarkup:
			return am + markup(htmlEscape(bs)), nil
		case bIsMarkup && !aIsMarkup:
			return markup(htmlEscape(as)) + bm, nil
		case aIsMarkup:
			return am + bm, nil
		}
		return as + bs, nil
	}
	switch a := a.(type) {
	case []any:
		if b, ok := b.([]any); ok {
			if err := r.checkItems(len(a) + len(b)); err != nil {
				return nil, err
			}
			return append(append(make([]any, 0, len(a)+len(b)), a...), b...), nil
		}
		return nil, fmt.Errorf("can only concatenate list (not \"%s\") to list", typeName(b))
	case tuple:
		if b, ok := b.(tuple); ok {
			if err := r.checkItems(len(a) + len(b)); err != nil {
				return nil, err
			}
			return append(append(make(tuple, 0, len(a)+len(b)), a...), b...), nil
		}
		return nil, fmt.Errorf("can only concatenate tuple (not \"%s\") to tuple", typeName(b))
	}
	if aStr {
		return nil, fmt.Errorf("can only concatenate str (not \"%s\") to str", typeName(b))
	}
	return nil, fmt.Errorf("unsupported operand type(s) for +: '%s' and '%s'", typeName(a), typeName(b))
}

// repeatArgs recognises sequence * int and int * sequence.
func repeatArgs(a, b any) (any, int64, bool) {
	if n, _, isInt, ok := number(b); ok && isInt {
		switch a.(type) {
		case string, markup, []any, tuple:
			return a, n, true
		}
	}
	if n, _, isInt, ok := number(a); ok && isInt {
		switch b.(type) {
		case string, markup, []any, tuple:
			return b, n, true
		}
	}
	return nil, 0, false
}

func (r *renderer) repeat(s any, n int64) (any, error) {
	n = max(n, 0)
	switch s := s.(type) {
	case string:
		if err := r.checkSize(int(min(n, math.MaxInt32)) * len(s)); err != nil {
			return nil, err
		}
		return strings.Repeat(s, int(n)), nil
	case markup:
		if err := r.checkSize(int(min(n, math.MaxInt32)) * len(s)); err != nil {
			return nil, err
		}
		return markup(strings.Repeat(string(s), int(n))), nil
	}
	items, _ := asSeq(s)
	if err := r.checkItems(int(min(n, math.MaxInt32)) * len(items)); err != nil {
		return nil, err
	}
	out := make([]any, 0, int(n)*len(items))
	for range n {
		out = append(out, items...)
	}
	if _, ok := s.(tuple); ok {
		return tuple(out), nil
	}
	return out, nil
}

func intOp(op string, a, b int64) (any, error) {
	switch op {
	case "+":
		s := a + b
		if (s > a) != (b > 0) {
			return nil, errOverflow
		}
		return s, nil
	case "-":
		s := a - b
		if (s < a) != (b > 0) {
			return nil, errOverflow
		}
		return s, nil
	case "*":
		hi, lo := bits.Mul64(uint64(absInt(a)), uint64(absInt(b)))
		if hi != 0 || lo > math.MaxInt64 || a == math.MinInt64 || b == math.MinInt64 {
			if a == 0 || b == 0 {
				return int64(0), nil
			}
			return nil, errOverflow
		}
		if (a < 0) != (b < 0) {
			return -int64(lo), nil
		}
		return int64(lo), nil
	case "/":
		if b == 0 {
			return nil, errZeroDiv
		}
		return float64(a) / float64(b), nil
	case "//", "%":
		if b == 0 && op == "//" {
			return nil, errors.New("integer division or modulo by zero")
		}
		if b == 0 {
			return nil, errors.New("integer modulo by zero")
		}
		if a == math.MinInt64 && b == -1 {
			return nil, errOverflow
		}
		q, m := a/b, a%b
		if m != 0 && (m < 0) != (b < 0) {
			q--
			m += b
		}
		if op == "//" {
			return q, nil
		}
		return m, nil
	case "**":
		return intPow(a, b)
	}
	return nil, fmt.Errorf("unknown operator %s", op)
}

// intPow is int ** int: an int for a non-negative exponent, a float for a
// negative one.
func intPow(a, b int64) (any, error) {
	switch {
	case b < 0:
		if a == 0 {
			return nil, errors.New("0.0 cannot be raised to a negative power")
		}
		return math.Pow(float64(a), float64(b)), nil
	case b == 0 || a == 1:
		return int64(1), nil
	case a == 0:
		return int64(0), nil
	case a == -1:
		if b%2 == 0 {
			return int64(1), nil
		}
		return int64(-1), nil
	}
	result := int64(1)
	for range b { // |a| >= 2 overflows within 64 steps
		v, err := intOp("*", result, a)
		if err != nil {
			return nil, err
		}
		result = v.(int64)
	}
	return result, nil
}

func absInt(a int64) int64 {
	if a < 0 {
		return -a
	}
	return a
}

func floatOp(op string, a, b float64) (any, error) {
	switch op {
	case "+":
		return a + b, nil
	case "-":
		return a - b, nil
	case "*":
		return a * b, nil
	case "/":
		if b == 0 {
			return nil, errors.New("float division by zero")
		}
		return a / b, nil
	case "//", "%":
		if b == 0 && op == "//" {
			return nil, errors.New("float floor division by zero")
		}
		if b == 0 {
			return nil, errors.New("float modulo")
		}
		m := math.Mod(a, b)
		div := (a - m) / b
		if m != 0 && (b < 0) != (m < 0) {
			m += b
			div -= 1
		}
		if op == "%" {
			if m == 0 {
				m = math.Copysign(0, b)
			}
			return m, nil
		}
		if div == 0 {
			return math.Copysign(0, a/b), nil
		}
		fl := math.Floor(div)
		if div-fl > 0.5 {
			fl++
		}
		return fl, nil
	case "**":
		if a == 0 && b < 0 {
			return nil, errors.New("0.0 cannot be raised to a negative power")
		}
		if a < 0 && b != math.Trunc(b) {
			return nil, errors.New("a negative number raised to a fractional power is complex, which templates do not support")
		}
		v := math.Pow(a, b)
		if math.IsInf(v, 0) && !math.IsInf(a, 0) && !math.IsInf(b, 0) {
			return nil, errors.New("(34, 'Numerical result out of range')")
		}
		return v, nil
	}
	return nil, fmt.Errorf("unknown operator %s", op)
}

// negate is unary minus.
func negate(v any) (any, error) {
	switch v := v.(type) {
	case bool:
		if v {
			return int64(-1), nil
		}
		return int64(0), nil
	case int64:
		if v == math.MinInt64 {
			return nil, errOverflow
		}
		return -v, nil
	case float64:
		return -v, nil
	case *undefined:
		return nil, v.err()
	}
	return nil, fmt.Errorf("bad operand type for unary -: '%s'", typeName(v))
}

// plus is unary plus.
func plus(v any) (any, error) {
	switch v := v.(type) {
	case bool:
		if v {
			return int64(1), nil
		}
		return int64(0), nil
	case int64, float64:
		return v, nil
	case *undefined:
		return nil, v.err()
	}
	return nil, fmt.Errorf("bad operand type for unary +: '%s'", typeName(v))
}
