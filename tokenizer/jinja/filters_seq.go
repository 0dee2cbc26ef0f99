package jinja

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Filters over sequences. Those that return Python generators (batch,
// map, select, reject, selectattr, rejectattr, unique, items) return a
// one-shot *iterator, so that "| length" on them fails and a second loop
// over them sees nothing, as in Jinja.

func fBatch(r *renderer, v any, args []any, kw []kwval) (any, error) {
	a, given, err := bindArgs("batch", args, kw, "linecount", "fill_with")
	if err != nil {
		return nil, err
	}
	n, _, isInt, ok := number(a[0])
	if !given[0] || !ok || !isInt {
		return nil, fmt.Errorf("batch() needs an integer line count")
	}
	items, err := iterate(v)
	if err != nil {
		return nil, err
	}
	var out []any
	var cur []any
	for _, it := range items {
		if int64(len(cur)) == n {
			out = append(out, cur)
			cur = nil
		}
		cur = append(cur, it)
	}
	if len(cur) > 0 {
		if a[1] != nil {
			for int64(len(cur)) < n {
				cur = append(cur, a[1])
			}
		}
		out = append(out, cur)
	}
	return &iterator{name: "do_batch", items: out}, nil
}

// attrPath is make_attrgetter's parsing of "a.b.0": dotted parts, digits
// as integers.
func attrPath(attr any) []any {
	s, ok := attr.(string)
	if !ok {
		return []any{attr}
	}
	var parts []any
	for _, p := range strings.Split(s, ".") {
		if p != "" && strings.Trim(p, "0123456789") == "" {
			if i, err := strconv.ParseInt(p, 10, 64); err == nil {
				parts = append(parts, i)
				continue
			}
		}
		parts = append(parts, p)
	}
	return parts
}

// lookupPath follows a path with the environment's getitem.
func lookupPath(v any, path []any, def any) (any, error) {
	for _, p := range path {
		var err error
		if v, err = getitem(v, p); err != nil {
			return nil, err
		}
		if _, ok := v.(*undefined); ok && def != nil {
			v = def
		}
	}
	return v, nil
}

// ignoreCase lowercases strings for comparisons that ignore case.
func ignoreCase(v any) any {
	if s, ok := asString(v); ok {
		return pyLower(s)
	}
	return v
}

func fDictsort(_ *renderer, v any, args []any, kw []kwval) (any, error) {
	a, _, err := bindArgs("dictsort", args, kw, "case_sensitive", "by", "reverse")
	if err != nil {
		return nil, err
	}
	d, ok := v.(*Dict)
	if u, isU := v.(*undefined); isU {
		return nil, u.err()
	}
	if !ok {
		return nil, fmt.Errorf("'%s' object has no attribute 'items'", typeName(v))
	}
	pos := 0
	if a[1] != nil {
		switch pyStr(a[1]) {
		case "key":
		case "value":
			pos = 1
		default:
			return nil, fmt.Errorf("You can only sort by either \"key\" or \"value\"")
		}
	}
	items := make([]any, d.Len())
	keys := make([]any, d.Len())
	for i, k := range d.keys {
		items[i] = tuple{k, d.vals[i]}
		keys[i] = []any{k, d.vals[i]}[pos]
		if !truthy(a[0]) {
			keys[i] = ignoreCase(keys[i])
		}
	}
	return sortByKeys(items, keys, truthy(a[2]))
}

// sortByKeys sorts items stably by keys, as sorted(key=...) does.
func sortByKeys(items, keys []any, reverse bool) ([]any, error) {
	idx := make([]int, len(items))
	for i := range idx {
		idx[i] = i
	}
	var err error
	sort.SliceStable(idx, func(i, j int) bool {
		a, b := keys[idx[i]], keys[idx[j]]
		if reverse {
			a, b = b, a
		}
		less, e := pyLess(a, b)
		if e != nil && err == nil {
			err = e
		}
		return less
	})
	if err != nil {
		return nil, err
	}
	out := make([]any, len(items))
	for i, j := range idx {
		out[i] = items[j]
	}
	return out, nil
}

func fFirst(_ *renderer, v any, args []any, kw []kwval) (any, error) {
	if it, ok := v.(*iterator); ok && it.err == nil {
		if it.pos < len(it.items) {
			it.pos++
			return it.items[it.pos-1], nil
		}
		return &undefined{hint: "No first item, sequence was empty."}, nil
	}
	items, err := iterate(v)
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return &undefined{hint: "No first item, sequence was empty."}, nil
	}
	return items[0], nil
}

func fLast(_ *renderer, v any, args []any, kw []kwval) (any, error) {
	items, err := iterate(v)
	if _, ok := v.(*iterator); ok || err != nil {
		return nil, fmt.Errorf("'%s' object is not reversible", typeName(v))
	}
	if len(items) == 0 {
		return &undefined{hint: "No last item, sequence was empty."}, nil
	}
	return items[len(items)-1], nil
}

