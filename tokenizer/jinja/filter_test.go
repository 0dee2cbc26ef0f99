package jinja

import "testing"

// Filters, with transformers' tojson.
var filterCases = []renderCase{
	{name: "trim", src: "[{{ '  a b \n'|trim }}][{{ 'xxaxx'|trim('x') }}][{{ nope|trim }}][{{ 5|trim }}]", want: "[a b][a][][5]"},
	{name: "length count", src: "{{ 'héllo'|length }} {{ [1, 2]|length }} {{ {'a': 1}|count }} {{ nope|length }} {{ (1, 2, 3)|length }}", want: "5 2 1 0 3"},
	{name: "string", src: "{{ 1|string }} {{ none|string }} {{ [1]|string }} {{ (1|string) is string }}", want: "1 None [1] True"},
	{name: "upper lower", src: "{{ 'aBc'|upper }} {{ 'AbC'|lower }} {{ 'straße'|upper }} [{{ nope|upper }}]", want: "ABC abc STRASSE []"},
	{name: "title capitalize", src: "{{ 'hello wORLD-foo (bar) x'|title }}|{{ \"it's\"|title }}|{{ 'hELLO World'|capitalize }}", want: "Hello World-Foo (Bar) X|It's|Hello world"},
	{name: "default", src: "{{ nope|default('d') }} {{ ''|default('d') }} {{ ''|default('d', true) }} {{ 0|d('z', boolean=true) }} [{{ nope|default }}] {{ none|default('x') }}", want: "d  d z [] None"},
	{name: "first last", src: "{{ [1, 2, 3]|first }} {{ [1, 2, 3]|last }} {{ 'abc'|first }} {{ 'abc'|last }} [{{ []|first }}] {{ {'k': 1, 'j': 2}|first }}", want: "1 3 a c [] k"},
	{name: "join", src: "{{ [1, 'a', none]|join }} {{ ['a', 'b']|join(', ') }} {{ users|join('/', attribute='name') }} {{ 'abc'|join('-') }}", vars: `{"users": [{"name": "x"}, {"name": "y"}]}`, want: "1aNone a, b x/y a-b-c"},
	{name: "list", src: "{{ 'ab'|list }} {{ {'a': 1}|list }} {{ nope|list }} {{ (1, 2)|list }}", want: "['a', 'b'] ['a'] [] [1, 2]"},
	{name: "items", src: "{% for k, v in d|items %}{{ k }}={{ v }};{% endfor %}{{ nope|items|list }}", vars: `{"d": {"b": 1, "a": 2}}`, want: "b=1;a=2;[]"},
	{name: "replace", src: "{{ 'aaa'|replace('a', 'b') }} {{ 'aaa'|replace('a', 'b', 2) }} {{ 'abc'|replace('', '-') }} {{ 1.5|replace('.', ',') }}", want: "bbb bba -a-b-c- 1,5"},
	{name: "int", src: "{{ '42'|int }} {{ '42.7'|int }} {{ 'x'|int }} {{ 'x'|int(7) }} {{ 3.9|int }} {{ -3.9|int }} {{ '0x1A'|int(0, 16) }} {{ ' 12 '|int }} {{ none|int }} {{ true|int }} {{ '1_000'|int }}", want: "42 42 0 7 3 -3 26 12 0 1 1000"},
	{name: "float", src: "{{ '1.5'|float }} {{ 'x'|float }} {{ 2|float }} {{ '1e3'|float }} {{ 'x'|float(1.5) }} {{ ' -2.5 '|float }} {{ 'inf'|float }}", want: "1.5 0.0 2.0 1000.0 1.5 -2.5 inf"},
	{name: "abs", src: "{{ -3|abs }} {{ (-2.5)|abs }} {{ true|abs }}", want: "3 2.5 1"},
	{name: "round", src: "{{ 2.5|round }} {{ 3.5|round }} {{ 2.675|round(2) }} {{ 42.55|round(1, 'floor') }} {{ 42.51|round(0, 'ceil') }} {{ 3|round }} {{ 1234|round(-2) }} {{ 1250|round(-2) }} {{ 0.125|round(2) }}", want: "2.0 4.0 2.67 42.5 43.0 3 1200 1200 0.12"},
	{name: "map attribute", src: "{{ users|map(attribute='name')|list }} {{ users|map(attribute='age', default=0)|list }} {{ users|map(attribute='pet.0')|list }}", vars: `{"users": [{"name": "a", "pet": ["cat"]}, {"name": "b", "age": 3, "pet": ["dog"]}]}`, want: "['a', 'b'] [0, 3] ['cat', 'dog']"},
	{name: "map filter", src: "{{ ['a', 'B']|map('upper')|join }} {{ [' a ', 'b ']|map('trim')|list }} {{ ['1', '2']|map('int')|sum }}", want: "AB ['a', 'b'] 3"},
	{name: "select reject", src: "{{ [1, 2, 3, 4]|select('odd')|list }} {{ [1, 2, 3, 4]|reject('odd')|list }} {{ [0, 1, '', 'a']|select|list }} {{ [1, 5, 9]|select('gt', 4)|list }} {{ [1, 2]|select('in', [2, 3])|list }}", want: "[1, 3] [2, 4] [1, 'a'] [5, 9] [2]"},
	{name: "selectattr rejectattr", src: "{{ ms|selectattr('role', 'equalto', 'user')|map(attribute='c')|join }} {{ ms|rejectattr('role', 'eq', 'user')|map(attribute='c')|join }} {{ ms|selectattr('x')|list|length }} {{ ms|selectattr('x', 'defined')|list|length }} {{ ms|rejectattr('x', 'none')|list|length }}", vars: `{"ms": [{"role": "user", "c": "a"}, {"role": "assistant", "c": "b", "x": 1}, {"role": "user", "c": "c", "x": null}]}`, want: "ac b 1 2 2"},
	{name: "generator is truthy and one-shot", src: "{% set g = [1, 2]|select('odd') %}{{ 'T' if [2]|select('odd') else 'F' }}{{ g|list }}{{ g|list }}", want: "T[1][]"},
	{name: "unique", src: "{{ ['a', 'A', 'b', 'a']|unique|list }} {{ ['a', 'A']|unique(case_sensitive=true)|list }} {{ [{'k': 1}, {'k': 1}, {'k': 2}]|unique(attribute='k')|list }}", want: "['a', 'b'] ['a', 'A'] [{'k': 1}, {'k': 2}]"},
	{name: "sort", src: "{{ [3, 1, 2]|sort }} {{ [3, 1, 2]|sort(reverse=true) }} {{ ['b', 'A', 'c']|sort }} {{ ['b', 'A', 'c']|sort(case_sensitive=true) }} {{ us|sort(attribute='n')|map(attribute='n')|list }} {{ us|sort(attribute='a,n')|map(attribute='n')|list }}", vars: `{"us": [{"n": "z", "a": 2}, {"n": "y", "a": 1}, {"n": "x", "a": 2}]}`, want: "[1, 2, 3] [3, 2, 1] ['A', 'b', 'c'] ['A', 'b', 'c'] ['x', 'y', 'z'] ['y', 'x', 'z']"},
	{name: "dictsort", src: "{{ {'b': 1, 'A': 2, 'c': 0}|dictsort }} {{ {'b': 1, 'a': 2}|dictsort(by='value') }} {{ {'b': 1, 'a': 2}|dictsort(reverse=true) }}", want: "[('A', 2), ('b', 1), ('c', 0)] [('b', 1), ('a', 2)] [('b', 1), ('a', 2)]"},
	{name: "indent", src: "{{ 'a\nb\n\nc'|indent }}|{{ 'a\nb'|indent(2, true) }}|{{ 'a\n\nb'|indent('> ', blank=true) }}|{{ 'a\n'|indent }}", want: "a\n    b\n\n    c|  a\n  b|a\n> \n> b|a\n"},
	{name: "safe escape", src: "{{ '<a>'|e }} {{ '<a>'|escape|escape }} {{ '<b>'|safe }} {{ ('<' ~ '>')|forceescape }} {{ '&\"\\''|e }}", want: "&lt;a&gt; &lt;a&gt; <b> &lt;&gt; &amp;&#34;&#39;"},
	{name: "markup plus escapes", src: "{{ '<a>'|safe + '<b>' }} {{ '<a>' + '<b>'|safe }} {{ '<a>'|safe ~ '<b>' }}", want: "<a>&lt;b&gt; &lt;a&gt;<b> <a><b>"},
	{name: "batch", src: "{{ [1, 2, 3, 4, 5]|batch(2)|list }} {{ [1, 2, 3]|batch(2, 0)|list }}", want: "[[1, 2], [3, 4], [5]] [[1, 2], [3, 0]]"},
	{name: "reverse", src: "{{ 'abc'|reverse }} {{ [1, 2, 3]|reverse|list }} {{ [1, 2]|select|reverse }}", want: "cba [3, 2, 1] [2, 1]"},
	{name: "sum min max", src: "{{ [1, 2, 3]|sum }} {{ [1, 2]|sum(start=10) }} {{ [{'p': 1.5}, {'p': 2}]|sum(attribute='p') }} {{ [3, 1, 2]|min }} {{ ['b', 'A', 'c']|max }} {{ [{'a': 2}, {'a': 5}]|max(attribute='a') }} [{{ []|min }}]", want: "6 13 3.5 1 c {'a': 5} []"},
	{name: "center wordcount format", src: "[{{ 'ab'|center(6) }}] {{ 'one two, three'|wordcount }} {{ '%s is %d'|format('x', 3) }} {{ '%(a)s'|format(a=1) }}", want: "[  ab  ] 3 x is 3 1"},
	{name: "attr", src: "{{ d|attr('items') is callable }} [{{ d|attr('k') }}] {{ 'a'|attr('upper') is callable }}", vars: `{"d": {"k": 1}}`, want: "True [] True"},
	{name: "filter chain", src: "{{ '  A, b  '|trim|lower|replace(',', '')|title }}", want: "A B"},
	{name: "filter on parenthesised", src: "{{ (1 + 2)|string ~ 'x' }}", want: "3x"},
}

