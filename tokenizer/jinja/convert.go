package jinja

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"
)

// Conversion between the caller's Go values and template values.

// maxConvertDepth bounds the nesting of converted Go values, against cycles.
const maxConvertDepth = 200

// fromGo converts a caller's Go value to a template value: maps become
// Dicts (map[string]any with sorted keys: Go maps have no order; pass a
// *Dict or JSON to keep one), slices lists, integers int64, and anything
// else (structs, typed slices) goes through encoding/json, keeping struct
// field order. Strings that are not UTF-8 get U+FFFD for each bad byte.
func fromGo(v any, depth int) (any, error) {
	if depth > maxConvertDepth {
		return nil, fmt.Errorf("the value nests more than %d deep", maxConvertDepth)
	}
	switch v := v.(type) {
	case nil, bool, int64, float64, *Dict, Func:
		return v, nil
	case func([]any, map[string]any) (any, error):
		return Func(v), nil
	case string:
		return strings.ToValidUTF8(v, "\uFFFD"), nil
	case int:
		return int64(v), nil
	case int8:
		return int64(v), nil
	case int16:
		return int64(v), nil
	case int32:
		return int64(v), nil
	case uint8:
		return int64(v), nil
	case uint16:
		return int64(v), nil
	case uint32:
		return int64(v), nil
	case uint:
		if uint64(v) > math.MaxInt64 {
			return nil, fmt.Errorf("the integer %d does not fit in 64 bits", v)
		}
		return int64(v), nil
	case uint64:
		if v > math.MaxInt64 {
			return nil, fmt.Errorf("the integer %d does not fit in 64 bits", v)
		}
		return int64(v), nil
	case float32:
		return float64(v), nil
	case json.Number:
		return numberFromJSON(string(v))
	case json.RawMessage:
		return DecodeJSON(v)
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			cx, err := fromGo(x, depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = cx
		}
		return out, nil
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		d := NewDict()
		for _, k := range keys {
			cx, err := fromGo(v[k], depth+1)
			if err != nil {
				return nil, err
			}
			d.set(strings.ToValidUTF8(k, "\uFFFD"), cx)
		}
		return d, nil
	case []string:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = strings.ToValidUTF8(x, "\uFFFD")
		}
		return out, nil
	case []map[string]any:
		out := make([]any, len(v))
		for i, x := range v {
			cx, err := fromGo(x, depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = cx
		}
		return out, nil
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Func, reflect.Chan, reflect.UnsafePointer, reflect.Complex64, reflect.Complex128:
		return nil, fmt.Errorf("a Go %T cannot be a template value", v)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("converting a Go %T: %w", v, err)
	}
	return DecodeJSON(b)
}

// toGo converts a template value for a caller's Func: tuples and
// iterators become []any.
func toGo(v any) any {
	switch v := v.(type) {
	case tuple:
		return []any(v)
	case markup:
		return string(v)
	case *iterator:
		items, _ := v.rest()
		return append([]any(nil), items...)
	case *view:
		return append([]any(nil), v.items...)
	case *rangeVal:
		return v.items()
	}
	return v
}
