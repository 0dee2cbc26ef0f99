package jinja

import "testing"

// Statements and Jinja's scoping.
var stmtCases = []renderCase{
	{name: "if elif else", src: "{% for x in [1, 2, 3] %}{% if x == 1 %}a{% elif x == 2 %}b{% else %}c{% endif %}{% endfor %}", want: "abc"},
	{name: "if on undefined", src: "{% if nope %}y{% else %}n{% endif %}{% if nope is defined and nope.x %}y{% endif %}", want: "n"},
	{name: "for with else", src: "{% for x in [] %}x{% else %}empty{% endfor %}{% for x in [1] %}{{ x }}{% else %}empty{% endfor %}", want: "empty1"},
	{name: "for over dict and string", src: "{% for k in {'b': 1, 'a': 2} %}{{ k }}{% endfor %}{% for c in 'hé' %}[{{ c }}]{% endfor %}", want: "ba[h][é]"},
	{name: "for unpacking", src: "{% for k, v in d.items() %}{{ k }}={{ v }} {% endfor %}{% for a, b in [[1, 2], (3, 4)] %}{{ a + b }}{% endfor %}", vars: `{"d": {"x": 1, "y": 2}}`, want: "x=1 y=2 37"},
	{name: "for over undefined", src: "{% for x in nope %}x{% endfor %}ok", want: "ok"},
	{name: "loop variables", src: "{% for x in 'abc' %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}{{ loop.revindex0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }} {% endfor %}", want: "1032TrueFalse3 2121FalseFalse3 3210FalseTrue3 "},
	{name: "loop prev next", src: "{% for x in [1, 2, 3] %}[{{ loop.previtem }}|{{ loop.nextitem }}]{% endfor %}", want: "[|2][1|3][2|]"},
	{name: "loop cycle changed depth", src: "{% for x in [1, 1, 2] %}{{ loop.cycle('a', 'b') }}{{ loop.changed(x) }}{{ loop.depth }}{% endfor %}", want: "aTrue1bFalse1aTrue1"},
	{name: "loop filter", src: "{% for m in ms if m.role != 'system' %}{{ loop.index }}{{ m.role }}{{ loop.last }} {% endfor %}", vars: `{"ms": [{"role": "system"}, {"role": "user"}, {"role": "assistant"}]}`, want: "1userFalse 2assistantTrue "},
	{name: "nested loops", src: "{% for a in [1, 2] %}{% for b in [1, 2] %}{{ loop.index }}{% endfor %}{{ loop.index }};{% endfor %}", want: "121;122;"},
	{name: "break continue", src: "{% for x in range(10) %}{% if x == 5 %}{% break %}{% endif %}{% if x is odd %}{% continue %}{% endif %}{{ x }}{% endfor %}", want: "024"},
	{name: "else after break", src: "{% for x in [1, 2] %}{{ x }}{% if x == 2 %}{% break %}{% endif %}{% else %}e{% endfor %}.", want: "12."},
	{name: "else when no body completed", src: "{% for x in [1] %}{% break %}{% else %}e{% endfor %}{% for x in [1, 2] %}{% continue %}{% else %}f{% endfor %}.", want: "ef."},
	{name: "set", src: "{% set x = 1 %}{% set y = x + 1 %}{{ x }}{{ y }}{% set a, b = 1, 2 %}{{ a }}{{ b }}{% set t = 1, 2 %}{{ t }}", want: "1212(1, 2)"},
	{name: "set shadows variable", src: "{% set messages = messages[1:] %}{{ messages|length }}", vars: `{"messages": [1, 2, 3]}`, want: "2"},
	{name: "set in for does not leak", src: "{% set x = 1 %}{% for i in [1, 2, 3] %}{% set x = x + 1 %}{{ x }}{% endfor %}{{ x }}", want: "2221"},
	{name: "set in for reads outer per iteration", src: "{% set x = 1 %}{% for i in [1, 2] %}{{ x }}{% set x = i * 10 %}{{ x }}|{% endfor %}{{ x }}", want: "110|120|1"},
	{name: "loop variable does not leak", src: "{% for i in [1, 2] %}{% set y = i %}{% endfor %}[{{ i }}{{ y }}]", want: "[]"},
	{name: "set in if leaks", src: "{% if true %}{% set q = 3 %}{% endif %}{{ q }}", want: "3"},
	{name: "namespace", src: "{% set ns = namespace(n=0, found=false) %}{% for x in [1, 2, 3] %}{% set ns.n = ns.n + x %}{% if x == 2 %}{% set ns.found = true %}{% endif %}{% endfor %}{{ ns.n }} {{ ns.found }} {{ ns }}", want: "6 True <Namespace {'n': 6, 'found': True}>"},
	{name: "namespace from dict", src: "{% set ns = namespace({'a': 1}, b=2) %}{{ ns.a }}{{ ns.b }}[{{ ns.c }}]", want: "12[]"},
	{name: "namespace new attribute", src: "{% set ns = namespace() %}{% set ns.x = 'v' %}{{ ns.x }}", want: "v"},
	{name: "block set", src: "{% set x %}a{{ 1 + 1 }}b{% endset %}[{{ x }}]{% set y | upper %}q{% endset %}{{ y }}", want: "[a2b]Q"},
	{name: "with", src: "{% with a = 1, b = 2 %}{{ a + b }}{% endwith %}[{{ a }}]", want: "3[]"},
	{name: "filter block", src: "{% filter upper %}ab{{ 'c' }}{% endfilter %}", want: "ABC"},
	{name: "print", src: "{% print 1 + 1 %}", want: "2"},
	{name: "generation", src: "{% generation %}assistant text{% endgeneration %}!", want: "assistant text!"},
	{name: "macro", src: "{% macro m(a, b=2, c=a) %}[{{ a }}{{ b }}{{ c }}]{% endmacro %}{{ m(1) }}{{ m(1, 3) }}{{ m(1, c=5) }}{{ m() }}", want: "[121][131][125][2]"},
	{name: "macro reads globals at call time", src: "{% macro m() %}{{ y }}{% endmacro %}{% set y = 2 %}{{ m() }}", want: "2"},
	{name: "macro varargs kwargs", src: "{% macro m(a) %}{{ a }}{{ varargs }}{{ kwargs }}{% endmacro %}{{ m(1, 2, 3, k=4) }}", want: "1(2, 3){'k': 4}"},
	{name: "macro recursion", src: "{% macro f(n) %}{% if n > 0 %}{{ n }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(3) }}", want: "321"},
	{name: "call block", src: "{% macro box(t) %}<{{ t }}:{{ caller() }}>{% endmacro %}{% call box('b') %}inner{% endcall %}", want: "<b:inner>"},
	{name: "call block with args", src: "{% macro each(xs) %}{% for x in xs %}{{ caller(x) }}{% endfor %}{% endmacro %}{% call(v) each([1, 2]) %}[{{ v }}]{% endcall %}", want: "[1][2]"},
	{name: "comments", src: "a{# {{ x }} {% if %} #}b", want: "ab"},
	{name: "range", src: "{{ range(3)|list }} {{ range(1, 7, 2)|list }} {{ range(3, 0, -1)|list }} {{ range(2) }}", want: "[0, 1, 2] [1, 3, 5] [3, 2, 1] range(0, 2)"},
	{name: "dict global", src: "{{ dict(a=1, b='x') }} {{ dict({'z': 1}, y=2) }}", want: "{'a': 1, 'b': 'x'} {'z': 1, 'y': 2}"},
	{name: "strftime_now", src: "{{ strftime_now('%d %b %Y') }}|{{ strftime_now('%Y-%m-%d %H:%M:%S %A %B %j %I%p %y') }}", want: "05 Sep 2024|2024-09-05 13:04:05 Thursday September 249 01PM 24"},
	{name: "raise_exception", src: "a{{ raise_exception('bad ' ~ 1) }}", err: "bad 1"},
	{name: "messages loop", src: "{% for m in messages %}<{{ m.role }}>{{ m['content'] }}{% if not loop.last %}\n{% endif %}{% endfor %}", vars: `{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]}`, want: "<user>hi<assistant>yo"},
}