// tojson, as transformers overrides it: json.dumps(x, ensure_ascii=False,
// indent=indent, separators=separators, sort_keys=sort_keys).
var tojsonCases = []renderCase{
	{name: "scalars", src: "{{ 1|tojson }} {{ 1.0|tojson }} {{ 'a'|tojson }} {{ none|tojson }} {{ true|tojson }} {{ 1e-7|tojson }} {{ 1e400|tojson }}", want: `1 1.0 "a" null true 1e-07 Infinity`},
	{name: "containers keep order", src: "{{ d|tojson }}", vars: `{"d": {"z": 1, "a": [1, "x", {"k": null}], "m": {}}}`, want: `{"z": 1, "a": [1, "x", {"k": null}], "m": {}}`},
	{name: "no html escaping, no ascii escaping", src: `{{ '<a href="x">é & 😀\n\t\u0001'|tojson }}`, want: `"<a href=\"x\">é & 😀\n\t\u0001"`},
	{name: "ensure_ascii", src: "{{ 'é😀'|tojson(ensure_ascii=true) }}", want: `"\u00e9\ud83d\ude00"`},
	{name: "indent", src: "{{ d|tojson(indent=2) }}", vars: `{"d": {"a": [1, 2], "b": {}, "c": []}}`, want: "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": {},\n  \"c\": []\n}"},
	{name: "indent string and zero", src: "{{ [1]|tojson(indent='\t') }}|{{ [1, 2]|tojson(indent=0) }}", want: "[\n\t1\n]|[\n1,\n2\n]"},
	{name: "separators", src: "{{ {'a': [1, 2]}|tojson(separators=(',', ':')) }}", want: `{"a":[1,2]}`},
	{name: "sort_keys", src: "{{ {'b': 1, 'a': {'d': 1, 'c': 2}}|tojson(sort_keys=true) }}", want: `{"a": {"c": 2, "d": 1}, "b": 1}`},
	{name: "tuple and non-string keys", src: "{{ (1, 2)|tojson }} {{ {1: 'a', none: 'b', true: 'c'}|tojson }}", want: `[1, 2] {"1": "c", "null": "b"}`},
	{name: "undefined fails", src: "{{ nope|tojson }}", err: "not JSON serializable"},
}

func TestFilters(t *testing.T) { runCases(t, filterCases) }

func TestToJSON(t *testing.T) { runCases(t, tojsonCases) }
