package jinja

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Method names per type, as transformers' ImmutableSandboxedEnvironment
// sees them: safe ones become bound methods, those that mutate a list or
// dict are "unsafe" (an undefined value that fails with a SecurityError
// when used).
var (
	strMethods = set("capitalize", "casefold", "center", "count", "encode",
		"endswith", "expandtabs", "find", "format", "format_map", "index",
		"isalnum", "isalpha", "isascii", "isdecimal", "isdigit",
		"isidentifier", "islower", "isnumeric", "isprintable", "isspace",
		"istitle", "isupper", "join", "ljust", "lower", "lstrip", "maketrans",
		"partition", "removeprefix", "removesuffix", "replace", "rfind",
		"rindex", "rjust", "rpartition", "rsplit", "rstrip", "split",
		"splitlines", "startswith", "strip", "swapcase", "title", "translate",
		"upper", "zfill")
	dictMethods   = set("copy", "fromkeys", "get", "items", "keys", "values")
	dictUnsafe    = set("clear", "pop", "popitem", "setdefault", "update")
	listMethods   = set("copy", "count", "index")
	listUnsafe    = set("append", "clear", "extend", "insert", "pop", "remove", "reverse", "sort")
	tupleMethods  = set("count", "index")
	markupMethods = set("escape", "striptags", "unescape")
)

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// method is a method bound to its receiver, as obj.name evaluates.
type method struct {
	recv any
	name string
}

// unsafeAttr is the sandbox's answer to a mutating method.
func unsafeAttr(obj any, name string) *undefined {
	return &undefined{
		hint:     fmt.Sprintf("access to attribute %s of %s object is unsafe.", pyRepr(name), pyRepr(typeName(obj))),
		name:     name,
		obj:      obj,
		hasObj:   true,
		security: true,
	}
}

// pyAttr is Python's getattr(obj, name) for the attributes templates may
// use; ok is false when Python would raise AttributeError.
func pyAttr(obj any, name string) (v any, ok bool) {
	var safe, unsafe map[string]bool
	switch o := obj.(type) {
	case string:
		safe = strMethods
	case markup:
		if markupMethods[name] {
			return &method{recv: o, name: name}, true
		}
		safe = strMethods
	case *Dict:
		safe, unsafe = dictMethods, dictUnsafe
	case []any:
		safe, unsafe = listMethods, listUnsafe
	case tuple:
		safe = tupleMethods
	case *namespace:
		return o.attrs.Get(name)
	case *loopCtx:
		v := o.attr(name)
		_, missing := v.(*undefined)
		return v, !missing || name == "previtem" || name == "nextitem"
	}
	switch {
	case safe[name]:
		return &method{recv: obj, name: name}, true
	case unsafe[name]:
		return unsafeAttr(obj, name), true
	}
	return nil, false
}

// getattr is obj.name in the sandbox: the attribute if Python has one,
// else the item obj["name"], else undefined.
func getattr(obj any, name string) (any, error) {
	if u, ok := obj.(*undefined); ok {
		return nil, u.err()
	}
	if v, ok := pyAttr(obj, name); ok {
		return v, nil
	}
	if v, ok := pyItem(obj, name); ok {
		return v, nil
	}
	return missingAttr(obj, name), nil
}

// getitem is obj[key] in the sandbox: the item if there is one, else for a
// string key the attribute, else undefined.
func getitem(obj, key any) (any, error) {
	if u, ok := obj.(*undefined); ok {
		return nil, u.err()
	}
	if k, ok := key.(*sliceKey); ok {
		return slice(obj, k)
	}
	if v, ok := pyItem(obj, key); ok {
		return v, nil
	}
	if name, ok := key.(string); ok {
		if v, ok := pyAttr(obj, name); ok {
			return v, nil
		}
	}
	return missingAttr(obj, key), nil
}

// pyItem is Python's obj[key]; ok is false where Python raises a
// LookupError or TypeError.
func pyItem(obj, key any) (any, bool) {
	switch o := obj.(type) {
	case *Dict:
		return o.Get(key)
	case []any:
		return index(o, key)
	case tuple:
		return index(o, key)
	case string:
		return strIndex(o, key)
	case markup:
		v, ok := strIndex(string(o), key)
		if ok {
			return markup(v.(string)), true
		}
	case *rangeVal:
		return index(o.items(), key)
	}
	return nil, false
}

