package jinja

import "errors"

// loopCtx is the "loop" variable of a for loop.
type loopCtx struct {
	items   []any
	length  int
	index0  int
	changed []any // the last arguments of loop.changed
	called  bool  // loop.changed was called
}

// attr returns loop.<name>.
func (l *loopCtx) attr(name string) any {
	switch name {
	case "index0":
		return int64(l.index0)
	case "index":
		return int64(l.index0 + 1)
	case "revindex":
		return int64(l.length - l.index0)
	case "revindex0":
		return int64(l.length - l.index0 - 1)
	case "first":
		return l.index0 == 0
	case "last":
		return l.index0 == l.length-1
	case "length":
		return int64(l.length)
	case "depth":
		return int64(1)
	case "depth0":
		return int64(0)
	case "previtem":
		if l.index0 == 0 {
			return &undefined{hint: "there is no previous item"}
		}
		return l.items[l.index0-1]
	case "nextitem":
		if l.index0+1 >= l.length {
			return &undefined{hint: "there is no next item"}
		}
		return l.items[l.index0+1]
	case "cycle", "changed":
		return &method{recv: l, name: name}
	}
	return missingAttr(l, name)
}

// call runs loop.cycle(...) and loop.changed(...).
func (l *loopCtx) call(name string, args []any) (any, error) {
	if name == "cycle" {
		if len(args) == 0 {
			return nil, errors.New("no items for cycling given")
		}
		return args[l.index0%len(args)], nil
	}
	if l.called && seqEq(l.changed, args) {
		return false, nil
	}
	l.called, l.changed = true, args
	return true, nil
}
