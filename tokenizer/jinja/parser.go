package jinja

import (
	"fmt"
	"strconv"
)

// maxDepth bounds the nesting of brackets, and maxNest that of blocks and
// expressions, where Python's recursion limit stops Jinja's own parser
// (at about 75 brackets).
const (
	maxDepth = 100
	maxNest  = 300
)

// parser builds the syntax tree from the tokens, following Jinja's
// grammar (jinja2/parser.py) for the supported statements.
type parser struct {
	toks  []token
	i     int
	depth int // nesting of blocks and expressions
	loops int // enclosing for loops, for break and continue
}

// syntaxError is a parse failure at a line.
type syntaxError struct {
	line int
	msg  string
}

func (e *syntaxError) Error() string { return e.msg }

func (p *parser) cur() token  { return p.toks[p.i] }
func (p *parser) peek() token { return p.toks[min(p.i+1, len(p.toks)-1)] }
func (p *parser) next() token {
	t := p.toks[p.i]
	if p.i < len(p.toks)-1 {
		p.i++
	}
	return t
}

func (p *parser) fail(line int, format string, args ...any) error {
	return &syntaxError{line, fmt.Sprintf(format, args...)}
}

// isOp reports whether the current token is the operator op.
func (p *parser) isOp(op string) bool {
	t := p.cur()
	return t.kind == tOp && t.val == op
}

// isName reports whether the current token is the name word.
func (p *parser) isName(word string) bool {
	t := p.cur()
	return t.kind == tName && t.val == word
}

func (p *parser) expectOp(op string) error {
	if !p.isOp(op) {
		return p.fail(p.cur().line, "expected %q, found %s", op, describe(p.cur()))
	}
	p.next()
	return nil
}

func (p *parser) expect(k tokKind) (token, error) {
	t := p.cur()
	if t.kind != k {
		return t, p.fail(t.line, "expected %s, found %s", kindName[k], describe(t))
	}
	return p.next(), nil
}

var kindName = map[tokKind]string{
	tEOF: "the end of the template", tData: "template data",
	tVarBegin: "{{", tVarEnd: "}}", tBlockBegin: "{%", tBlockEnd: "%}",
	tName: "a name", tString: "a string", tInt: "an integer", tFloat: "a float",
}

// describe names a token for error messages.
func describe(t token) string {
	switch t.kind {
	case tName:
		return fmt.Sprintf("the name %q", t.val)
	case tOp:
		return fmt.Sprintf("%q", t.val)
	case tString:
		return "a string"
	}
	return kindName[t.kind]
}

func (p *parser) enter(line int) error {
	p.depth++
	if p.depth > maxNest {
		return p.fail(line, "the template nests more than %d levels deep", maxNest)
	}
	return nil
}

func (p *parser) leave() { p.depth-- }

// parseBody parses nodes up to a block tag whose name is in ends, or to
// the end of the template when ends is empty. It returns the end tag's
// name, consumed; the rest of that tag is left to the caller.
func (p *parser) parseBody(ends ...string) ([]node, string, error) {
	var body []node
	for {
		t := p.cur()
		switch t.kind {
		case tEOF:
			if len(ends) > 0 {
				return nil, "", p.fail(t.line, "the template ends before {%% %s %%}", ends[len(ends)-1])
			}
			return body, "", nil
		case tData:
			p.next()
			body = append(body, &textNode{pos{t.line}, t.val})
		case tVarBegin:
			p.next()
			e, err := p.parseTuple(true, false)
			if err != nil {
				return nil, "", err
			}
			if _, err := p.expect(tVarEnd); err != nil {
				return nil, "", err
			}
			body = append(body, &outputNode{pos{t.line}, e})
		case tBlockBegin:
			p.next()
			name := p.cur()
			if name.kind != tName {
				return nil, "", p.fail(name.line, "expected a statement name after {%%, found %s", describe(name))
			}
			for _, e := range ends {
				if name.val == e {
					p.next()
					return body, e, nil
				}
			}
			nodes, err := p.parseStatement()
			if err != nil {
				return nil, "", err
			}
			if _, err := p.expect(tBlockEnd); err != nil {
				return nil, "", err
			}
			body = append(body, nodes...)
		default:
			return nil, "", p.fail(t.line, "unexpected %s", describe(t))
		}
	}
}

// parseBlock expects the end of the opening tag and parses the body up
// to one of ends.
func (p *parser) parseBlock(line int, ends ...string) ([]node, string, error) {
	if err := p.enter(line); err != nil {
		return nil, "", err
	}
	defer p.leave()
	if p.isOp(":") { // Jinja allows a Python-style colon
		p.next()
	}
	if _, err := p.expect(tBlockEnd); err != nil {
		return nil, "", err
	}
	return p.parseBody(ends...)
}

