package jinja

import (
	"fmt"
	"strings"
)

// exec runs statements in scope s.
func (r *renderer) exec(body []node, s *scope) error {
	for _, n := range body {
		if err := r.fail(n.nodeLine(), r.execNode(n, s)); err != nil {
			return err
		}
	}
	return nil
}

func (r *renderer) execNode(n node, s *scope) error {
	switch n := n.(type) {
	case *textNode:
		return r.write(n.text)
	case *outputNode:
		v, err := r.eval(n.e, s)
		if err != nil {
			return err
		}
		return r.writeValue(v)
	case *ifNode:
		for i, c := range n.conds {
			v, err := r.eval(c, s)
			if err != nil {
				return err
			}
			if truthy(v) {
				return r.exec(n.bodies[i], s)
			}
		}
		return r.exec(n.orelse, s)
	case *forNode:
		return r.execFor(n, s)
	case *setNode:
		if n.target.ns != "" { // Jinja checks the namespace first
			if obj, _ := s.lookup(n.target.ns); !isNamespace(obj) {
				return fmt.Errorf("cannot assign attribute on non-namespace object")
			}
		}
		v, err := r.eval(n.value, s)
		if err != nil {
			return err
		}
		return r.assign(n.target, v, s)
	case *setBlockNode:
		text, err := r.capture(n.body, s.frame(n.unset))
		if err != nil {
			return err
		}
		v, err := r.applyFilters(n.filters, text, s)
		if err != nil {
			return err
		}
		return r.assign(n.target, v, s)
	case *filterBlockNode:
		text, err := r.capture(n.body, s.frame(n.unset))
		if err != nil {
			return err
		}
		v, err := r.applyFilters(n.filters, text, s)
		if err != nil {
			return err
		}
		return r.writeValue(v)
	case *withNode:
		inner := s.frame(n.unset)
		for i, tg := range n.names {
			v, err := r.eval(n.values[i], s) // values see the outer scope
			if err != nil {
				return err
			}
			if err := r.assign(tg, v, inner); err != nil {
				return err
			}
		}
		return r.exec(n.body, inner)
	case *macroNode:
		s.vars[n.m.name] = &macro{def: n.m, scope: s}
		return nil
	case *callBlockNode:
		caller := &macro{def: n.caller, scope: s}
		v, err := r.evalCall(n.call, s, caller)
		if err != nil {
			return err
		}
		return r.writeValue(v)
	case *breakNode:
		return errBreak
	case *continueNode:
		return errContinue
	}
	return fmt.Errorf("internal error: unknown statement %T", n)
}

func isNamespace(v any) bool {
	_, ok := v.(*namespace)
	return ok
}

// writeValue prints v as Python's str().
func (r *renderer) writeValue(v any) error {
	s, err := r.str(v)
	if err != nil {
		return err
	}
	return r.write(s)
}

// capture renders body into a string instead of the output.
func (r *renderer) capture(body []node, s *scope) (string, error) {
	saved := r.out
	var b strings.Builder
	r.out = &b
	err := r.exec(body, s)
	r.out = saved
	if err != nil {
		return "", err
	}
	return b.String(), nil
}

// applyFilters runs the filters of a {% set %} or {% filter %} block on
// its rendered body.
func (r *renderer) applyFilters(fs []*filterExpr, v any, s *scope) (any, error) {
	for _, f := range fs {
		var err error
		if v, err = r.callFilter(f, v, s); err != nil {
			return nil, r.fail(f.line, err)
		}
	}
	return v, nil
}

// assign binds a set, for or with target in scope s.
func (r *renderer) assign(tg target, v any, s *scope) error {
	if tg.ns != "" {
		obj, _ := s.lookup(tg.ns)
		ns, ok := obj.(*namespace)
		if !ok {
			return fmt.Errorf("cannot assign attribute on non-namespace object")
		}
		ns.attrs.set(tg.names[0], v)
		return nil
	}
	if !tg.tuple {
		s.vars[tg.names[0]] = v
		return nil
	}
	items, err := iterate(v)
	if err != nil {
		return fmt.Errorf("cannot unpack non-iterable %s object", typeName(v))
	}
	switch {
	case len(items) < len(tg.names):
		return fmt.Errorf("not enough values to unpack (expected %d, got %d)", len(tg.names), len(items))
	case len(items) > len(tg.names):
		return fmt.Errorf("too many values to unpack (expected %d)", len(tg.names))
	}
	for i, name := range tg.names {
		s.vars[name] = items[i]
	}
	return nil
}

// execFor runs a for loop: each iteration in its own scope, so that sets
// inside do not outlive it; the inline if filters items before loop.index
// and loop.length count them; else runs when the body never ran.
func (r *renderer) execFor(n *forNode, s *scope) error {
	seq, err := r.eval(n.iter, s)
	if err != nil {
		return err
	}
	items, err := iterate(seq)
	if err != nil {
		return err
	}
	if n.filter != nil {
		var kept []any
		for _, it := range items {
			if err := r.step(); err != nil {
				return err
			}
			fs := s.child()
			if err := r.assign(n.target, it, fs); err != nil {
				return err
			}
			ok, err := r.eval(n.filter, fs)
			if err != nil {
				return err
			}
			if truthy(ok) {
				if n.target.tuple { // Jinja's filter generator yields the unpacked targets
					t := make(tuple, len(n.target.names))
					for i, name := range n.target.names {
						t[i] = fs.vars[name]
					}
					it = t
				}
				kept = append(kept, it)
			}
		}
		items = kept
	}
	loop := &loopCtx{items: items, length: len(items), index0: -1}
	completed := false // as Jinja's iteration indicator: a body ran to its end
	for i, it := range items {
		if err := r.step(); err != nil {
			return err
		}
		loop.index0 = i
		body := s.frame(n.bodyUnset)
		if err := r.assign(n.target, it, body); err != nil {
			return err
		}
		body.vars["loop"] = loop
		err := r.exec(n.body, body)
		if err == errBreak {
			break
		}
		if err != nil && err != errContinue {
			return err
		}
		completed = completed || err == nil
	}
	if !completed {
		return r.exec(n.orelse, s.frame(n.elseUnset))
	}
	return nil
}
