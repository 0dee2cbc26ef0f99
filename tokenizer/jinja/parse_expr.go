package jinja

import "strconv"

// Expression parsing, by precedence from lowest to highest as in Jinja:
// conditional, or, and, not, comparison, + -, ~, * / // %, **, unary - +,
// then postfix (.attr, [item], call), filters and tests.

// parseTuple parses an expression, or a tuple if commas follow it.
// withCond allows "x if c else y"; parens says an empty tuple is valid.
// Tuples also end at a name in extraEnd.
func (p *parser) parseTuple(withCond, parens bool, extraEnd ...string) (expr, error) {
	line := p.cur().line
	var items []expr
	isTuple := false
	for {
		if len(items) > 0 {
			if err := p.expectOp(","); err != nil {
				return nil, err
			}
		}
		if p.tupleEnd(extraEnd) {
			break
		}
		e, err := p.parseExpr(withCond)
		if err != nil {
			return nil, err
		}
		items = append(items, e)
		if !p.isOp(",") {
			break
		}
		isTuple = true
	}
	if !isTuple {
		if len(items) > 0 {
			return items[0], nil
		}
		if !parens {
			return nil, p.fail(p.cur().line, "expected an expression, found %s", describe(p.cur()))
		}
	}
	return &tupleExpr{pos{line}, items}, nil
}

func (p *parser) tupleEnd(extraEnd []string) bool {
	t := p.cur()
	if t.kind == tVarEnd || t.kind == tBlockEnd || t.kind == tEOF || p.isOp(")") {
		return true
	}
	for _, e := range extraEnd {
		if p.isName(e) {
			return true
		}
	}
	return false
}

// parseExpr parses an expression, with or without the conditional form.
func (p *parser) parseExpr(withCond bool) (expr, error) {
	line := p.cur().line
	if err := p.enter(line); err != nil {
		return nil, err
	}
	defer p.leave()
	e, err := p.parseOr()
	if err != nil || !withCond {
		return e, err
	}
	for p.isName("if") {
		p.next()
		test, err := p.parseOr()
		if err != nil {
			return nil, err
		}
		var orelse expr
		if p.isName("else") {
			p.next()
			if orelse, err = p.parseExpr(true); err != nil {
				return nil, err
			}
		}
		e = &condExpr{pos{line}, test, e, orelse}
	}
	return e, nil
}

func (p *parser) parseOr() (expr, error) {
	l, err := p.parseAnd()
	for err == nil && p.isName("or") {
		line := p.next().line
		var r expr
		if r, err = p.parseAnd(); err == nil {
			l = &orExpr{pos{line}, l, r}
		}
	}
	return l, err
}

func (p *parser) parseAnd() (expr, error) {
	l, err := p.parseNot()
	for err == nil && p.isName("and") {
		line := p.next().line
		var r expr
		if r, err = p.parseNot(); err == nil {
			l = &andExpr{pos{line}, l, r}
		}
	}
	return l, err
}

func (p *parser) parseNot() (expr, error) {
	if !p.isName("not") {
		return p.parseCompare()
	}
	line := p.next().line
	if err := p.enter(line); err != nil {
		return nil, err
	}
	defer p.leave()
	e, err := p.parseNot()
	return &notExpr{pos{line}, e}, err
}

func (p *parser) parseCompare() (expr, error) {
	line := p.cur().line
	first, err := p.parseMath1()
	if err != nil {
		return nil, err
	}
	c := &compareExpr{pos: pos{line}, first: first}
	for {
		t := p.cur()
		var op string
		switch {
		case t.kind == tOp && (t.val == "==" || t.val == "!=" || t.val == "<" || t.val == ">" || t.val == "<=" || t.val == ">="):
			op = t.val
			p.next()
		case p.isName("in"):
			op = "in"
			p.next()
		case p.isName("not") && p.peek().kind == tName && p.peek().val == "in":
			op = "notin"
			p.next()
			p.next()
		}
		if op == "" {
			break
		}
		r, err := p.parseMath1()
		if err != nil {
			return nil, err
		}
		c.ops = append(c.ops, op)
		c.rest = append(c.rest, r)
	}
	if len(c.ops) == 0 {
		return first, nil
	}
	return c, nil
}

// parseBinary parses left-associative operators ops over operands sub.
func (p *parser) parseBinary(sub func() (expr, error), ops ...string) (expr, error) {
	l, err := sub()
	if err != nil {
		return nil, err
	}
	for {
		t := p.cur()
		op := ""
		for _, o := range ops {
			if t.kind == tOp && t.val == o {
				op = o
			}
		}
		if op == "" {
			return l, nil
		}
		p.next()
		r, err := sub()
		if err != nil {
			return nil, err
		}
		l = &binExpr{pos{t.line}, op, l, r}
	}
}