// unsupported names the statements of Jinja outside the subset.
var unsupported = map[string]bool{
	"extends": true, "block": true, "include": true, "import": true,
	"from": true, "autoescape": true, "raw": true, "do": true, "trans": true,
	"debug": true,
}

// parseStatement parses the statement whose name is the current token.
func (p *parser) parseStatement() ([]node, error) {
	t := p.next()
	at := pos{t.line}
	switch t.val {
	case "if":
		n, err := p.parseIf(at)
		return []node{n}, err
	case "for":
		n, err := p.parseFor(at)
		return []node{n}, err
	case "set":
		n, err := p.parseSet(at)
		return []node{n}, err
	case "macro":
		n, err := p.parseMacro(at)
		return []node{n}, err
	case "call":
		n, err := p.parseCallBlock(at)
		return []node{n}, err
	case "filter":
		fs, err := p.parseFilters(nil, true)
		if err != nil {
			return nil, err
		}
		body, _, err := p.parseBlock(t.line, "endfilter")
		return []node{&filterBlockNode{pos: at, filters: fs, body: body}}, err
	case "with":
		n, err := p.parseWith(at)
		return []node{n}, err
	case "print":
		var out []node
		for p.cur().kind != tBlockEnd {
			if len(out) > 0 {
				if err := p.expectOp(","); err != nil {
					return nil, err
				}
			}
			e, err := p.parseExpr(true)
			if err != nil {
				return nil, err
			}
			out = append(out, &outputNode{at, e})
		}
		return out, nil
	case "generation":
		// transformers' AssistantTracker: outside assistant-mask mode the
		// block renders its body unchanged.
		body, _, err := p.parseBlock(t.line, "endgeneration")
		return body, err
	case "break", "continue":
		if p.loops == 0 {
			return nil, p.fail(t.line, "{%% %s %%} is outside a for loop", t.val)
		}
		if t.val == "break" {
			return []node{&breakNode{at}}, nil
		}
		return []node{&continueNode{at}}, nil
	}
	if unsupported[t.val] {
		return nil, p.fail(t.line, "the {%% %s %%} statement is not supported", t.val)
	}
	switch t.val {
	case "elif", "else", "endif", "endfor", "endset", "endmacro", "endcall",
		"endfilter", "endwith", "endgeneration", "endraw", "endblock":
		return nil, p.fail(t.line, "{%% %s %%} has no matching opening statement", t.val)
	}
	return nil, p.fail(t.line, "the {%% %s %%} statement is not supported", t.val)
}

func (p *parser) parseIf(at pos) (node, error) {
	n := &ifNode{pos: at}
	for {
		cond, err := p.parseTuple(false, false)
		if err != nil {
			return nil, err
		}
		body, end, err := p.parseBlock(at.line, "elif", "else", "endif")
		if err != nil {
			return nil, err
		}
		n.conds = append(n.conds, cond)
		n.bodies = append(n.bodies, body)
		switch end {
		case "elif":
			continue
		case "else":
			n.orelse, _, err = p.parseBlock(at.line, "endif")
		}
		return n, err
	}
}

func (p *parser) parseFor(at pos) (node, error) {
	tg, err := p.parseTarget(false, "in")
	if err != nil {
		return nil, err
	}
	if !p.isName("in") {
		return nil, p.fail(p.cur().line, "expected \"in\" in the for loop, found %s", describe(p.cur()))
	}
	p.next()
	n := &forNode{pos: at, target: tg}
	if n.iter, err = p.parseTuple(false, false, "recursive"); err != nil {
		return nil, err
	}
	if p.isName("if") {
		p.next()
		if n.filter, err = p.parseExpr(true); err != nil {
			return nil, err
		}
	}
	if p.isName("recursive") {
		return nil, p.fail(p.cur().line, "the recursive for loop is not supported")
	}
	p.loops++
	body, end, err := p.parseBlock(at.line, "endfor", "else")
	p.loops--
	if err != nil {
		return nil, err
	}
	n.body = body
	if end == "else" {
		n.orelse, _, err = p.parseBlock(at.line, "endfor")
	}
	return n, err
}

