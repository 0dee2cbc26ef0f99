package jinja

// The syntax tree: statements (node) and expressions (expr), each with the
// template line it starts on for error messages.

// node is a statement.
type node interface{ nodeLine() int }

// expr is an expression.
type expr interface{ exprLine() int }

type pos struct{ line int }

func (p pos) nodeLine() int { return p.line }
func (p pos) exprLine() int { return p.line }

// Statements.
type (
	textNode struct {
		pos
		text string
	}
	outputNode struct {
		pos
		e expr
	} // {{ e }}
	ifNode struct {
		pos
		conds  []expr   // if and each elif
		bodies [][]node // one per cond
		orelse []node
	}
	forNode struct {
		pos
		target target
		iter   expr
		filter expr // the inline "if", or nil
		body   []node
		orelse []node // runs when no iteration completed the body

		bodyUnset, elseUnset []string // names starting unset (symbols.go)
	}
	setNode struct {
		pos
		target target
		value  expr
	}
	setBlockNode struct { // {% set x %}...{% endset %}, with optional filters
		pos
		target  target
		filters []*filterExpr // applied in order, operand nil
		body    []node
		unset   []string
	}
	filterBlockNode struct {
		pos
		filters []*filterExpr
		body    []node
		unset   []string
	}
	withNode struct {
		pos
		names  []target
		values []expr
		body   []node
		unset  []string
	}
	macroNode struct {
		pos
		m *macroDef
	}
	callBlockNode struct { // {% call(args) m(...) %}body{% endcall %}
		pos
		caller *macroDef // the body as the macro "caller"
		call   *callExpr
	}
	breakNode    struct{ pos }
	continueNode struct{ pos }
)

// macroDef is a macro's signature and body.
type macroDef struct {
	name     string
	params   []string
	defaults []expr // for the last len(defaults) params
	body     []node
	line     int
	unset    []string
}

// target is the left side of an assignment or a for loop: one name, a
// tuple of names, or a namespace attribute.
type target struct {
	names []string // one name, or a tuple's names
	tuple bool
	ns    string // "ns" of "ns.attr"; names[0] is then attr
}

// Expressions.
type (
	constExpr struct {
		pos
		v any
	}
	nameExpr struct {
		pos
		name string
	}
	listExpr struct {
		pos
		items []expr
	}
	tupleExpr struct {
		pos
		items []expr
	}
	dictExpr struct {
		pos
		keys, vals []expr
	}
	attrExpr struct { // a.b
		pos
		obj  expr
		name string
	}
	itemExpr struct { // a[b]
		pos
		obj, key expr
	}
	sliceExpr struct {
		pos
		start, stop, step expr
	} // parts may be nil
	callExpr struct {
		pos
		fn     expr
		args   []expr
		kwargs []kwarg
	}
	filterExpr struct {
		pos
		operand expr // nil inside {% filter %} and {% set %} blocks
		name    string
		args    []expr
		kwargs  []kwarg
	}
	testExpr struct {
		pos
		operand expr
		name    string
		args    []expr
		kwargs  []kwarg
	}
	binExpr struct { // + - * / // % **
		pos
		op   string
		l, r expr
	}
	concatExpr struct {
		pos
		items []expr
	} // a ~ b ~ c
	compareExpr struct {
		pos
		first expr
		ops   []string // == != < > <= >= in notin
		rest  []expr
	}
	andExpr struct {
		pos
		l, r expr
	}
	orExpr struct {
		pos
		l, r expr
	}
	notExpr struct {
		pos
		e expr
	}
	negExpr struct {
		pos
		e expr
	}
	plusExpr struct {
		pos
		e expr
	}
	condExpr struct {
		pos
		test, then, orelse expr
	} // orelse may be nil
)

// kwarg is a keyword argument of a call, filter or test.
type kwarg struct {
	name string
	e    expr
}

// walkExpr calls fn on e and every expression inside it.
func walkExpr(e expr, fn func(expr)) {
	if e == nil {
		return
	}
	fn(e)
	children(e, func(c expr) { walkExpr(c, fn) })
}

// children calls fn on the direct subexpressions of e that are not nil.
func children(e expr, fn func(expr)) {
	each := func(es ...expr) {
		for _, x := range es {
			if x != nil {
				fn(x)
			}
		}
	}
	kws := func(ks []kwarg) {
		for _, k := range ks {
			each(k.e)
		}
	}
	switch e := e.(type) {
	case *listExpr:
		each(e.items...)
	case *tupleExpr:
		each(e.items...)
	case *dictExpr:
		for i := range e.keys {
			each(e.keys[i], e.vals[i])
		}
	case *attrExpr:
		each(e.obj)
	case *itemExpr:
		each(e.obj, e.key)
	case *sliceExpr:
		each(e.start, e.stop, e.step)
	case *callExpr:
		each(e.fn)
		each(e.args...)
		kws(e.kwargs)
	case *filterExpr:
		each(e.operand)
		each(e.args...)
		kws(e.kwargs)
	case *testExpr:
		each(e.operand)
		each(e.args...)
		kws(e.kwargs)
	case *binExpr:
		each(e.l, e.r)
	case *concatExpr:
		each(e.items...)
	case *compareExpr:
		each(e.first)
		each(e.rest...)
	case *andExpr:
		each(e.l, e.r)
	case *orExpr:
		each(e.l, e.r)
	case *notExpr:
		each(e.e)
	case *negExpr:
		each(e.e)
	case *plusExpr:
		each(e.e)
	case *condExpr:
		each(e.test, e.then, e.orelse)
	}
}
