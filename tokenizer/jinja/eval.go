package jinja

import (
	"fmt"
	"strings"
)

// eval evaluates an expression in scope s; errors get e's line.
func (r *renderer) eval(e expr, s *scope) (any, error) {
	v, err := r.evalExpr(e, s)
	if err != nil {
		return nil, r.fail(e.exprLine(), err)
	}
	return v, nil
}

func (r *renderer) evalExpr(e expr, s *scope) (any, error) {
	switch e := e.(type) {
	case *constExpr:
		return e.v, nil
	case *nameExpr:
		if v, ok := s.lookup(e.name); ok {
			return v, nil
		}
		return &undefined{name: e.name}, nil
	case *listExpr:
		items, err := r.evalAll(e.items, s)
		return items, err
	case *tupleExpr:
		items, err := r.evalAll(e.items, s)
		return tuple(items), err
	case *dictExpr:
		// Python evaluates every key and value before hashing any key.
		kvs := make([]any, 0, 2*len(e.keys))
		for i, k := range e.keys {
			kv, err := r.eval(k, s)
			if err != nil {
				return nil, err
			}
			vv, err := r.eval(e.vals[i], s)
			if err != nil {
				return nil, err
			}
			kvs = append(kvs, kv, vv)
		}
		d := NewDict()
		for i := 0; i < len(kvs); i += 2 {
			if _, ok := hashKey(kvs[i]); !ok {
				return nil, errUnhashable(kvs[i])
			}
			d.set(kvs[i], kvs[i+1])
		}
		return d, nil
	case *attrExpr:
		obj, err := r.eval(e.obj, s)
		if err != nil {
			return nil, err
		}
		return getattr(obj, e.name)
	case *itemExpr:
		obj, err := r.eval(e.obj, s)
		if err != nil {
			return nil, err
		}
		key, err := r.eval(e.key, s)
		if err != nil {
			return nil, err
		}
		return getitem(obj, key)
	case *sliceExpr:
		return r.evalSlice(e, s)
	case *callExpr:
		return r.evalCall(e, s, nil)
	case *filterExpr:
		v, err := r.eval(e.operand, s)
		if err != nil {
			return nil, err
		}
		return r.callFilter(e, v, s)
	case *testExpr:
		v, err := r.eval(e.operand, s)
		if err != nil {
			return nil, err
		}
		args, kw, err := r.evalArgs(e.args, e.kwargs, s)
		if err != nil {
			return nil, err
		}
		return r.runTest(e.name, v, args, kw)
	case *binExpr:
		a, err := r.eval(e.l, s)
		if err != nil {
			return nil, err
		}
		b, err := r.eval(e.r, s)
		if err != nil {
			return nil, err
		}
		return r.binop(e.op, a, b)
	case *concatExpr:
		var b strings.Builder
		for _, x := range e.items {
			v, err := r.eval(x, s)
			if err != nil {
				return nil, err
			}
			s, err := r.str(v)
			if err != nil {
				return nil, err
			}
			if err := r.checkSize(b.Len() + len(s)); err != nil {
				return nil, err
			}
			b.WriteString(s)
		}
		return b.String(), nil
	case *compareExpr:
		return r.evalCompare(e, s)
	case *andExpr:
		l, err := r.eval(e.l, s)
		if err != nil || !truthy(l) {
			return l, err
		}
		return r.eval(e.r, s)
	case *orExpr:
		l, err := r.eval(e.l, s)
		if err != nil || truthy(l) {
			return l, err
		}
		return r.eval(e.r, s)
	case *notExpr:
		v, err := r.eval(e.e, s)
		return !truthy(v), err
	case *negExpr:
		v, err := r.eval(e.e, s)
		if err != nil {
			return nil, err
		}
		return negate(v)
	case *plusExpr:
		v, err := r.eval(e.e, s)
		if err != nil {
			return nil, err
		}
		return plus(v)
	case *condExpr:
		c, err := r.eval(e.test, s)
		if err != nil {
			return nil, err
		}
		if truthy(c) {
			return r.eval(e.then, s)
		}
		if e.orelse == nil {
			return &undefined{hint: "the inline if-expression on line " + fmt.Sprint(e.line) + " evaluated to false and no else section was defined."}, nil
		}
		return r.eval(e.orelse, s)
	}
	return nil, fmt.Errorf("internal error: unknown expression %T", e)
}

func (r *renderer) evalAll(es []expr, s *scope) ([]any, error) {
	out := make([]any, len(es))
	for i, x := range es {
		v, err := r.eval(x, s)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// evalCompare evaluates a chain "a < b < c" as Python does: pairwise,
// stopping at the first false.
func (r *renderer) evalCompare(e *compareExpr, s *scope) (any, error) {
	a, err := r.eval(e.first, s)
	if err != nil {
		return nil, err
	}
	for i, op := range e.ops {
		b, err := r.eval(e.rest[i], s)
		if err != nil {
			return nil, err
		}
		ok, err := compare(op, a, b)
		if err != nil || !ok {
			return false, err
		}
		a = b
	}
	return true, nil
}

// sliceKey is the value of a subscript slice a[start:stop:step].
type sliceKey struct{ start, stop, step any }

func (r *renderer) evalSlice(e *sliceExpr, s *scope) (any, error) {
	k := &sliceKey{}
	for _, p := range []struct {
		e   expr
		dst *any
	}{{e.start, &k.start}, {e.stop, &k.stop}, {e.step, &k.step}} {
		if p.e == nil {
			continue
		}
		v, err := r.eval(p.e, s)
		if err != nil {
			return nil, err
		}
		*p.dst = v
	}
	return k, nil
}

// kwval is an evaluated keyword argument.
type kwval struct {
	name string
	v    any
}

func (r *renderer) evalArgs(args []expr, kwargs []kwarg, s *scope) ([]any, []kwval, error) {
	av, err := r.evalAll(args, s)
	if err != nil {
		return nil, nil, err
	}
	var kw []kwval
	for _, k := range kwargs {
		v, err := r.eval(k.e, s)
		if err != nil {
			return nil, nil, err
		}
		kw = append(kw, kwval{k.name, v})
	}
	return av, kw, nil
}
