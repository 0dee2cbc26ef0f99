package jinja

import (
	"fmt"
	"math"
	"strings"
)

// Values inside a render are Python's, represented as
//
//	nil         None
//	bool        bool
//	int64       int (64-bit: results that overflow are errors)
//	float64     float
//	string      str
//	markup      markupsafe.Markup, from the safe and escape filters
//	[]any       list
//	tuple       tuple
//	*Dict       dict, ordered by insertion
//	*namespace  jinja2's Namespace
//	*undefined  jinja2's Undefined
//	*iterator   a one-shot generator or iterator (select, map, ...)
//	*view       dict.keys(), .values(), .items()
//	*rangeVal   range
//	callable    functions, macros and bound methods
//	*loopCtx    the loop variable

type (
	tuple  []any
	markup string
)

// Dict is Python's dict: a mapping that keeps insertion order, so that
// tojson and printing list keys in the order the caller gave them. Keys are
// strings, numbers, booleans or None.
type Dict struct {
	keys  []any
	vals  []any
	index map[any]int // by hashKey
}

// NewDict returns an empty Dict.
func NewDict() *Dict { return &Dict{index: map[any]int{}} }

// Set sets key to v, keeping the key's first position. v is converted as
// Render converts variables.
func (d *Dict) Set(key string, v any) error {
	cv, err := fromGo(v, 0)
	if err != nil {
		return fmt.Errorf("dict key %q: %w", key, err)
	}
	d.set(key, cv)
	return nil
}

// Len is the number of keys.
func (d *Dict) Len() int { return len(d.keys) }

// Keys returns the keys in order.
func (d *Dict) Keys() []any { return append([]any(nil), d.keys...) }

// Get returns the value of key and whether it is present.
func (d *Dict) Get(key any) (any, bool) {
	h, ok := hashKey(key)
	if !ok {
		return nil, false
	}
	i, ok := d.index[h]
	if !ok {
		return nil, false
	}
	return d.vals[i], true
}

func (d *Dict) set(key, v any) {
	h, _ := hashKey(key)
	if i, ok := d.index[h]; ok {
		d.vals[i] = v
		return
	}
	d.index[h] = len(d.keys)
	d.keys = append(d.keys, key)
	d.vals = append(d.vals, v)
}

// undefinedKey is the hash identity of every Undefined: they are all
// equal.
type undefinedKey struct{}

// tupleKey is the hash identity of a tuple of hashable items.
type tupleKey string

// hashKey is the key's identity under Python's equality: 1, 1.0 and True
// are one key. Only hashable values are keys: not lists, dicts or tuples
// holding them.
func hashKey(k any) (any, bool) {
	switch k := k.(type) {
	case *undefined:
		return undefinedKey{}, true
	case *rangeVal:
		n := k.len()
		switch n {
		case 0:
			return tupleKey("range()"), true
		case 1:
			return tupleKey(fmt.Sprintf("range(%d)", k.start)), true
		}
		return tupleKey(fmt.Sprintf("range(%d,%d,%d)", k.start, n, k.step)), true
	case *namespace, *loopCtx, *iterator, *macro, *builtin:
		return k, true // by identity
	case tuple:
		var b strings.Builder
		for _, x := range k {
			h, ok := hashKey(x)
			if !ok {
				return nil, false
			}
			fmt.Fprintf(&b, "%T:%v\x00", h, h)
		}
		return tupleKey(b.String()), true
	case nil, string, int64:
		return k, true
	case markup:
		return string(k), true
	case bool:
		if k {
			return int64(1), true
		}
		return int64(0), true
	case float64:
		if k == math.Trunc(k) && math.Abs(k) < 1<<63 {
			return int64(k), true
		}
		return k, true
	}
	return nil, false
}