func fItems(_ *renderer, v any, args []any, kw []kwval) (any, error) {
	switch d := v.(type) {
	case *undefined:
		return &iterator{name: "do_items"}, nil
	case *Dict:
		return &iterator{name: "do_items", items: dictItems(d)}, nil
	}
	return &iterator{name: "do_items", err: fmt.Errorf("Can only get item pairs from a mapping.")}, nil
}

func dictItems(d *Dict) []any {
	out := make([]any, d.Len())
	for i, k := range d.keys {
		out[i] = tuple{k, d.vals[i]}
	}
	return out
}

func fJoin(r *renderer, v any, args []any, kw []kwval) (any, error) {
	a, given, err := bindArgs("join", args, kw, "d", "attribute")
	if err != nil {
		return nil, err
	}
	items, err := iterate(v)
	if err != nil {
		return nil, err
	}
	sep := ""
	if given[0] {
		if sep, err = r.str(a[0]); err != nil {
			return nil, err
		}
	}
	var b strings.Builder
	for i, it := range items {
		if a[1] != nil {
			if it, err = lookupPath(it, attrPath(a[1]), nil); err != nil {
				return nil, err
			}
		}
		if i > 0 {
			b.WriteString(sep)
		}
		s, err := r.str(it)
		if err != nil {
			return nil, err
		}
		b.WriteString(s)
		if err := r.checkSize(b.Len()); err != nil {
			return nil, err
		}
	}
	return b.String(), nil
}

func fList(_ *renderer, v any, args []any, kw []kwval) (any, error) {
	items, err := iterate(v)
	if err != nil {
		return nil, err
	}
	return append([]any{}, items...), nil
}

func fMap(r *renderer, v any, args []any, kw []kwval) (any, error) {
	if !truthy(v) {
		return &iterator{name: "sync_do_map"}, nil
	}
	items, err := iterate(v)
	if err != nil {
		return nil, err
	}
	var fn func(any) (any, error)
	if len(args) == 0 && hasKw(kw, "attribute") {
		var attr, def any
		for _, k := range kw {
			switch k.name {
			case "attribute":
				attr = k.v
			case "default":
				def = k.v
			default:
				return nil, fmt.Errorf("Unexpected keyword argument %s", pyRepr(k.name))
			}
		}
		path := attrPath(attr)
		fn = func(x any) (any, error) { return lookupPath(x, path, def) }
	} else {
		if len(args) == 0 {
			return nil, fmt.Errorf("map requires a filter argument")
		}
		name, _ := args[0].(string)
		f, ok := filters[name]
		if !ok {
			return nil, fmt.Errorf("the filter %q is not supported", pyStr(args[0]))
		}
		fn = func(x any) (any, error) { return f(r, x, args[1:], kw) }
	}
	out := make([]any, 0, len(items))
	for _, it := range items {
		x, err := fn(it)
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return &iterator{name: "sync_do_map", items: out}, nil
}

func hasKw(kw []kwval, name string) bool {
	for _, k := range kw {
		if k.name == name {
			return true
		}
	}
	return false
}

func fSelect(r *renderer, v any, args []any, kw []kwval) (any, error) {
	return r.selectOrReject(v, args, kw, true, false)
}

func fReject(r *renderer, v any, args []any, kw []kwval) (any, error) {
	return r.selectOrReject(v, args, kw, false, false)
}

func fSelectAttr(r *renderer, v any, args []any, kw []kwval) (any, error) {
	return r.selectOrReject(v, args, kw, true, true)
}

func fRejectAttr(r *renderer, v any, args []any, kw []kwval) (any, error) {
	return r.selectOrReject(v, args, kw, false, true)
}

// selectOrReject keeps the items (or the items whose attribute) passing
// the named test, or failing it for reject; without a test, truthiness.
func (r *renderer) selectOrReject(v any, args []any, kw []kwval, keep, byAttr bool) (any, error) {
	if !truthy(v) {
		return &iterator{name: "select_or_reject"}, nil
	}
	items, err := iterate(v)
	if err != nil {
		return nil, err
	}
	var path []any
	if byAttr {
		if len(args) == 0 {
			return nil, fmt.Errorf("Missing parameter for attribute name")
		}
		path, args = attrPath(args[0]), args[1:]
	}
	test := func(x any) (bool, error) { return truthy(x), nil }
	if len(args) > 0 {
		name, _ := args[0].(string)
		if _, ok := tests[name]; !ok {
			return nil, fmt.Errorf("the test %q is not supported", pyStr(args[0]))
		}
		targs := args[1:]
		test = func(x any) (bool, error) {
			t, err := r.runTest(name, x, targs, kw)
			return truthy(t), err
		}
	}
	var out []any
	for _, it := range items {
		x := it
		if byAttr {
			if x, err = lookupPath(it, path, nil); err != nil {
				return nil, err
			}
		}
		ok, err := test(x)
		if err != nil {
			return nil, err
		}
		if ok == keep {
			out = append(out, it)
		}
	}
	return &iterator{name: "select_or_reject", items: out}, nil
}
