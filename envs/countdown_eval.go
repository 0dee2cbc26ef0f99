package envs

import (
	"errors"
	"fmt"
	"math/big"
)

// A small recursive-descent evaluator for Countdown answers, in exact
// rationals, so that no answer text is ever handed to an interpreter.
//
//	expr    = term { ("+" | "-") term }
//	term    = unary { ("*" | "/") unary }
//	unary   = ("+" | "-") unary | primary
//	primary = integer | "(" expr ")"
//
// Spaces, tabs and line breaks may separate tokens. Integers are ASCII
// digits without leading zeros (Python rejects "05" too). Anything else —
// other characters, "**", "//", "%", decimals, "=" — is a syntax error.

const (
	exprMaxLen   = 1000 // longer answers are rejected before parsing
	exprMaxDepth = 100  // nesting of parentheses and signs
	exprMaxDigit = 18   // digits in one literal, so it fits an int64
)

// ExprError reports why an expression could not be evaluated and where.
type ExprError struct {
	Offset int    // byte offset in the input
	Msg    string // what was wrong there
}

// Error names the problem and its offset.
func (e *ExprError) Error() string {
	return fmt.Sprintf("expression: %s at offset %d", e.Msg, e.Offset)
}

// ErrDivisionByZero is returned (wrapped) for a well-formed expression that
// divides by zero.
var ErrDivisionByZero = errors.New("division by zero")

// EvalExpression evaluates an arithmetic expression over integers with
// + - * /, unary signs and parentheses, exactly. It returns the value and the
// integer literals in order of appearance. Malformed input gives an
// *ExprError; dividing by zero gives an error wrapping ErrDivisionByZero.
func EvalExpression(s string) (*big.Rat, []int64, error) {
	if len(s) > exprMaxLen {
		return nil, nil, &ExprError{Offset: exprMaxLen, Msg: fmt.Sprintf("input of %d bytes is longer than %d", len(s), exprMaxLen)}
	}
	p := &exprParser{s: s}
	v, err := p.expr(0)
	if err != nil {
		return nil, nil, err
	}
	p.skipSpace()
	if p.i < len(p.s) {
		return nil, nil, p.errorf("unexpected %q", p.s[p.i])
	}
	return v, p.literals, nil
}

type exprParser struct {
	s        string
	i        int
	literals []int64
}

func (p *exprParser) errorf(format string, args ...any) error {
	return &ExprError{Offset: p.i, Msg: fmt.Sprintf(format, args...)}
}

func (p *exprParser) skipSpace() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n' || p.s[p.i] == '\r') {
		p.i++
	}
}

// peek returns the next non-space byte, or 0 at the end.
func (p *exprParser) peek() byte {
	p.skipSpace()
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *exprParser) expr(depth int) (*big.Rat, error) {
	v, err := p.term(depth)
	for err == nil {
		op := p.peek()
		if op != '+' && op != '-' {
			return v, nil
		}
		p.i++
		var w *big.Rat
		if w, err = p.term(depth); err == nil {
			if op == '+' {
				v.Add(v, w)
			} else {
				v.Sub(v, w)
			}
		}
	}
	return nil, err
}

func (p *exprParser) term(depth int) (*big.Rat, error) {
	v, err := p.unary(depth)
	for err == nil {
		op := p.peek()
		if op != '*' && op != '/' {
			return v, nil
		}
		at := p.i
		p.i++
		if p.peek() == op {
			return nil, p.errorf("operator %q%q is not supported", op, op)
		}
		var w *big.Rat
		if w, err = p.unary(depth); err == nil {
			if op == '*' {
				v.Mul(v, w)
			} else if w.Sign() == 0 {
				err = fmt.Errorf("expression: offset %d: %w", at, ErrDivisionByZero)
			} else {
				v.Quo(v, w)
			}
		}
	}
	return nil, err
}

func (p *exprParser) unary(depth int) (*big.Rat, error) {
	if depth >= exprMaxDepth {
		return nil, p.errorf("nesting deeper than %d", exprMaxDepth)
	}
	switch p.peek() {
	case '+':
		p.i++
		return p.unary(depth + 1)
	case '-':
		p.i++
		v, err := p.unary(depth + 1)
		if err != nil {
			return nil, err
		}
		return v.Neg(v), nil
	}
	return p.primary(depth)
}

func (p *exprParser) primary(depth int) (*big.Rat, error) {
	c := p.peek()
	switch {
	case c == '(':
		p.i++
		v, err := p.expr(depth + 1)
		if err != nil {
			return nil, err
		}
		if p.peek() != ')' {
			return nil, p.errorf("missing )")
		}
		p.i++
		return v, nil
	case c >= '0' && c <= '9':
		start := p.i
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
		}
		lit := p.s[start:p.i]
		if len(lit) > 1 && lit[0] == '0' {
			return nil, &ExprError{Offset: start, Msg: fmt.Sprintf("integer %q has a leading zero", lit)}
		}
		if len(lit) > exprMaxDigit {
			return nil, &ExprError{Offset: start, Msg: fmt.Sprintf("integer of %d digits is longer than %d", len(lit), exprMaxDigit)}
		}
		var n int64
		for _, d := range []byte(lit) {
			n = n*10 + int64(d-'0')
		}
		p.literals = append(p.literals, n)
		return new(big.Rat).SetInt64(n), nil
	case c == 0:
		return nil, p.errorf("unexpected end")
	default:
		return nil, p.errorf("unexpected %q", c)
	}
}
