package jinja

import "fmt"

// maxRange is the sandbox's bound on range() (jinja2.sandbox.MAX_RANGE).
const maxRange = 100000

// raisedError is raise_exception's error, given its line by renderer.fail.
type raisedError struct{ msg string }

func (e *raisedError) Error() string { return e.msg }

// builtinGlobals are the globals of transformers' environment: Jinja's
// range (bounded by the sandbox), dict and namespace, and transformers'
// raise_exception and strftime_now.
func builtinGlobals() map[string]any {
	g := map[string]any{}
	add := func(name string, fn func(r *renderer, args []any, kw []kwval) (any, error)) {
		g[name] = &builtin{name: name, fn: fn}
	}
	add("range", func(_ *renderer, args []any, kw []kwval) (any, error) {
		if err := noKwargs("range", kw); err != nil {
			return nil, err
		}
		return makeRange(args)
	})
	add("dict", func(_ *renderer, args []any, kw []kwval) (any, error) {
		return makeDict("dict", args, kw)
	})
	add("namespace", func(_ *renderer, args []any, kw []kwval) (any, error) {
		d, err := makeDict("namespace", args, kw)
		if err != nil {
			return nil, err
		}
		return &namespace{attrs: d}, nil
	})
	add("raise_exception", func(r *renderer, args []any, kw []kwval) (any, error) {
		a, _, err := bindArgs("raise_exception", args, kw, "message")
		if err != nil {
			return nil, err
		}
		msg, err := r.str(a[0])
		if err != nil {
			return nil, err
		}
		return nil, &raisedError{msg: msg}
	})
	add("strftime_now", func(r *renderer, args []any, kw []kwval) (any, error) {
		a, given, err := bindArgs("strftime_now", args, kw, "format")
		if err != nil {
			return nil, err
		}
		f, ok := asString(a[0])
		if !given[0] || !ok {
			return nil, fmt.Errorf("strftime_now() needs a format string")
		}
		return strftime(r.opts.Now(), f)
	})
	for _, name := range []string{"lipsum", "cycler", "joiner"} {
		add(name, func(*renderer, []any, []kwval) (any, error) {
			return nil, fmt.Errorf("the global function %s() is not supported", name)
		})
	}
	return g
}

// makeRange is range(stop) or range(start, stop[, step]).
func makeRange(args []any) (any, error) {
	var n [3]int64
	for i, a := range args {
		if i >= 3 {
			return nil, fmt.Errorf("range expected at most 3 arguments, got %d", len(args))
		}
		v, _, isInt, ok := number(a)
		if !ok || !isInt {
			return nil, fmt.Errorf("'%s' object cannot be interpreted as an integer", typeName(a))
		}
		n[i] = v
	}
	r := &rangeVal{step: 1}
	switch len(args) {
	case 0:
		return nil, fmt.Errorf("range expected at least 1 argument, got 0")
	case 1:
		r.stop = n[0]
	default:
		r.start, r.stop = n[0], n[1]
		if len(args) == 3 {
			r.step = n[2]
		}
	}
	if r.step == 0 {
		return nil, fmt.Errorf("range() arg 3 must not be zero")
	}
	if r.len() > maxRange || r.len() < 0 {
		return nil, fmt.Errorf("Range too big. The sandbox blocks ranges larger than MAX_RANGE (%d).", maxRange)
	}
	return r, nil
}

// makeDict is dict(mapping or pairs, **kwargs).
func makeDict(fname string, args []any, kw []kwval) (*Dict, error) {
	d := NewDict()
	if len(args) > 1 {
		return nil, fmt.Errorf("%s expected at most 1 argument, got %d", fname, len(args))
	}
	if len(args) == 1 {
		switch a := args[0].(type) {
		case *Dict:
			for i, k := range a.keys {
				d.set(k, a.vals[i])
			}
		default:
			items, err := iterate(a)
			if err != nil {
				return nil, err
			}
			for i, it := range items {
				pair, err := iterate(it)
				if err != nil || len(pair) != 2 {
					return nil, fmt.Errorf("%s update sequence element #%d is not a pair", fname, i)
				}
				if _, ok := hashKey(pair[0]); !ok {
					return nil, errUnhashable(pair[0])
				}
				d.set(pair[0], pair[1])
			}
		}
	}
	for _, k := range kw {
		d.set(k.name, k.v)
	}
	return d, nil
}
