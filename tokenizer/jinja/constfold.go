package jinja

// Jinja's compiler runs its constant folder over the operands of
// operators, filters, tests, calls, attribute and item lookups and
// conditionals. Folding a dict literal of constants with an unhashable key
// ({[1]: 2}) raises, so the template fails to compile, whether or not a
// render would reach the literal. checkFolding finds such literals.

// folded reports the expressions whose operands Jinja's optimizer folds.
func folded(e expr) bool {
	switch e.(type) {
	case *binExpr, *andExpr, *orExpr, *notExpr, *negExpr, *plusExpr, *concatExpr,
		*compareExpr, *attrExpr, *itemExpr, *filterExpr, *testExpr, *condExpr, *callExpr:
		return true
	}
	return false
}

// checkFolding returns the first dict literal under a folded expression
// that cannot be built.
func checkFolding(body []node) *syntaxError {
	var found *syntaxError
	visit := func(e expr) {
		if found == nil {
			found = foldError(e, false)
		}
	}
	walkNodes(body, visit)
	return found
}

func foldError(e expr, under bool) *syntaxError {
	if e == nil {
		return nil
	}
	if d, ok := e.(*dictExpr); ok && under {
		if name, bad := unbuildableDict(d); bad {
			return &syntaxError{d.line, "unhashable type: '" + name + "'"}
		}
	}
	under = under || folded(e)
	var found *syntaxError
	children(e, func(c expr) {
		if found == nil {
			found = foldError(c, under)
		}
	})
	return found
}

// unbuildableDict reports a dict literal of constants with an unhashable
// key, and that key's type.
func unbuildableDict(d *dictExpr) (string, bool) {
	for i := range d.keys {
		if !isConst(d.keys[i]) || !isConst(d.vals[i]) {
			return "", false
		}
	}
	for _, k := range d.keys {
		if name, ok := unhashableConst(k); ok {
			return name, true
		}
	}
	return "", false
}

// walkNodes calls fn on every top-level expression of the statements.
func walkNodes(body []node, fn func(expr)) {
	for _, n := range body {
		switch n := n.(type) {
		case *outputNode:
			fn(n.e)
		case *ifNode:
			for i, c := range n.conds {
				fn(c)
				walkNodes(n.bodies[i], fn)
			}
			walkNodes(n.orelse, fn)
		case *forNode:
			fn(n.iter)
			fn(n.filter)
			walkNodes(n.body, fn)
			walkNodes(n.orelse, fn)
		case *setNode:
			fn(n.value)
		case *setBlockNode:
			for _, f := range n.filters {
				fn(f)
			}
			walkNodes(n.body, fn)
		case *filterBlockNode:
			for _, f := range n.filters {
				fn(f)
			}
			walkNodes(n.body, fn)
		case *withNode:
			for _, v := range n.values {
				fn(v)
			}
			walkNodes(n.body, fn)
		case *macroNode:
			for _, d := range n.m.defaults {
				fn(d)
			}
			walkNodes(n.m.body, fn)
		case *callBlockNode:
			fn(n.call)
			for _, d := range n.caller.defaults {
				fn(d)
			}
			walkNodes(n.caller.body, fn)
		}
	}
}

// isConst reports an expression the folder turns into a constant: a
// literal made of constants, or an operator on constants that evaluates
// without error (Jinja gives up folding on an error).
func isConst(e expr) bool {
	switch e := e.(type) {
	case *constExpr:
		return true
	case *negExpr, *plusExpr, *notExpr, *binExpr, *concatExpr, *compareExpr, *andExpr, *orExpr, *condExpr:
		ok := true
		children(e, func(c expr) { ok = ok && isConst(c) })
		if !ok {
			return false
		}
		r := &renderer{t: &Template{}, opts: Options{MaxOutput: 1 << 16, MaxSteps: 1000}}
		v, err := r.evalExpr(e, &scope{vars: map[string]any{}})
		return err == nil && safeRepr(v)
	case *listExpr:
		return allConst(e.items)
	case *tupleExpr:
		return allConst(e.items)
	case *dictExpr:
		return allConst(e.keys) && allConst(e.vals)
	}
	return false
}

// safeRepr is jinja2.compiler.has_safe_repr: values a constant can hold.
func safeRepr(v any) bool {
	switch v := v.(type) {
	case nil, bool, int64, float64, string, markup:
		return true
	case []any:
		return allSafe(v)
	case tuple:
		return allSafe(v)
	case *Dict:
		return allSafe(v.keys) && allSafe(v.vals)
	}
	return false
}

func allSafe(vs []any) bool {
	for _, v := range vs {
		if !safeRepr(v) {
			return false
		}
	}
	return true
}

func allConst(es []expr) bool {
	for _, e := range es {
		if !isConst(e) {
			return false
		}
	}
	return true
}

// unhashableConst names the type of a constant that cannot be a key.
func unhashableConst(e expr) (string, bool) {
	switch e := e.(type) {
	case *listExpr:
		return "list", true
	case *dictExpr:
		return "dict", true
	case *tupleExpr:
		for _, x := range e.items {
			if name, ok := unhashableConst(x); ok {
				return name, true
			}
		}
	}
	return "", false
}