func (p *parser) parseMath1() (expr, error) { return p.parseBinary(p.parseConcat, "+", "-") }

func (p *parser) parseConcat() (expr, error) {
	line := p.cur().line
	e, err := p.parseMath2()
	if err != nil || !p.isOp("~") {
		return e, err
	}
	items := []expr{e}
	for p.isOp("~") {
		p.next()
		e, err := p.parseMath2()
		if err != nil {
			return nil, err
		}
		items = append(items, e)
	}
	return &concatExpr{pos{line}, items}, nil
}

func (p *parser) parseMath2() (expr, error) {
	return p.parseBinary(p.parsePow, "*", "/", "//", "%")
}

// parsePow: Jinja's ** is left-associative (2**3**2 is 64) and binds
// looser than unary minus (-2**2 is 4).
func (p *parser) parsePow() (expr, error) {
	return p.parseBinary(func() (expr, error) { return p.parseUnary(true) }, "**")
}

func (p *parser) parseUnary(withFilter bool) (expr, error) {
	t := p.cur()
	if err := p.enter(t.line); err != nil {
		return nil, err
	}
	defer p.leave()
	var e expr
	var err error
	switch {
	case p.isOp("-"):
		p.next()
		var x expr
		x, err = p.parseUnary(false)
		e = &negExpr{pos{t.line}, x}
	case p.isOp("+"):
		p.next()
		var x expr
		x, err = p.parseUnary(false)
		e = &plusExpr{pos{t.line}, x}
	default:
		e, err = p.parsePrimary()
	}
	if err != nil {
		return nil, err
	}
	if e, err = p.parsePostfix(e); err != nil || !withFilter {
		return e, err
	}
	return p.parseFilterExpr(e)
}

func (p *parser) parsePrimary() (expr, error) {
	t := p.cur()
	at := pos{t.line}
	switch t.kind {
	case tName:
		p.next()
		switch t.val {
		case "true", "True":
			return &constExpr{at, true}, nil
		case "false", "False":
			return &constExpr{at, false}, nil
		case "none", "None":
			return &constExpr{at, nil}, nil
		}
		return &nameExpr{at, t.val}, nil
	case tString:
		s := ""
		for p.cur().kind == tString { // adjacent strings concatenate
			s += p.next().val
		}
		return &constExpr{at, s}, nil
	case tInt:
		p.next()
		v, err := parseInt(t.val)
		if err != nil {
			return nil, p.fail(t.line, "%v", err)
		}
		return &constExpr{at, v}, nil
	case tFloat:
		p.next()
		v, err := strconv.ParseFloat(t.val, 64)
		if err != nil && v == 0 {
			return nil, p.fail(t.line, "the float %s is not valid", t.val)
		}
		return &constExpr{at, v}, nil // overflow gives ±inf, as in Python
	case tOp:
		switch t.val {
		case "(":
			p.next()
			e, err := p.parseTuple(true, true)
			if err != nil {
				return nil, err
			}
			return e, p.expectOp(")")
		case "[":
			return p.parseList()
		case "{":
			return p.parseDict()
		}
	}
	return nil, p.fail(t.line, "unexpected %s", describe(t))
}

func (p *parser) parseList() (expr, error) {
	l := &listExpr{pos: pos{p.next().line}}
	for !p.isOp("]") {
		if len(l.items) > 0 {
			if err := p.expectOp(","); err != nil {
				return nil, err
			}
			if p.isOp("]") {
				break
			}
		}
		e, err := p.parseExpr(true)
		if err != nil {
			return nil, err
		}
		l.items = append(l.items, e)
	}
	p.next()
	return l, nil
}

func (p *parser) parseDict() (expr, error) {
	d := &dictExpr{pos: pos{p.next().line}}
	for !p.isOp("}") {
		if len(d.keys) > 0 {
			if err := p.expectOp(","); err != nil {
				return nil, err
			}
			if p.isOp("}") {
				break
			}
		}
		k, err := p.parseExpr(true)
		if err != nil {
			return nil, err
		}
		if err := p.expectOp(":"); err != nil {
			return nil, err
		}
		v, err := p.parseExpr(true)
		if err != nil {
			return nil, err
		}
		d.keys = append(d.keys, k)
		d.vals = append(d.vals, v)
	}
	p.next()
	return d, nil
}
