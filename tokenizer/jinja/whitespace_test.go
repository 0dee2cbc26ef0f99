package jinja

import "testing"

// Whitespace control as transformers configures Jinja: trim_blocks drops
// the newline after a block or comment tag, lstrip_blocks drops spaces
// and tabs before one on its line, "-" strips all whitespace on its side,
// "+" disables both; a single trailing newline of the template is dropped.
var whitespaceCases = []renderCase{
	{name: "text", src: "hello", want: "hello"},
	{name: "trailing newline dropped", src: "a\n", want: "a"},
	{name: "only one trailing newline dropped", src: "a\n\n", want: "a\n"},
	{name: "crlf normalised", src: "a\r\nb\rc", want: "a\nb\nc"},
	{name: "trim_blocks", src: "{% if true %}\nyes\n{% endif %}\nend", want: "yes\nend"},
	{name: "trim_blocks one newline only", src: "{% if true %}\n\nyes{% endif %}", want: "\nyes"},
	{name: "no trim after variable", src: "{{ 1 }}\nx", want: "1\nx"},
	{name: "lstrip_blocks", src: "a\n    {% if true %}b{% endif %}", want: "a\nb"},
	{name: "lstrip_blocks tabs", src: "a\n\t \t{% if true %}b{% endif %}", want: "a\nb"},
	{name: "lstrip at template start", src: "   {% if true %}b{% endif %}", want: "b"},
	{name: "no lstrip after text on the line", src: "a  {% if true %}b{% endif %}", want: "a  b"},
	{name: "no lstrip before variable", src: "a\n  {{ 1 }}", want: "a\n  1"},
	{name: "lstrip before comment", src: "a\n  {# c #}\nb", want: "a\nb"},
	{name: "minus strips newlines", src: "a  \n\n  {%- if true %}b{% endif %}", want: "ab"},
	{name: "minus after", src: "{% if true -%}  \n\n  b{% endif %}", want: "b"},
	{name: "variable minus", src: "a \n {{- 1 -}} \n b", want: "a1b"},
	{name: "comment minus", src: "a \n {#- c -#} \n b", want: "ab"},
	{name: "plus keeps lstrip", src: "a\n  {%+ if true %}b{% endif %}", want: "a\n  b"},
	{name: "plus keeps newline", src: "{% if true +%}\nb{% endif %}", want: "\nb"},
	{name: "lstrip after trimmed block", src: "{% for i in [1,2] %}\n  {% if true %}\n{{ i }}\n  {% endif %}\n{% endfor %}", want: "1\n2\n"},
	{name: "lstrip after variable end", src: "{{ 1 }}  {% if true %}x{% endif %}", want: "1  x"},
	{name: "lstrip after minus variable", src: "{{ 1 -}}\n  {% if true %}x{% endif %}", want: "1x"},
	{name: "comment trim_blocks", src: "{# c #}\nx", want: "x"},
	{name: "multiline comment", src: "a{# one\ntwo #}b", want: "ab"},
	{name: "raw block", src: "{% raw %}{{ x }}{% if %}{% endraw %}", want: "{{ x }}{% if %}"},
	{name: "raw block whitespace", src: "  {% raw -%}  a  {%- endraw %}\nb", want: "ab"},
	{name: "unicode space stripped", src: "a\u3000{%- if true %}b{% endif %}", want: "ab"},
	{name: "python whitespace lstripped", src: "a\n\x1c\u0085\u00a0{% if true %}b{% endif %}", want: "a\nb"},
	{name: "python whitespace after minus", src: "{% if true -%}\x1f\u2028 b{% endif %}", want: "b"},
	{name: "braces in text", src: "a { b } c }} %} #}", want: "a { b } c }} %} #}"},
	{name: "dict literal closing braces", src: "{{ {'a': {'b': 1}}}}", want: "{'a': {'b': 1}}"},
	{name: "string with tag end", src: "{{ '}}' }}{{ \"%}\" }}", want: "}}%}"},
	{name: "block end in string", src: "{% set x = '%}' %}{{ x }}", want: "%}"},
	{name: "endraw with trim", src: "{% raw %}a{% endraw %}\nb", want: "ab"},
	{name: "qwen style lines", src: "{%- if true %}\n    {{- 'x' }}\n{%- endif %}\n{{- 'y' }}\n", want: "xy"},
}

func TestWhitespace(t *testing.T) { runCases(t, whitespaceCases) }
