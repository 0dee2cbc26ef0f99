package jinja

import (
	"errors"
	"strings"
	"testing"
)

// Runtime errors that Jinja raises too: the message names what failed,
// the error names the template and line.
var runtimeErrorCases = []renderCase{
	{name: "attribute of undefined", src: "\n{{ x.y }}", err: "chat template test: line 2: 'x' is undefined"},
	{name: "attribute of missing key", src: "{{ d.a.b }}", vars: `{"d": {}}`, err: "line 1: 'dict object' has no attribute 'a'"},
	{name: "missing list element", src: "{{ l[3]['role'] }}", vars: `{"l": []}`, err: "list object has no element 3"},
	{name: "undefined arithmetic", src: "{{ nope + 1 }}", err: "'nope' is undefined"},
	{name: "str plus int", src: "{{ 'a' + 1 }}", err: `can only concatenate str (not "int") to str`},
	{name: "int plus str", src: "{{ 1 + 'a' }}", err: "unsupported operand type(s) for +: 'int' and 'str'"},
	{name: "division by zero", src: "{{ 1 / 0 }}", err: "division by zero"},
	{name: "order of mixed types", src: "{{ 1 < 'a' }}", err: "'<' not supported between instances of 'int' and 'str'"},
	{name: "not iterable", src: "{% for x in 5 %}{% endfor %}", err: "'int' object is not iterable"},
	{name: "none not iterable", src: "{% for x in none %}{% endfor %}", err: "'NoneType' object is not iterable"},
	{name: "length of int", src: "{{ 5|length }}", err: "object of type 'int' has no len()"},
	{name: "length of generator", src: "{{ [1]|select|length }}", err: "object of type 'generator' has no len()"},
	{name: "unpack mismatch", src: "{% for a, b in [[1]] %}{% endfor %}", err: "not enough values to unpack (expected 2, got 1)"},
	{name: "call undefined", src: "{{ nope() }}", err: "'nope' is undefined"},
	{name: "range too big", src: "{{ range(1000000)|length }}", err: "Range too big"},
	{name: "raise in loop", src: "{% for m in [1, 2] %}{% if m == 2 %}{{ raise_exception('only one!') }}{% endif %}{% endfor %}", err: "only one!"},
	{name: "items of list", src: "{{ [1]|items|list }}", err: "Can only get item pairs from a mapping."},
	{name: "namespace assignment to non-namespace", src: "{% set d = {} %}{% set d.x = 1 %}", err: "cannot assign attribute on non-namespace object"},
}

func TestRuntimeErrors(t *testing.T) { runCases(t, runtimeErrorCases) }

// Constructs outside the subset fail at Parse with one sentence naming the
// template, the line and the construct. (Jinja accepts most of them, so
// these are not checked against it.)
func TestRefused(t *testing.T) {
	for _, c := range []struct{ src, err string }{
		{"a\n{% extends 'base.html' %}", "chat template test: line 2: the {% extends %} statement is not supported"},
		{"{% include 'x' %}", "line 1: the {% include %} statement is not supported"},
		{"{% import 'x' as y %}", "the {% import %} statement is not supported"},
		{"{% block b %}{% endblock %}", "the {% block %} statement is not supported"},
		{"{% autoescape true %}{% endautoescape %}", "the {% autoescape %} statement is not supported"},
		{"{% do x.append(1) %}", "the {% do %} statement is not supported"},
		{"{% trans %}x{% endtrans %}", "the {% trans %} statement is not supported"},
		{"\n\n{{ x|wordwrap(3) }}", `chat template test: line 3: the filter "wordwrap" is not supported`},
		{"{{ x|groupby('a') }}", `the filter "groupby" is not supported`},
		{"{{ x|nosuchfilter }}", `the filter "nosuchfilter" is not supported`},
		{"{% if x is nosuchtest %}{% endif %}", `the test "nosuchtest" is not supported`},
		{"{% for x in y recursive %}{% endfor %}", "the recursive for loop is not supported"},
		{"{{ f(*args) }}", "the * argument unpacking of calls is not supported"},
		{"{% break %}", "{% break %} is outside a for loop"},
		{"{% if x %}", "the template ends before {% endif %}"},
		{"{% endif %}", "{% endif %} has no matching opening statement"},
		{"{{ x", "the template ends inside a tag"},
		{"{# x", "the comment is not closed with #}"},
		{"{{ 1 + }}", "line 1: unexpected }}"},
		{"{{ x ! y }}", "the character '!' is not valid in an expression"},
		{"{{ (1 }}", `the bracket "}" closes ")"`},
		{"{{ 'abc }}", "the string is not closed"},
		{"{{ '\\N{DASH}' }}", `the \N{...} escape is not supported`},
		{"{{ 99999999999999999999 }}", "does not fit in 64 bits"},
		{"{% set 1 = 2 %}", "cannot assign to an integer"},
		{"{{ " + strings.Repeat("not ", 400) + "1 }}", "the template nests more than 300 levels deep"},
		{"{{ " + strings.Repeat("(", 150) + "1" + strings.Repeat(")", 150) + " }}", "brackets nest more than 100 deep"},
	} {
		_, err := Parse("test", c.src)
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("Parse(%q): error %v, want one with %q", c.src, err, c.err)
		}
		var e *Error
		if err != nil && !errors.As(err, &e) {
			t.Errorf("Parse(%q): error %T, want *Error", c.src, err)
		}
	}
}