// Python methods on values that the immutable sandbox allows.
var methodCases = []renderCase{
	{name: "strip", src: "[{{ '  a  '.strip() }}][{{ '  a  '.lstrip() }}][{{ '  a  '.rstrip() }}][{{ 'xax'.strip('x') }}]", want: "[a][a  ][  a][a]"},
	{name: "split", src: "{{ 'a b  c'.split() }} {{ 'a,b,,c'.split(',') }} {{ 'a,b,c'.split(',', 1) }} {{ '  a b  '.split(None, 1) }} {{ 'a,b,c'.rsplit(',', 1) }} {{ ''.split() }} {{ ''.split(',') }}", want: "['a', 'b', 'c'] ['a', 'b', '', 'c'] ['a', 'b,c'] ['a', 'b  '] ['a,b', 'c'] [] ['']"},
	{name: "splitlines", src: "{{ 'a\nb\r\nc\n'.splitlines() }} {{ 'a\nb'.splitlines(true) }}", want: "['a', 'b', 'c'] ['a\\n', 'b']"},
	{name: "startswith endswith", src: "{{ 'abc'.startswith('ab') }} {{ 'abc'.endswith('bc') }} {{ 'abc'.startswith(('x', 'a')) }} {{ 'abc'.endswith('x') }}", want: "True True True False"},
	{name: "case", src: "{{ 'aB'.upper() }} {{ 'aB'.lower() }} {{ \"hello wORLD it's\".title() }} {{ 'hELLO'.capitalize() }} {{ 'aB'.swapcase() }}", want: "AB ab Hello World It'S Hello Ab"},
	{name: "replace", src: "{{ 'aaa'.replace('a', 'b') }} {{ 'aaa'.replace('a', 'b', 1) }}", want: "bbb baa"},
	{name: "join", src: "{{ ', '.join(['a', 'b']) }} {{ '-'.join('abc') }}", want: "a, b a-b-c"},
	{name: "find count index", src: "{{ 'hello'.find('l') }} {{ 'hello'.rfind('l') }} {{ 'hello'.find('z') }} {{ 'hello'.count('l') }} {{ 'héllo'.index('l') }} {{ 'hello'.find('l', 3) }}", want: "2 3 -1 2 2 3"},
	{name: "format", src: "{{ '{} and {}'.format(1, 'b') }} {{ '{0}{1}{0}'.format('a', 'b') }} {{ '{x}-{y}'.format(x=1, y=2) }} {{ '{:>5}|{:<4}|{:^5}|{:05.2f}|{:,}'.format('a', 'b', 'c', 3.14159, 1234567) }} {{ '{{}}'.format() }} {{ '{!r}'.format('a') }}", want: "1 and b aba 1-2     a|b   |  c  |03.14|1,234,567 {} 'a'"},
	{name: "percent format", src: "{{ '%s=%d' % ('a', 3) }} {{ '%5.1f|%-4s|%03d' % (3.14159, 'x', 7) }} {{ '%s' % [1] }} {{ '%(k)s' % {'k': 'v'} }} {{ '100%%' % () }}", want: "a=3   3.1|x   |007 [1] v 100%"},
	{name: "misc str", src: "{{ 'ab'.removeprefix('a') }} {{ 'ab'.removesuffix('b') }} {{ 'a=b=c'.partition('=') }} {{ 'a=b=c'.rpartition('=') }} {{ '5'.zfill(3) }} {{ 'a'.ljust(3, '.') }} {{ 'a'.rjust(3) }} {{ '12'.isdigit() }} {{ 'ab'.isalpha() }} {{ ' '.isspace() }}", want: "b a ('a', '=', 'b=c') ('a=b', '=', 'c') 005 a..   a True True True"},
	{name: "dict methods", src: "{{ d.keys() }} {{ d.values() }} {{ d.items() }} {{ d.get('a') }} {{ d.get('z') }} {{ d.get('z', 0) }} {{ d.items()|list }} {{ d.keys()|length }}", vars: `{"d": {"a": 1, "b": 2}}`, want: "dict_keys(['a', 'b']) dict_values([1, 2]) dict_items([('a', 1), ('b', 2)]) 1 None 0 [('a', 1), ('b', 2)] 2"},
	{name: "list methods", src: "{{ [1, 2, 1].count(1) }} {{ ['a', 'b'].index('b') }} {{ (1, 2).index(2) }}", want: "2 1 1"},
	{name: "mutating list method refused", src: "{{ [1].append(2) }}", err: "access to attribute 'append' of 'list' object is unsafe."},
	{name: "mutating dict method refused", src: "{% set d = {} %}{{ d.update({'a': 1}) }}", err: "access to attribute 'update' of 'dict' object is unsafe."},
	{name: "unsafe attribute prints empty", src: "[{{ [1].append }}]", want: "[]"},
}

