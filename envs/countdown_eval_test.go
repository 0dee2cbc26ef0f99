package envs

import (
	"errors"
	"math/big"
	"slices"
	"strings"
	"testing"
)

func TestEvalExpression(t *testing.T) {
	tests := []struct {
		in       string
		want     string // the value as a fraction
		literals []int64
	}{
		{"2 + 5 - 3", "4/1", []int64{2, 5, 3}},
		{"2+5*3", "17/1", []int64{2, 5, 3}},
		{"(2+5)*3", "21/1", []int64{2, 5, 3}},
		{"7/2", "7/2", []int64{7, 2}},
		{"1/3*3", "1/1", []int64{1, 3, 3}},
		{"8/4/2", "1/1", []int64{8, 4, 2}},
		{"10-4-3", "3/1", []int64{10, 4, 3}},
		{"- 74 + 62 + 44", "32/1", []int64{74, 62, 44}},
		{"2*-3", "-6/1", []int64{2, 3}},
		{"--3", "3/1", []int64{3}},
		{"+3", "3/1", []int64{3}},
		{" ( ( 1 ) ) \t", "1/1", []int64{1}},
		{"0", "0/1", []int64{0}},
		{"99 - (3 - (5 / (2 - 7)))", "95/1", []int64{99, 3, 5, 2, 7}},
	}
	for _, tt := range tests {
		v, lits, err := EvalExpression(tt.in)
		if err != nil {
			t.Errorf("EvalExpression(%q): %v", tt.in, err)
			continue
		}
		if v.String() != tt.want || !slices.Equal(lits, tt.literals) {
			t.Errorf("EvalExpression(%q) = %s, %v; want %s, %v", tt.in, v, lits, tt.want, tt.literals)
		}
	}
}

func TestEvalExpressionErrors(t *testing.T) {
	tests := []struct {
		in      string
		divZero bool
	}{
		{"", false}, {"   ", false}, {"1 +", false}, {"(1 + 2", false}, {"1 + 2)", false},
		{"()", false}, {"1 2", false}, {"2**3", false}, {"7//2", false}, {"7 % 2", false},
		{"3.5", false}, {"05 + 1", false}, {"2 + 5 - 3 = 4", false}, {"x + 1", false},
		{"2 − 1", false}, {"１ + 2", false}, {"__import__('os')", false}, {"1e3", false},
		{strings.Repeat("(", 200) + "1" + strings.Repeat(")", 200), false},
		{strings.Repeat("-", 200) + "1", false},
		{strings.Repeat("1+", 600) + "1", false}, // longer than the limit
		{"1234567890123456789", false},
		{"\xff\xfe", false},
		{"1/0", true}, {"5/(3-3)", true}, {"1/(2-2)*0", true},
	}
	for _, tt := range tests {
		v, _, err := EvalExpression(tt.in)
		if err == nil {
			t.Errorf("EvalExpression(%.40q) = %s, want an error", tt.in, v)
			continue
		}
		var ee *ExprError
		if got := errors.Is(err, ErrDivisionByZero); got != tt.divZero || (!tt.divZero && !errors.As(err, &ee)) {
			t.Errorf("EvalExpression(%.40q) error %v; want division by zero %v", tt.in, err, tt.divZero)
		}
	}
}

func TestEvalExpressionNestingWithinLimit(t *testing.T) {
	in := strings.Repeat("(", 40) + "6" + strings.Repeat(")", 40) + "/4"
	v, _, err := EvalExpression(in)
	if err != nil || v.Cmp(big.NewRat(3, 2)) != 0 {
		t.Errorf("EvalExpression(40 parentheses) = %v, %v; want 3/2", v, err)
	}
}
