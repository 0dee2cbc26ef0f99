package jinja

import "testing"

// Literals, operators and how values print (Python's str()).
var exprCases = []renderCase{
	{name: "int", src: "{{ 42 }} {{ -7 }} {{ 1_000 }} {{ 0x1f }} {{ 0o17 }} {{ 0b101 }}", want: "42 -7 1000 31 15 5"},
	{name: "floats", src: "{{ 1.0 }} {{ 0.1 }} {{ 1e-5 }} {{ 1.5e16 }} {{ 1e15 }} {{ 2.5E3 }} {{ 1e400 }} {{ 0.0001 }}", want: "1.0 0.1 1e-05 1.5e+16 1000000000000000.0 2500.0 inf 0.0001"},
	{name: "float arithmetic", src: "{{ 0.1 + 0.2 }} {{ 1 / 3 }} {{ 2 ** 0.5 }} {{ -0.0 }}", want: "0.30000000000000004 0.3333333333333333 1.4142135623730951 -0.0"},
	{name: "constants", src: "{{ true }} {{ False }} {{ none }} {{ None }} {{ True }}", want: "True False None None True"},
	{name: "strings", src: `{{ 'a' }}{{ "b" }}{{ 'it''s' }}{{ "q\"q" }}{{ 'x\ty\nz' }}{{ '\x41\u00e9\U0001F600\101' }}{{ '\d' }}`, want: "abitsq\"qx\ty\nzAé😀A\\d"},
	{name: "adjacent strings", src: `{{ 'a' "b" 'c' }}`, want: "abc"},
	{name: "list repr", src: `{{ [1, 'a', "b'c", 'd"e', none, true, 1.5, [2]] }}`, want: `[1, 'a', "b'c", 'd"e', None, True, 1.5, [2]]`},
	{name: "tuple repr", src: "{{ (1,) }} {{ () }} {{ (1, 'a') }} {{ 1, 2 }}", want: "(1,) () (1, 'a') (1, 2)"},
	{name: "dict repr", src: `{{ {'b': 1, 'a': [1, {'c': none}]} }} {{ {} }}`, want: "{'b': 1, 'a': [1, {'c': None}]} {}"},
	{name: "string repr escapes", src: `{{ ['a\nb\\c', '\x00\x7f', 'é\u00a0\u200b😀'] }}`, want: `['a\nb\\c', '\x00\x7f', 'é\xa0\u200b😀']`},
	{name: "dict keys", src: "{{ {1: 'a', 1.0: 'b', true: 'c', none: 'd'} }}", want: "{1: 'c', None: 'd'}"},
	{name: "variables", src: "{{ a }}{{ b.c }}{{ b['c'] }}", vars: `{"a": "x", "b": {"c": 2}}`, want: "x22"},
	{name: "undefined prints empty", src: "[{{ nope }}]", want: "[]"},
	{name: "missing key prints empty", src: "[{{ d.x }}{{ d['x'] }}]", vars: `{"d": {}}`, want: "[]"},
	{name: "index", src: "{{ l[0] }}{{ l[-1] }}{{ l.1 }}[{{ l[5] }}]", vars: `{"l": ["a", "b", "c"]}`, want: "acb[]"},
	{name: "slices", src: "{{ l[1:] }}{{ l[:-1] }}{{ l[::-1] }}{{ l[::2] }}{{ l[5:] }}{{ l[-10:1] }}", vars: `{"l": [1, 2, 3]}`, want: "[2, 3][1, 2][3, 2, 1][1, 3][][1]"},
	{name: "string slices", src: "{{ s[1:] }}|{{ s[::-1] }}|{{ s[0] }}|{{ s[-1] }}|{{ s[1:3] }}", vars: `{"s": "héllo"}`, want: "éllo|olléh|h|o|él"},
	{name: "add", src: "{{ 1 + 2 }} {{ 1 + 2.5 }} {{ 'a' + 'b' }} {{ [1] + [2] }} {{ (1,) + (2,) }} {{ true + 1 }}", want: "3 3.5 ab [1, 2] (1, 2) 2"},
	{name: "sub mul", src: "{{ 5 - 7 }} {{ 3 * 4 }} {{ 'ab' * 3 }} {{ 2 * 'x' }} {{ [0] * 3 }} {{ 'a' * -1 }}", want: "-2 12 ababab xx [0, 0, 0] "},
	{name: "div", src: "{{ 7 / 2 }} {{ 4 / 2 }} {{ 7 // 2 }} {{ -7 // 2 }} {{ 7.5 // 2 }} {{ -7.5 // 2 }}", want: "3.5 2.0 3 -4 3.0 -4.0"},
	{name: "mod", src: "{{ 7 % 3 }} {{ -7 % 3 }} {{ 7 % -3 }} {{ 7.5 % 2 }} {{ -7.5 % 2 }}", want: "1 2 -2 1.5 0.5"},
	{name: "pow", src: "{{ 2 ** 10 }} {{ 2 ** -1 }} {{ 2 ** 3 ** 2 }} {{ -2 ** 2 }} {{ 2.0 ** 2 }} {{ 0 ** 0 }}", want: "1024 0.5 64 4 4.0 1"},
	{name: "concat", src: "{{ 'a' ~ 1 ~ none ~ true ~ [1] ~ nope }}", want: "a1NoneTrue[1]"},
	{name: "unary", src: "{{ -(3) }} {{ +3 }} {{ -1.5 }} {{ - - 2 }} {{ not true }} {{ not 0 }} {{ not '' }}", want: "-3 3 -1.5 2 False True True"},
	{name: "unary binds before filter", src: "{{ -3|abs }} {{ -x|abs }}", vars: `{"x": 4}`, want: "3 4"},
	{name: "compare", src: "{{ 1 < 2 }} {{ 2 <= 1 }} {{ 'a' < 'b' }} {{ [1, 2] < [1, 3] }} {{ 1 == 1.0 }} {{ 1 == true }} {{ 'a' != 'a' }} {{ none == none }}", want: "True False True True True True False True"},
	{name: "chained compare", src: "{{ 1 < 2 < 3 }} {{ 1 < 3 < 2 }} {{ 3 > 2 == 2 }}", want: "True False True"},
	{name: "in", src: "{{ 'a' in 'cat' }} {{ 2 in [1, 2] }} {{ 'k' in {'k': 1} }} {{ 3 not in [1] }} {{ 'x' in nope }} {{ 1 in (1, 2) }}", want: "True True True True False True"},
	{name: "and or", src: "{{ 1 and 2 }} {{ 0 and 2 }} {{ 0 or 'x' }} {{ '' or [] }} {{ none or 0 }} {{ 1 or nope.x }}", want: "2 0 x [] 0 1"},
	{name: "precedence", src: "{{ 1 + 2 * 3 }} {{ (1 + 2) * 3 }} {{ 2 * 3 ~ 4 }} {{ 1 ~ 2 * 3 }} {{ not 1 == 2 }} {{ 1 or 0 and 0 }}", want: "7 9 64 16 True 1"},
	{name: "concat binds tighter than plus", src: "{{ 1 + 1 ~ 2 }}", err: "unsupported operand type(s) for +: 'int' and 'str'"},
	{name: "conditional", src: "{{ 'y' if true else 'n' }}{{ 'y' if false else 'n' }}[{{ 'y' if false }}]{{ 1 if 0 else 2 if 0 else 3 }}", want: "yn[]3"},
	{name: "truthiness", src: "{% for v in [0, 1, '', 'a', [], [0], {}, {'a': 1}, none, 0.0, nope] %}{{ 'T' if v else 'F' }}{% endfor %}", want: "FTFTFTFTFFF"},
	{name: "equality across types", src: "{{ [1] == [1] }} {{ (1,) == [1] }} {{ {'a': 1} == {'a': 1} }} {{ '1' == 1 }} {{ nope == nope2 }}", want: "True False True False True"},
	{name: "dotted integer subscript", src: "{{ m.0.content }}", vars: `{"m": [{"content": "c"}]}`, want: "c"},
	{name: "attribute then item", src: "{{ d.items is callable }}|{{ d['items'] }}|{{ d.content }}", vars: `{"d": {"items": 1, "content": 2}}`, want: "True|1|2"},
	{name: "method as value prints", src: "{{ 'abc'.upper() }}", want: "ABC"},
	{name: "negative index", src: "{{ messages[-1].role }}", vars: `{"messages": [{"role": "a"}, {"role": "b"}]}`, want: "b"},
	{name: "big int", src: "{{ 9223372036854775807 }}", want: "9223372036854775807"},
	{name: "nan inf", src: "{{ 1e400 - 1e400 }} {{ -1e400 }}", want: "nan -inf"},
}

