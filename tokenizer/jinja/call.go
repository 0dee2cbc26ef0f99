package jinja

import (
	"errors"
	"fmt"
)

// callable is anything a template can call.
type callable interface {
	funcName() string
}

// builtin is a global function of the environment.
type builtin struct {
	name string
	fn   func(r *renderer, args []any, kw []kwval) (any, error)
}

func (b *builtin) funcName() string { return b.name }
func (m *method) funcName() string  { return m.name }
func (f Func) funcName() string     { return "Func" }

// macro is a {% macro %} (or a call block's caller) bound to the scope it
// was defined in, which it reads at call time.
type macro struct {
	def    *macroDef
	scope  *scope
	caller *macro // set on a macro called from {% call %}
}

func (m *macro) funcName() string { return m.def.name }

// evalCall evaluates a call; caller is the body of a {% call %} block.
func (r *renderer) evalCall(e *callExpr, s *scope, caller *macro) (any, error) {
	fn, err := r.eval(e.fn, s)
	if err != nil {
		return nil, err
	}
	args, kw, err := r.evalArgs(e.args, e.kwargs, s)
	if err != nil {
		return nil, err
	}
	if caller != nil {
		m, ok := fn.(*macro)
		if !ok {
			return nil, fmt.Errorf("{%% call %%} needs a macro, not %s", typeName(fn))
		}
		bound := *m
		bound.caller = caller
		fn = &bound
	}
	return r.call(fn, args, kw)
}

// call calls fn with evaluated arguments.
func (r *renderer) call(fn any, args []any, kw []kwval) (any, error) {
	switch f := fn.(type) {
	case *builtin:
		return f.fn(r, args, kw)
	case *method:
		return r.callMethod(f, args, kw)
	case *macro:
		return r.callMacro(f, args, kw)
	case Func:
		return r.callFunc(f, args, kw)
	case *undefined:
		return nil, f.err()
	}
	return nil, fmt.Errorf("'%s' object is not callable", typeName(fn))
}

func (r *renderer) callFunc(f Func, args []any, kw []kwval) (any, error) {
	ga := make([]any, len(args))
	for i, a := range args {
		ga[i] = toGo(a)
	}
	gk := make(map[string]any, len(kw))
	for _, k := range kw {
		gk[k.name] = toGo(k.v)
	}
	v, err := f(ga, gk)
	if err != nil {
		return nil, err
	}
	return fromGo(v, 0)
}

// callMacro renders a macro's body with its parameters bound: missing
// ones are undefined or their default (evaluated at call time, seeing the
// earlier parameters); extra ones land in varargs and kwargs.
func (r *renderer) callMacro(m *macro, args []any, kw []kwval) (any, error) {
	if err := r.step(); err != nil {
		return nil, err
	}
	if r.calls >= maxCallDepth {
		return nil, fmt.Errorf("macro calls nest more than %d deep", maxCallDepth)
	}
	r.calls++
	defer func() { r.calls-- }()
	d := m.def
	s := m.scope.frame(d.unset)
	given := map[string]any{}
	extra := NewDict()
	for _, k := range kw {
		given[k.name] = k.v
	}
	for i, p := range d.params {
		if i < len(args) {
			if _, dup := given[p]; dup {
				return nil, fmt.Errorf("macro %s got multiple values for argument %s", pyRepr(d.name), pyRepr(p))
			}
			s.vars[p] = args[i]
			continue
		}
		if v, ok := given[p]; ok {
			s.vars[p] = v
			continue
		}
		if j := i - (len(d.params) - len(d.defaults)); j >= 0 {
			v, err := r.eval(d.defaults[j], s)
			if err != nil {
				return nil, err
			}
			s.vars[p] = v
			continue
		}
		s.vars[p] = &undefined{hint: fmt.Sprintf("parameter %s was not provided", pyRepr(p))}
	}
	params := set(d.params...)
	for _, k := range kw {
		if !params[k.name] {
			extra.set(k.name, k.v)
		}
	}
	var varargs tuple
	if len(args) > len(d.params) {
		varargs = append(tuple{}, args[len(d.params):]...)
	}
	s.vars["varargs"] = varargs
	s.vars["kwargs"] = extra
	if m.caller != nil {
		s.vars["caller"] = m.caller
	}
	out, err := r.capture(d.body, s)
	if err == errBreak || err == errContinue {
		err = errors.New("break or continue outside a loop")
	}
	return out, err
}

// bindArgs matches positional and keyword arguments to the named
// parameters of a filter, test, method or function, as Python would;
// absent ones are nil in the result and false in given.
func bindArgs(fname string, args []any, kw []kwval, params ...string) ([]any, []bool, error) {
	out := make([]any, len(params))
	given := make([]bool, len(params))
	if len(args) > len(params) {
		return nil, nil, fmt.Errorf("%s() takes at most %d arguments (%d given)", fname, len(params), len(args))
	}
	for i, a := range args {
		out[i], given[i] = a, true
	}
	for _, k := range kw {
		found := false
		for i, p := range params {
			if p == k.name {
				if given[i] {
					return nil, nil, fmt.Errorf("%s() got multiple values for argument %s", fname, pyRepr(p))
				}
				out[i], given[i], found = k.v, true, true
			}
		}
		if !found {
			return nil, nil, fmt.Errorf("%s() got an unexpected keyword argument %s", fname, pyRepr(k.name))
		}
	}
	return out, given, nil
}

// noKwargs refuses keyword arguments of functions that take none.
func noKwargs(fname string, kw []kwval) error {
	if len(kw) > 0 {
		return fmt.Errorf("%s() takes no keyword arguments", fname)
	}
	return nil
}