func TestStatements(t *testing.T) { runCases(t, stmtCases) }

func TestMethods(t *testing.T) { runCases(t, methodCases) }

// Jinja's compile-time scoping (symbols.go): a name first set
// unconditionally in a frame starts that frame unset, hiding the variable
// of the same name from loops and macros that run before the set.
var scopingCases = []renderCase{
	{name: "loop before top-level set", src: "{% for x in [1] %}[{{ n }}]{% endfor %}{% set n = 1 %}[{{ n }}]", vars: `{"n": 3}`, want: "[][1]"},
	{name: "read before set at top level", src: "[{{ n }}]{% set n = 1 %}{% for x in [1] %}[{{ n }}]{% endfor %}", vars: `{"n": 3}`, want: "[3][1]"},
	{name: "set inside if resolves", src: "{% for x in [1] %}[{{ n }}]{% endfor %}{% if false %}{% set n = 1 %}{% endif %}[{{ n }}]", vars: `{"n": 3}`, want: "[3][3]"},
	{name: "set in if then read", src: "{% if t %}{% set n = 5 %}{% endif %}[{{ n }}]{% if not t %}{% set m = 5 %}{% endif %}[{{ m }}]", vars: `{"n": 3, "m": 4, "t": true}`, want: "[5][4]"},
	{name: "inner loop before outer loop set", src: "{% for i in [1] %}{% for j in [1] %}[{{ n }}]{% endfor %}{% set n = 9 %}{% endfor %}", vars: `{"n": 3}`, want: "[]"},
	{name: "inner loop after outer loop set", src: "{% for i in [1] %}{% set n = 9 %}{% for j in [1] %}[{{ n }}]{% endfor %}{% endfor %}", vars: `{"n": 3}`, want: "[9]"},
	{name: "macro before top-level set", src: "{% macro m() %}[{{ n }}]{% endmacro %}{{ m() }}{% set n = 1 %}{{ m() }}", vars: `{"n": 3}`, want: "[][1]"},
	{name: "block set body is its own frame", src: "{% set x %}{% set y = 1 %}{{ y }}{% endset %}[{{ y }}{{ x }}]", want: "[1]"},
	{name: "filter block body is its own frame", src: "{% filter upper %}{% set y = 'a' %}{{ y }}{% endfilter %}[{{ y }}]", want: "A[]"},
	{name: "with body is its own frame", src: "{% with %}{% set y = 1 %}{% endwith %}[{{ y }}]", want: "[]"},
	{name: "namespace in loop before set", src: "{% set ns = namespace(v=1) %}{% for x in [1] %}{% set ns.v = ns.v + 1 %}{% endfor %}{{ ns.v }}", want: "2"},
	{name: "undefined and tuple dict keys", src: "{{ {nope: 1, (1, 2): 2, nope2: 3} }}", want: "{Undefined: 3, (1, 2): 2}"},
}

func TestScoping(t *testing.T) { runCases(t, scopingCases) }