// Jinja's tests ("x is name").
var testCases = []renderCase{
	{name: "defined", src: "{{ a is defined }} {{ b is defined }} {{ b is not defined }} {{ b is undefined }} {{ a.x is defined }}", vars: `{"a": {}}`, want: "True False True True False"},
	{name: "none", src: "{{ none is none }} {{ 0 is none }} {{ a is not none }}", vars: `{"a": null}`, want: "True False False"},
	{name: "types", src: "{{ 'a' is string }} {{ 1 is string }} {{ 1 is number }} {{ 1.5 is number }} {{ true is number }} {{ 'a' is number }}", want: "True False True True True False"},
	{name: "integer float", src: "{{ 1 is integer }} {{ true is integer }} {{ 1.0 is integer }} {{ 1.0 is float }} {{ 1 is float }}", want: "True False False True False"},
	{name: "boolean true false", src: "{{ true is boolean }} {{ 1 is boolean }} {{ true is true }} {{ 1 is true }} {{ false is false }} {{ 0 is false }}", want: "True False True False True False"},
	{name: "mapping", src: "{{ {} is mapping }} {{ [] is mapping }} {{ x is mapping }}", vars: `{"x": {"a": 1}}`, want: "True False True"},
	{name: "iterable", src: "{{ [] is iterable }} {{ 'a' is iterable }} {{ {} is iterable }} {{ 1 is iterable }} {{ none is iterable }} {{ nope is iterable }}", want: "True True True False False True"},
	{name: "sequence", src: "{{ [] is sequence }} {{ 'a' is sequence }} {{ {} is sequence }} {{ 1 is sequence }} {{ (1,) is sequence }}", want: "True True True False True"},
	{name: "callable", src: "{{ range is callable }} {{ 'a'.upper is callable }} {{ 1 is callable }} {{ raise_exception is callable }}", want: "True True False True"},
	{name: "odd even divisibleby", src: "{{ 3 is odd }} {{ 3 is even }} {{ 4 is even }} {{ 9 is divisibleby 3 }} {{ 9 is divisibleby(4) }} {{ 3.0 is odd }}", want: "True False True True False True"},
	{name: "comparison tests", src: "{{ 1 is eq 1 }} {{ 1 is equalto 2 }} {{ 2 is gt 1 }} {{ 2 is lt 1 }} {{ 2 is ge 2 }} {{ 1 is le 0 }} {{ 1 is ne 2 }} {{ 3 is greaterthan 2 }} {{ 1 is lessthan 2 }}", want: "True False True False True False True True True"},
	{name: "in test", src: "{{ 1 is in [1, 2] }} {{ 'a' is in 'bcd' }}", want: "True False"},
	{name: "lower upper", src: "{{ 'abc' is lower }} {{ 'aBc' is lower }} {{ 'ABC' is upper }} {{ '1' is upper }}", want: "True False True False"},
	{name: "sameas", src: "{{ none is sameas none }} {{ true is sameas true }} {{ 1 is sameas true }}", want: "True True False"},
	{name: "filter test names", src: "{{ 'trim' is filter }} {{ 'nope' is filter }} {{ 'odd' is test }}", want: "True False True"},
	{name: "escaped", src: "{{ 'a' is escaped }} {{ ('a'|e) is escaped }}", want: "False True"},
	{name: "test binds tighter than and", src: "{{ x is defined and x }} {{ not x is defined }}", vars: `{"x": 1}`, want: "1 False"},
}

func TestExpressions(t *testing.T) { runCases(t, exprCases) }

func TestTests(t *testing.T) { runCases(t, testCases) }
