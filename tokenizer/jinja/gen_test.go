package jinja

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// templateGen writes random templates from the supported subset, mixing
// whitespace control, text with spaces and newlines, blocks and
// expressions, for differential tests against jinja2.
type templateGen struct {
	r      *rand.Rand
	inLoop bool // break and continue are allowed
}

// genVars are the variables the random templates use.
const genVars = `{"s": "  hi there \n", "n": 3, "f": 2.5, "l": [1, 2, "x"], "d": {"b": 1, "a": [2, "y"]}, "e": "", "z": null, "t": true, "ms": [{"role": "system", "content": " sys "}, {"role": "user", "content": "hi\n"}, {"role": "assistant", "content": "<think>a</think>"}]}`

func (g *templateGen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

func (g *templateGen) text() string {
	if g.r.IntN(40) == 0 {
		return g.pick("{", "}", "#", "%")
	}
	return g.pick("a", " ", "  ", "\n", "\t", "x y", "\n  ", "\n\n", " \n ", "b\n", "\u3000", "\r\n", " \t\n")
}

func (g *templateGen) open() string  { return g.pick("", "", "-", "+") }
func (g *templateGen) close() string { return g.pick("", "", "-", "+") }
func (g *templateGen) vsign() string { return g.pick("", "", "-") }
func (g *templateGen) ws() string    { return g.pick(" ", " ", "  ", "\n", "") }

func (g *templateGen) tag(body string) string {
	return "{%" + g.open() + g.ws() + body + g.ws() + g.close() + "%}"
}

func (g *templateGen) atom() string {
	if g.r.IntN(6) == 0 {
		return g.pick("u", "loop", "ns.v", "d.nope", "z")
	}
	return g.pick("1", "0", "-2", "2.5", "0.1", "'a'", "' b '", `"q\n"`, "''", "none", "true", "false",
		"s", "n", "f", "l", "d", "e", "z", "t", "u", "ms", "[1, 'a']", "{'k': 1}", "(1, 2)", "d.a", "d['b']",
		"l[0]", "l[-1]", "l[1:]", "s[::-1]", "ms[0].role", "ms[-1]['content']", "v", "x", "m.content", "range(2)",
		"'%s-%d' % ('a', 2)", "'{}:{}'.format(n, s)", "d.get('b')", "ms|length", "(ms|last).content", "loop.index0 if loop is defined else 9")
}

func (g *templateGen) expr(depth int) string {
	if depth <= 0 || g.r.IntN(3) == 0 {
		return g.atom()
	}
	a, b := g.expr(depth-1), g.expr(depth-1)
	switch g.r.IntN(14) {
	case 0:
		return a + " " + g.pick("+", "-", "*", "/", "//", "%", "~", "**") + " " + b
	case 1:
		return a + " " + g.pick("==", "!=", "<", ">", "<=", ">=", "in", "not in") + " " + b
	case 2:
		return a + " " + g.pick("and", "or") + " " + b
	case 3:
		return "not " + a
	case 4:
		return a + " if " + b + " else " + g.expr(depth-1)
	case 5:
		return "(" + a + ")|" + g.pick("trim", "length", "upper", "lower", "title", "capitalize", "default('z')", "default('z', true)",
			"join(',')", "tojson", "first", "last", "list", "string", "int", "float", "round", "abs", "reverse|list", "sort",
			"unique|list", "items|list", "select('odd')|list", "map('string')|join", "count", "indent(2)", "replace('a', 'b')", "e", "safe", "tojson(indent=2)", "batch(2)|list", "sum", "min", "max", "dictsort")
	case 6:
		return "(" + a + ") is " + g.pick("defined", "not defined", "none", "string", "number", "integer", "float", "mapping",
			"iterable", "sequence", "boolean", "true", "false", "odd", "even", "callable", "divisibleby 2", "eq 1", "in [1, 'a']", "lower", "upper")
	case 7:
		return "(" + a + ")" + g.pick(".strip()", ".split()", ".upper()", ".startswith('a')", ".endswith(' ')", ".replace(' ', '_')",
			".items()", ".keys()", ".get('a')", ".count('a')", ".find('i')", ".splitlines()", ".lstrip()", ".title()")
	case 8:
		return "[" + a + ", " + b + "]"
	case 9:
		return "{'x': " + a + ", " + b + ": 1}"
	case 10:
		return "(" + a + ")[" + b + "]"
	case 11:
		return "-" + a
	case 12:
		return "namespace(v=" + a + ").v"
	}
	return "(" + a + ", " + b + ")"
}

func (g *templateGen) body(depth int) string {
	var b strings.Builder
	for range g.r.IntN(5) {
		b.WriteString(g.node(depth))
	}
	return b.String()
}

func (g *templateGen) node(depth int) string {
	k := g.r.IntN(17)
	if depth <= 0 && k >= 6 && k < 12 || depth <= 0 && k >= 13 {
		k = g.r.IntN(6)
	}
	switch k {
	case 0, 1:
		return g.text()
	case 2, 3:
		return "{{" + g.vsign() + g.ws() + g.expr(2) + g.ws() + g.vsign() + "}}"
	case 4:
		return "{#" + g.open() + " c " + g.close() + "#}"
	case 5:
		return g.tag(fmt.Sprintf("set %s = %s", g.pick("v", "s", "n", "ns.v"), g.expr(2)))
	case 6, 7:
		out := g.tag("if ("+g.expr(2)+")") + g.body(depth-1)
		if g.r.IntN(2) == 0 {
			out += g.tag("elif ("+g.expr(1)+")") + g.body(depth-1)
		}
		if g.r.IntN(2) == 0 {
			out += g.tag("else") + g.body(depth-1)
		}
		return out + g.tag("endif")
	case 8, 9:
		head := "for " + g.pick("x", "m", "k, v") + " in " + g.pick("l", "ms", "d.items()", "s", "range(3)", "[]", "d", "("+g.expr(1)+")")
		if g.r.IntN(3) == 0 {
			head += " if " + g.expr(1)
		}
		was := g.inLoop
		g.inLoop = true
		out := g.tag(head) + g.body(depth-1) + g.pick("", "{{ loop.index }}", "{{ loop.last }}", "{% if loop.first %}F{% endif %}", "{{ x }}", "{{ loop.previtem }}", "{{ loop.cycle(1, 2) }}")
		g.inLoop = was
		if g.r.IntN(3) == 0 {
			out += g.tag("else") + g.body(depth-1)
		}
		return out + g.tag("endfor")
	case 10:
		return g.tag("set ns = namespace(v=0)") + g.text()
	case 12:
		if g.inLoop {
			return g.tag(g.pick("break", "continue", "set v = 1"))
		}
		return g.tag("set v = 1")
	case 13:
		was := g.inLoop
		g.inLoop = false
		out := g.tag("macro mac(a, b=2)") + g.body(depth-1) + "{{ a }}{{ b }}" + g.tag("endmacro") + "{{ mac(" + g.expr(1) + ") }}"
		g.inLoop = was
		return out
	case 14:
		return g.tag("set v"+g.pick("", " | trim", " | upper")) + g.body(depth-1) + g.tag("endset") + "[{{ v }}]"
	case 15:
		return g.tag("with w = "+g.expr(1)) + g.body(depth-1) + "{{ w }}" + g.tag("endwith")
	case 16:
		return g.tag("filter "+g.pick("upper", "trim", "replace('a', 'b')")) + g.body(depth-1) + g.tag("endfilter")
	}
	return "\n" + g.pick("", "  ", "\t") + g.tag("if t") + g.text() + "\n" + g.pick("", "  ") + g.tag("endif") + "\n"
}

// template returns a random template.
func (g *templateGen) template() string {
	var b strings.Builder
	for range 1 + g.r.IntN(5) {
		b.WriteString(g.node(2))
	}
	return b.String()
}
