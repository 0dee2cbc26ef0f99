package jinja

// Jinja decides at compile time where each name of a frame (the template,
// a loop body, a macro, ...) comes from (jinja2/idtracking.py). One
// outcome differs from plain lexical lookup: a name whose first mention in
// a frame is an unconditional {% set %}, with no enclosing frame naming
// it, starts the frame unset. It then hides the render's variable of that
// name until the set runs, for instance in a loop that runs earlier:
//
//	{% for m in messages %}{{ x }}{% endfor %}{% set x = 1 %}
//
// prints nothing for x even when x is passed. symbols finds those names
// for every frame; the renderer marks them unset on entering the frame.

// symtab is one frame's names, as far as that outcome needs them.
type symtab struct {
	parent *symtab
	refs   map[string]bool // names the frame itself holds
	unset  map[string]bool // of those, the ones that start unset
}

func newSymtab(parent *symtab) *symtab {
	return &symtab{parent: parent, refs: map[string]bool{}, unset: map[string]bool{}}
}

func (s *symtab) findRef(name string) bool {
	for t := s; t != nil; t = t.parent {
		if t.refs[name] {
			return true
		}
	}
	return false
}

func (s *symtab) load(name string) {
	if !s.findRef(name) {
		s.refs[name] = true
	}
}

// store is an unconditional assignment in the frame.
func (s *symtab) store(name string) {
	if !s.refs[name] {
		s.refs[name] = true
		if s.parent == nil || !s.parent.findRef(name) {
			s.unset[name] = true
		}
	}
}

// branchStore is an assignment inside an if: Jinja resolves such names
// from the context (or the enclosing frame) at the start of the frame.
func (s *symtab) branchStore(name string) { s.refs[name] = true }

func (s *symtab) param(name string) {
	s.refs[name] = true
	delete(s.unset, name)
}

// names lists the unset names of a frame in a stable order.
func (s *symtab) names() []string {
	var out []string
	for n := range s.unset {
		out = append(out, n)
	}
	return out
}

// analyzeFrame analyses a frame's statements with params bound and
// returns its unset names; nested frames are analysed on the way.
func analyzeFrame(body []node, params []string, parent *symtab) []string {
	s := newSymtab(parent)
	for _, p := range params {
		s.param(p)
	}
	s.visitAll(body, false)
	return s.names()
}

func (s *symtab) visitAll(body []node, inIf bool) {
	for _, n := range body {
		s.visit(n, inIf)
	}
}

// visit records the names a statement mentions in this frame, in Jinja's
// order, and analyses the frames it opens.
func (s *symtab) visit(n node, inIf bool) {
	storeTarget := func(tg target) {
		if tg.ns != "" {
			s.load(tg.ns)
			return
		}
		for _, name := range tg.names {
			if inIf {
				s.branchStore(name)
			} else {
				s.store(name)
			}
		}
	}
	switch n := n.(type) {
	case *outputNode:
		s.visitExpr(n.e)
	case *ifNode:
		s.visitExpr(n.conds[0])
		for i, body := range n.bodies {
			if i > 0 {
				s.visitExpr(n.conds[i])
			}
			s.visitAll(body, true)
		}
		s.visitAll(n.orelse, true)
	case *forNode:
		s.visitExpr(n.iter)
		n.bodyUnset = analyzeFrame(n.body, append(n.target.names, "loop"), s)
		n.elseUnset = analyzeFrame(n.orelse, nil, s)
	case *setNode:
		s.visitExpr(n.value)
		storeTarget(n.target)
	case *setBlockNode:
		storeTarget(n.target)
		n.unset = analyzeFrame(n.body, nil, s)
	case *filterBlockNode:
		for _, f := range n.filters {
			s.visitExpr(f)
		}
		n.unset = analyzeFrame(n.body, nil, s)
	case *withNode:
		var params []string
		for i, tg := range n.names {
			s.visitExpr(n.values[i])
			params = append(params, tg.names...)
		}
		n.unset = analyzeFrame(n.body, params, s)
	case *macroNode:
		if inIf {
			s.branchStore(n.m.name)
		} else {
			s.store(n.m.name)
		}
		n.m.unset = analyzeFrame(n.m.body, append(n.m.params, "varargs", "kwargs", "caller"), s)
	case *callBlockNode:
		s.visitExpr(n.call)
		n.caller.unset = analyzeFrame(n.caller.body, append(n.caller.params, "varargs", "kwargs", "caller"), s)
	}
}

// visitExpr records the names an expression reads.
func (s *symtab) visitExpr(e expr) {
	walkExpr(e, func(x expr) {
		if n, ok := x.(*nameExpr); ok {
			s.load(n.name)
		}
	})
}
