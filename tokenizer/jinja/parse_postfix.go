package jinja

// Postfix parsing: attribute and item lookups, slices, calls, filters and
// tests after a primary expression.

// parsePostfix parses .attr, [subscript] and calls after a primary.
func (p *parser) parsePostfix(e expr) (expr, error) {
	for {
		t := p.cur()
		var err error
		switch {
		case p.isOp("."):
			p.next()
			a := p.next()
			switch a.kind {
			case tName:
				e = &attrExpr{pos{t.line}, e, a.val}
			case tInt:
				v, err := parseInt(a.val)
				if err != nil {
					return nil, p.fail(a.line, "%v", err)
				}
				e = &itemExpr{pos{t.line}, e, &constExpr{pos{a.line}, v}}
			default:
				return nil, p.fail(a.line, "expected a name or a number after \".\", found %s", describe(a))
			}
		case p.isOp("["):
			e, err = p.parseSubscript(e)
		case p.isOp("("):
			e, err = p.parseCall(e)
		default:
			return e, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// parseFilterExpr parses "| filter", "is test" and calls after a unary.
func (p *parser) parseFilterExpr(e expr) (expr, error) {
	for {
		var err error
		switch {
		case p.isOp("|"):
			var fs []*filterExpr
			fs, err = p.parseFilters(e, false)
			if err == nil {
				e = fs[len(fs)-1]
			}
		case p.isName("is"):
			e, err = p.parseTest(e)
		case p.isOp("("):
			e, err = p.parseCall(e)
		default:
			return e, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

func (p *parser) parseSubscript(obj expr) (expr, error) {
	line := p.next().line
	var args []expr
	for !p.isOp("]") {
		if len(args) > 0 {
			if err := p.expectOp(","); err != nil {
				return nil, err
			}
		}
		a, err := p.parseSubscribed()
		if err != nil {
			return nil, err
		}
		args = append(args, a)
	}
	p.next()
	switch len(args) {
	case 0:
		return nil, p.fail(line, "the subscript [] is empty")
	case 1:
		return &itemExpr{pos{line}, obj, args[0]}, nil
	}
	return &itemExpr{pos{line}, obj, &tupleExpr{pos{line}, args}}, nil
}

// parseSubscribed parses an index or a slice start:stop:step.
func (p *parser) parseSubscribed() (expr, error) {
	line := p.cur().line
	var start expr
	if !p.isOp(":") {
		e, err := p.parseExpr(true)
		if err != nil || !p.isOp(":") {
			return e, err
		}
		start = e
	}
	p.next()
	s := &sliceExpr{pos: pos{line}, start: start}
	var err error
	if !p.isOp(":") && !p.isOp("]") && !p.isOp(",") {
		if s.stop, err = p.parseExpr(true); err != nil {
			return nil, err
		}
	}
	if p.isOp(":") {
		p.next()
		if !p.isOp("]") && !p.isOp(",") {
			if s.step, err = p.parseExpr(true); err != nil {
				return nil, err
			}
		}
	}
	return s, nil
}

// parseArgs parses "(args, name=value, ...)".
func (p *parser) parseArgs() ([]expr, []kwarg, error) {
	open := p.next()
	var args []expr
	var kwargs []kwarg
	for !p.isOp(")") {
		if len(args)+len(kwargs) > 0 {
			if err := p.expectOp(","); err != nil {
				return nil, nil, err
			}
			if p.isOp(")") {
				break
			}
		}
		if p.isOp("*") || p.isOp("**") {
			return nil, nil, p.fail(p.cur().line, "the %s argument unpacking of calls is not supported", p.cur().val)
		}
		if t := p.cur(); t.kind == tName && p.peek().kind == tOp && p.peek().val == "=" {
			p.next()
			p.next()
			e, err := p.parseExpr(true)
			if err != nil {
				return nil, nil, err
			}
			kwargs = append(kwargs, kwarg{t.val, e})
			continue
		}
		if len(kwargs) > 0 {
			return nil, nil, p.fail(open.line, "a positional argument follows a keyword argument")
		}
		e, err := p.parseExpr(true)
		if err != nil {
			return nil, nil, err
		}
		args = append(args, e)
	}
	p.next()
	return args, kwargs, nil
}

func (p *parser) parseCall(fn expr) (expr, error) {
	line := p.cur().line
	args, kwargs, err := p.parseArgs()
	return &callExpr{pos{line}, fn, args, kwargs}, err
}

// parseFilters parses "| name(args) | name ..." applied to operand; with
// inline the first filter has no leading "|" ({% filter %}).
func (p *parser) parseFilters(operand expr, inline bool) ([]*filterExpr, error) {
	var fs []*filterExpr
	for p.isOp("|") || inline {
		if !inline {
			p.next()
		}
		inline = false
		t, err := p.expect(tName)
		if err != nil {
			return nil, err
		}
		name := t.val
		for p.isOp(".") {
			p.next()
			n, err := p.expect(tName)
			if err != nil {
				return nil, err
			}
			name += "." + n.val
		}
		if _, ok := filters[name]; !ok {
			return nil, p.fail(t.line, "the filter %q is not supported", name)
		}
		f := &filterExpr{pos: pos{t.line}, operand: operand, name: name}
		if p.isOp("(") {
			if f.args, f.kwargs, err = p.parseArgs(); err != nil {
				return nil, err
			}
		}
		fs = append(fs, f)
		operand = f
	}
	return fs, nil
}

// parseTest parses "is [not] name", with arguments in parentheses or one
// argument without them ("is divisibleby 3").
func (p *parser) parseTest(operand expr) (expr, error) {
	is := p.next()
	negated := false
	if p.isName("not") {
		p.next()
		negated = true
	}
	t, err := p.expect(tName)
	if err != nil {
		return nil, err
	}
	name := t.val
	for p.isOp(".") {
		p.next()
		n, err := p.expect(tName)
		if err != nil {
			return nil, err
		}
		name += "." + n.val
	}
	if _, ok := tests[name]; !ok {
		return nil, p.fail(t.line, "the test %q is not supported", name)
	}
	te := &testExpr{pos: pos{is.line}, operand: operand, name: name}
	c := p.cur()
	switch {
	case p.isOp("("):
		if te.args, te.kwargs, err = p.parseArgs(); err != nil {
			return nil, err
		}
	case c.kind == tName && c.val != "else" && c.val != "or" && c.val != "and" ||
		c.kind == tString || c.kind == tInt || c.kind == tFloat || p.isOp("[") || p.isOp("{"):
		if p.isName("is") {
			return nil, p.fail(c.line, "tests cannot be chained with \"is\"")
		}
		a, err := p.parsePrimary()
		if err != nil {
			return nil, err
		}
		if a, err = p.parsePostfix(a); err != nil {
			return nil, err
		}
		te.args = []expr{a}
	}
	if negated {
		return &notExpr{pos{is.line}, te}, nil
	}
	return te, nil
}