func (p *parser) parseSet(at pos) (node, error) {
	tg, err := p.parseTarget(true)
	if err != nil {
		return nil, err
	}
	if p.isOp("=") {
		p.next()
		v, err := p.parseTuple(true, false)
		return &setNode{at, tg, v}, err
	}
	fs, err := p.parseFilters(nil, false)
	if err != nil {
		return nil, err
	}
	body, _, err := p.parseBlock(at.line, "endset")
	return &setBlockNode{pos: at, target: tg, filters: fs, body: body}, err
}

func (p *parser) parseWith(at pos) (node, error) {
	n := &withNode{pos: at}
	for p.cur().kind != tBlockEnd {
		if len(n.names) > 0 {
			if err := p.expectOp(","); err != nil {
				return nil, err
			}
		}
		tg, err := p.parseTarget(false)
		if err != nil {
			return nil, err
		}
		if err := p.expectOp("="); err != nil {
			return nil, err
		}
		v, err := p.parseExpr(true)
		if err != nil {
			return nil, err
		}
		n.names = append(n.names, tg)
		n.values = append(n.values, v)
	}
	var err error
	n.body, _, err = p.parseBlock(at.line, "endwith")
	return n, err
}

func (p *parser) parseMacro(at pos) (node, error) {
	name, err := p.expect(tName)
	if err != nil {
		return nil, err
	}
	m := &macroDef{name: name.val, line: at.line}
	if err := p.parseSignature(m); err != nil {
		return nil, err
	}
	loops := p.loops
	p.loops = 0 // a macro body is not inside the caller's loop
	m.body, _, err = p.parseBlock(at.line, "endmacro")
	p.loops = loops
	return &macroNode{at, m}, err
}

func (p *parser) parseCallBlock(at pos) (node, error) {
	m := &macroDef{name: "caller", line: at.line}
	if p.isOp("(") {
		if err := p.parseSignature(m); err != nil {
			return nil, err
		}
	}
	e, err := p.parseExpr(true)
	if err != nil {
		return nil, err
	}
	call, ok := e.(*callExpr)
	if !ok {
		return nil, p.fail(at.line, "{%% call %%} needs a macro call")
	}
	loops := p.loops
	p.loops = 0
	m.body, _, err = p.parseBlock(at.line, "endcall")
	p.loops = loops
	return &callBlockNode{at, m, call}, err
}

// parseSignature parses "(a, b=default, ...)" of a macro or call block.
func (p *parser) parseSignature(m *macroDef) error {
	if err := p.expectOp("("); err != nil {
		return err
	}
	for !p.isOp(")") {
		if len(m.params) > 0 {
			if err := p.expectOp(","); err != nil {
				return err
			}
		}
		t, err := p.expect(tName)
		if err != nil {
			return err
		}
		if p.isOp("=") {
			p.next()
			d, err := p.parseExpr(true)
			if err != nil {
				return err
			}
			m.defaults = append(m.defaults, d)
		} else if len(m.defaults) > 0 {
			return p.fail(t.line, "the macro parameter %q without a default follows one with a default", t.val)
		}
		m.params = append(m.params, t.val)
	}
	p.next()
	return nil
}

// parseTarget parses an assignment target: a name, names separated by
// commas (optionally in parentheses), or with ns an "ns.attr" of a
// namespace. Parsing stops at the name end if given.
func (p *parser) parseTarget(ns bool, end ...string) (target, error) {
	var tg target
	t := p.cur()
	if ns && t.kind == tName && p.peek().kind == tOp && p.peek().val == "." {
		p.next()
		p.next()
		attr, err := p.expect(tName)
		return target{names: []string{attr.val}, ns: t.val}, err
	}
	paren := p.isOp("(")
	if paren {
		p.next()
	}
	for {
		t := p.cur()
		if t.kind != tName {
			return tg, p.fail(t.line, "cannot assign to %s", describe(t))
		}
		switch t.val {
		case "true", "false", "True", "False", "none", "None":
			return tg, p.fail(t.line, "cannot assign to the constant %s", t.val)
		}
		p.next()
		tg.names = append(tg.names, t.val)
		if !p.isOp(",") {
			break
		}
		p.next()
		tg.tuple = true
		if p.cur().kind == tBlockEnd || p.isOp(")") || p.isOp("=") || len(end) > 0 && p.isName(end[0]) {
			break
		}
	}
	if paren {
		if err := p.expectOp(")"); err != nil {
			return tg, err
		}
	}
	return tg, nil
}

// parseInt converts an integer literal (decimal, 0b, 0o, 0x).
func parseInt(s string) (int64, error) {
	v, err := strconv.ParseInt(s, 0, 64)
	if err != nil {
		return 0, fmt.Errorf("the integer %s does not fit in 64 bits", s)
	}
	return v, nil
}
