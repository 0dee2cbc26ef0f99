package jinja

import "testing"

// Edge cases of formatting and conversion, checked against jinja2 like
// the other tables.
var formatCases = []renderCase{
	{name: "format specs", src: "{{ '{:8.3f}|{:<8}|{:*^9}|{:+d}|{:x}|{:#x}|{:08.2f}|{:.1%}|{:e}|{:.3g}|{:_}'.format(3.14159, 'ab', 'mid', 5, 255, 255, -3.14159, 0.256, 12345.678, 0.0001234, 1000000) }}", want: "   3.142|ab      |***mid***|+5|ff|0xff|-0003.14|25.6%|1.234568e+04|0.000123|1_000_000"},
	{name: "format fields", src: "{{ '{0[0]}-{0[1]}-{d[k]}-{d.k}'.format(l, d=d) }}|{{ '{!s:>4}'.format(1) }}|{{ '{:5}'.format(true) }}|{{ '{}'.format(none) }}", vars: `{"l": ["a", "b"], "d": {"k": "v"}}`, want: "a-b-v-v|   1|    1|None"},
	{name: "percent specs", src: "{{ '%5s|%-5s|%.2s|%+d|% d|%05d|%x|%X|%#o|%e|%.3f|%g|%c|%r|%i|%%' % ('ab', 'ab', 'abc', 3, 3, -42, 255, 255, 8, 12345.678, 2.0005, 0.00001, 65, 'q', 7.9) }}", want: "   ab|ab   |ab|+3| 3|-0042|ff|FF|0o10|1.234568e+04|2.001|1e-05|A|'q'|7|%"},
	{name: "percent mapping", src: "{{ '%(a)s and %(b)05.1f' % {'a': [1], 'b': 2.25} }}|{{ '%s' % none }}|{{ '%s %s' % (1, 2) }}", want: "[1] and 002.2|None|1 2"},
	{name: "float printing", src: "{{ [1e16, 1.5e-7, 123456789.0, 0.1 + 0.7, 1/3 * 3, 2.5e-5, 100.0, -1e-10, 1.7976931348623157e308] }}", want: "[1e+16, 1.5e-07, 123456789.0, 0.7999999999999999, 1.0, 2.5e-05, 100.0, -1e-10, 1.7976931348623157e+308]"},
	{name: "int conversions", src: "{{ '0b11'|int(0, 0) }} {{ '0o17'|int(0, 8) }} {{ 'ff'|int(0, 16) }} {{ '-12'|int }} {{ '+7'|int }} {{ '1e3'|int }} {{ ''|int }} {{ '012'|int }} {{ '012'|int(base=0) }}", want: "3 15 255 -12 7 1000 0 12 12"},
	{name: "round", src: "{{ -2.5|round }} {{ 0.5|round }} {{ 1.5|round }} {{ 2.345|round(2) }} {{ -1.55|round(1) }} {{ 1234.5|round(-1) }} {{ 15|round(-1) }} {{ 25|round(-1) }} {{ -15|round(-1) }} {{ 3.7|round(0, 'floor') }} {{ -3.2|round(method='ceil') }}", want: "-2.0 0.0 2.0 2.35 -1.6 1230.0 20 20 -20 3.0 -3.0"},
	{name: "unicode case", src: "{{ 'ǆemal'|title }} {{ 'ǆ'.title() }} {{ 'ﬁx'.upper() }} {{ 'İ'.lower()|length }} {{ 'éCOLE'|capitalize }} {{ 'ΣΑΣ'.lower() }} {{ 'ß'.title() }}", want: "Ǆemal ǅ FIX 2 École σας Ss"},
	{name: "strftime", src: "{{ strftime_now('%a %A %b %B %c|%D|%e|%F|%H %I %j %m %M %p %S|%T|%u %w|%x %X %y %Y %%|%f') }}", want: "Thu Thursday Sep September Thu Sep  5 13:04:05 2024|09/05/24| 5|2024-09-05|13 01 249 09 04 PM 05|13:04:05|4 4|09/05/24 13:04:05 24 2024 %|000000"},
	{name: "repr of str", src: "{{ [\"it's\", 'say \"hi\"', 'both \\' \"', '\\x7f\\x80\\u00ad\\u2028\\U0001F600\\u3000'] }}", want: `["it's", 'say "hi"', 'both \' "', '\x7f\x80\xad\u2028😀\u3000']`},
	{name: "tojson floats and nesting", src: "{{ [1.5e300, 0.1, -0.0, 1e22, {'a': (1, [2])}]|tojson }}", want: `[1.5e+300, 0.1, -0.0, 1e+22, {"a": [1, [2]]}]`},
	{name: "tojson indent nested empty", src: "{{ {'a': {}, 'b': [[]], 'c': {'d': [1, {'e': none}]}}|tojson(indent=1) }}", want: "{\n \"a\": {},\n \"b\": [\n  []\n ],\n \"c\": {\n  \"d\": [\n   1,\n   {\n    \"e\": null\n   }\n  ]\n }\n}"},
	{name: "splits", src: "{{ ' a  b '.split(' ') }} {{ 'a\\tb\\nc'.split() }} {{ '  a b c  '.rsplit(None, 1) }} {{ 'a,b,c'.split(',', 0) }} {{ '\\r\\na\\x0bb\\x1cc\\u2028d'.splitlines() }}", want: "['', 'a', '', 'b', ''] ['a', 'b', 'c'] ['  a b', 'c'] ['a,b,c'] ['', 'a', 'b', 'c', 'd']"},
	{name: "find with bounds", src: "{{ 'abcabc'.find('b', 2) }} {{ 'abcabc'.find('b', 2, 4) }} {{ 'abcabc'.rfind('b', 0, 3) }} {{ 'abcabc'.count('') }} {{ 'abc'.find('', 10) }} {{ 'héllo'.find('l', -2) }}", want: "4 -1 1 7 -1 3"},
	{name: "center ljust zfill", src: "[{{ 'ab'.center(5) }}][{{ 'ab'.center(5, '*') }}][{{ 'abc'.center(6) }}][{{ '-5'.zfill(4) }}][{{ 'é'.ljust(3, 'é') }}]", want: "[  ab ][**ab*][ abc  ][-005][ééé]"},
	{name: "loop changed cycle", src: "{% for x in [1, 1, 2, 2, 1] %}{% if loop.changed(x) %}|{% endif %}{{ loop.cycle('a', 'b', 'c') }}{% endfor %}", want: "|ab|ca|b"},
	{name: "dict iteration order", src: "{% set d = {'b': 1, 'a': 2} %}{% for k, v in d|dictsort %}{{ k }}{% endfor %}{% for k in d %}{{ k }}{% endfor %}{{ d|list }}{{ d.keys()|list }}", want: "abba['b', 'a']['b', 'a']"},
	{name: "comparisons of sequences", src: "{{ (1, 2) < (1, 3) }} {{ [1, 2] < [1, 2, 0] }} {{ 'B' < 'a' }} {{ 'é' > 'z' }} {{ [] == () }}", want: "True True True True False"},
	{name: "in on dicts and strings", src: "{{ 1 in {1: 'a'} }} {{ 1.0 in {1: 'a'} }} {{ true in {1: 'a'} }} {{ '' in 'abc' }} {{ 'ab' in ['ab'] }}", want: "True True True True True"},
	{name: "join of mixed and markup", src: "{{ [1, none, 'x']|join(', ') }}|{{ ['<a>'|e, '<b>']|join }}", want: "1, None, x|&lt;a&gt;<b>"},
	{name: "attribute path filters", src: "{{ ms|map(attribute='a.b')|list }} {{ ms|selectattr('a.b', 'gt', 1)|list|length }} {{ ms|sum(attribute='a.b') }} {{ ms|sort(attribute='a.b', reverse=true)|map(attribute='a.b')|join }}", vars: `{"ms": [{"a": {"b": 1}}, {"a": {"b": 3}}, {"a": {"b": 2}}]}`, want: "[1, 3, 2] 2 6 321"},
	{name: "default chains", src: "{{ nope|default(none)|default('z') }}|{{ d.missing|default(d.other|default('x')) }}|{{ ''|d('e', true)|upper }}", vars: `{"d": {}}`, want: "None|x|E"},
	{name: "namespace repr and attrs", src: "{% set ns = namespace(a=[1], b='x') %}{% set ns.a = ns.a + [2] %}{{ ns.a }}{{ ns.b|upper }}{{ ns }}", want: "[1, 2]X<Namespace {'a': [1, 2], 'b': 'x'}>"},
	{name: "tuple target nesting in filter", src: "{% for a, b in [(1, 2), (3, 4)] if a > 1 %}{{ a }}{{ b }}{{ loop.length }}{% endfor %}", want: "341"},
	{name: "namespace holding itself", src: "{% set ns = namespace(a=1) %}{% set ns.me = ns %}{% set ns.l = [ns] %}{{ ns }}", want: "<Namespace {'a': 1, 'me': <Namespace {...}>, 'l': [<Namespace {...}>]}>"},
	{name: "conditional without else prints empty", src: "[{{ 'x' if false }}][{{ ('x' if false) is defined }}]", want: "[][False]"},
}

func TestFormatting(t *testing.T) { runCases(t, formatCases) }