// Render-time refusals of what only a render can see.
func TestRefusedAtRender(t *testing.T) {
	for _, c := range []struct{ src, err string }{
		{"{{ 'a'.encode() }}", "the method str.encode is not supported"},
		{"{{ lipsum() }}", "the global function lipsum() is not supported"},
		{"{{ strftime_now('%U') }}", "the directive %U is not supported"},
		{"{{ 2 ** 64 }}", "does not fit in 64 bits"},
		{"{{ [1]|map('wordwrap')|list }}", `the filter "wordwrap" is not supported`},
	} {
		_, err := render(t, c.src, "")
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%q: error %v, want one with %q", c.src, err, c.err)
		}
	}
}

// raise_exception's error carries the template's message and says so.
func TestRaiseException(t *testing.T) {
	_, err := render(t, "x\n{{ raise_exception('No tools allowed!') }}", "")
	var e *Error
	if !errors.As(err, &e) || !e.Raised || e.Msg != "No tools allowed!" || e.Line != 2 {
		t.Fatalf("error %#v, want Raised with the message at line 2", err)
	}
	if got, want := err.Error(), "chat template test: line 2: No tools allowed!"; got != want {
		t.Errorf("error %q, want %q", got, want)
	}
}

// Runaway templates stop at the bounds of Options.
func TestLimits(t *testing.T) {
	tmpl, err := Parse("test", "{% set ns = namespace(s='ab') %}{% for i in range(100) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tmpl.RenderOptions(nil, Options{MaxOutput: 1 << 20}); err == nil || !strings.Contains(err.Error(), "would exceed 1048576 bytes") {
		t.Errorf("doubling string: error %v", err)
	}
	tmpl, err = Parse("test", "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tmpl.RenderOptions(nil, Options{MaxSteps: 1000}); err == nil || !strings.Contains(err.Error(), "more than 1000 loop iterations") {
		t.Errorf("nested loops: error %v", err)
	}
	for _, src := range []string{
		"{{ ['x' * 60000] * 60000 }}",
		"{{ (['x' * 60000] * 60000)|join }}",
		"{{ (['x' * 60000] * 60000)|string|length }}",
		"{{ '%s' % [['x' * 60000] * 60000] }}",
		"{{ '{}'.format(['x' * 60000] * 60000) }}",
	} {
		tmpl, err = Parse("test", src)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tmpl.RenderOptions(nil, Options{MaxOutput: 1 << 20}); err == nil || !strings.Contains(err.Error(), "would exceed 1048576 bytes") {
			t.Errorf("%s: error %v", src, err)
		}
	}
	tmpl, err = Parse("test", "{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tmpl.Render(nil); err == nil || !strings.Contains(err.Error(), "macro calls nest more than 100 deep") {
		t.Errorf("infinite recursion: error %v", err)
	}
}