func index(items []any, key any) (any, bool) {
	i, _, isInt, ok := number(key)
	if !ok || !isInt {
		return nil, false
	}
	if i < 0 {
		i += int64(len(items))
	}
	if i < 0 || i >= int64(len(items)) {
		return nil, false
	}
	return items[i], true
}

func strIndex(s string, key any) (any, bool) {
	i, _, isInt, ok := number(key)
	if !ok || !isInt {
		return nil, false
	}
	n := int64(utf8.RuneCountInString(s))
	if i < 0 {
		i += n
	}
	if i < 0 || i >= n {
		return nil, false
	}
	for j, r := range []rune(s) {
		if int64(j) == i {
			return string(r), true
		}
	}
	return nil, false
}

// errSliceIndex is Python's error for slice bounds that are not ints.
var errSliceIndex = errors.New("slice indices must be integers or None or have an __index__ method")

// slice is obj[start:stop:step] with Python's clamping and negative steps.
// Jinja compiles slices to Python's subscript, not the sandbox's getitem,
// so what cannot be sliced is an error, not undefined.
func slice(obj any, k *sliceKey) (any, error) {
	var n int
	switch o := obj.(type) {
	case []any:
		n = len(o)
	case tuple:
		n = len(o)
	case string:
		n = utf8.RuneCountInString(o)
	case markup:
		n = utf8.RuneCountInString(string(o))
	case *rangeVal:
		n = int(o.len())
	case *Dict:
		return nil, errors.New("unhashable type: 'slice'")
	case *undefined:
		return nil, o.err()
	default:
		return nil, fmt.Errorf("'%s' object is not subscriptable", typeName(obj))
	}
	if r, ok := obj.(*rangeVal); ok {
		return sliceRange(r, k)
	}
	idx, err := sliceIndices(k, n)
	if err != nil {
		return nil, err
	}
	pick := func(items []any) []any {
		out := make([]any, len(idx))
		for i, j := range idx {
			out[i] = items[j]
		}
		return out
	}
	switch o := obj.(type) {
	case []any:
		return pick(o), nil
	case tuple:
		return tuple(pick(o)), nil
	}
	s, _ := asString(obj)
	runes := []rune(s)
	var b strings.Builder
	for _, j := range idx {
		b.WriteRune(runes[j])
	}
	if _, ok := obj.(markup); ok {
		return markup(b.String()), nil
	}
	return b.String(), nil
}

// sliceRange is a slice of a range, itself a range, computed as Python
// does from the clamped bounds.
func sliceRange(r *rangeVal, k *sliceKey) (*rangeVal, error) {
	start, stop, step, err := sliceBounds(k, int(r.len()))
	if err != nil {
		return nil, err
	}
	return &rangeVal{start: r.start + int64(start)*r.step, stop: r.start + int64(stop)*r.step, step: r.step * int64(step)}, nil
}

// sliceIndices are the indices a slice selects from a sequence of n.
func sliceIndices(k *sliceKey, n int) ([]int, error) {
	start, stop, step, err := sliceBounds(k, n)
	if err != nil {
		return nil, err
	}
	var idx []int
	for i := start; step > 0 && i < stop || step < 0 && i > stop; i += step {
		idx = append(idx, i)
	}
	return idx, nil
}

// sliceBounds clamps a slice to a sequence of n as Python's
// PySlice_AdjustIndices does.
func sliceBounds(k *sliceKey, n int) (start, stop, step int, err error) {
	get := func(v any, def int) (int, error) {
		if v == nil {
			return def, nil
		}
		i, _, isInt, ok := number(v)
		if !ok || !isInt {
			return 0, errSliceIndex
		}
		return int(max(min(i, 1<<40), -1<<40)), nil
	}
	if step, err = get(k.step, 1); err != nil {
		return
	}
	if step == 0 {
		return 0, 0, 0, errors.New("slice step cannot be zero")
	}
	lo, hi := 0, n
	if step < 0 {
		lo, hi = -1, n-1
	}
	clamp := func(v any, def int) (int, error) {
		if v == nil {
			return def, nil
		}
		i, err := get(v, 0)
		if i < 0 {
			i += n
		}
		return max(lo, min(i, hi)), err
	}
	if start, err = clamp(k.start, map[bool]int{true: hi, false: lo}[step < 0]); err != nil {
		return
	}
	stop, err = clamp(k.stop, map[bool]int{true: lo, false: hi}[step < 0])
	return
}