// errUnhashable is Python's error for a key that cannot be hashed, naming
// the innermost culprit of a tuple.
func errUnhashable(k any) error {
	if t, ok := k.(tuple); ok {
		for _, x := range t {
			if _, ok := hashKey(x); !ok {
				return errUnhashable(x)
			}
		}
	}
	return fmt.Errorf("unhashable type: '%s'", typeName(k))
}

// namespace is jinja2's Namespace: attributes assignable with
// {% set ns.attr = ... %}, shared by reference.
type namespace struct{ attrs *Dict }

// undefined is jinja2's Undefined: it prints as "", is false and empty,
// and fails with its message on any other use.
type undefined struct {
	hint     string // the message, when given
	name     any    // the missing name, attribute or index
	obj      any    // the object it was looked up on, if any
	hasObj   bool
	security bool // an unsafe attribute of the sandbox (SecurityError)
}

// message is Jinja's message for a failed use of u.
func (u *undefined) message() string {
	switch {
	case u.hint != "":
		return u.hint
	case !u.hasObj:
		return fmt.Sprintf("%s is undefined", pyRepr(u.name))
	}
	if _, ok := u.name.(string); !ok {
		return fmt.Sprintf("%s has no element %s", objectTypeRepr(u.obj), pyRepr(u.name))
	}
	return fmt.Sprintf("'%s' has no attribute %s", objectTypeRepr(u.obj), pyRepr(u.name))
}

func (u *undefined) err() error { return fmt.Errorf("%s", u.message()) }

// missingAttr is the undefined value of obj.name or obj[name].
func missingAttr(obj, name any) *undefined {
	return &undefined{name: name, obj: obj, hasObj: true}
}

// iterator is a one-shot Python iterator, like the generators that select,
// map and friends return: a second pass sees nothing.
type iterator struct {
	name  string // for printing: <generator object NAME>
	items []any
	pos   int
	err   error // raised when consumed, as a generator raises lazily
}

func (it *iterator) rest() ([]any, error) {
	if it.err != nil {
		return nil, it.err
	}
	r := it.items[it.pos:]
	it.pos = len(it.items)
	return r, nil
}

// view is one of dict.keys(), .values() and .items().
type view struct {
	kind  string // dict_keys, dict_values, dict_items
	items []any
}

// rangeVal is Python's range.
type rangeVal struct{ start, stop, step int64 }

func (r *rangeVal) len() int64 {
	switch {
	case r.step > 0 && r.start < r.stop:
		return (r.stop - r.start + r.step - 1) / r.step
	case r.step < 0 && r.start > r.stop:
		return (r.start - r.stop - r.step - 1) / -r.step
	}
	return 0
}

func (r *rangeVal) items() []any {
	n := r.len()
	out := make([]any, n)
	for i := range out {
		out[i] = r.start + int64(i)*r.step
	}
	return out
}

// typeName is the Python type name of v, for error messages.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case int64:
		return "int"
	case float64:
		return "float"
	case string:
		return "str"
	case markup:
		return "Markup"
	case []any:
		return "list"
	case tuple:
		return "tuple"
	case *Dict:
		return "dict"
	case *namespace:
		return "Namespace"
	case *undefined:
		return "Undefined"
	case *iterator:
		return "generator"
	case *view:
		return v.(*view).kind
	case *rangeVal:
		return "range"
	case *loopCtx:
		return "LoopContext"
	case *method:
		return "builtin_function_or_method"
	case *macro:
		return "Macro"
	case callable:
		return "function"
	}
	return fmt.Sprintf("%T", v)
}

// objectTypeRepr is jinja2.utils.object_type_repr: "dict object", "None".
func objectTypeRepr(v any) string {
	switch v.(type) {
	case nil:
		return "None"
	case markup:
		return "markupsafe.Markup object"
	case *namespace:
		return "jinja2.utils.Namespace object"
	case *macro:
		return "jinja2.runtime.Macro object"
	case *loopCtx:
		return "jinja2.runtime.LoopContext object"
	}
	return typeName(v) + " object"
}
