package gguf

import "math"

// Get returns the value of key (one of KV.Value's Go types) and whether
// the file has it.
func (f *File) Get(key string) (any, bool) {
	i, ok := f.keys[key]
	if !ok {
		return nil, false
	}
	return f.Meta[i].Value, true
}

// Has reports whether the file has metadata key.
func (f *File) Has(key string) bool {
	_, ok := f.keys[key]
	return ok
}

// lookup is key's value, or an ErrNoKey error.
func (f *File) lookup(key string) (any, error) {
	v, ok := f.Get(key)
	if !ok {
		return nil, newError(f.Name, ErrNoKey, "no metadata key %s", show(key))
	}
	return v, nil
}

// wrongType is the error for key holding v where want was asked for.
func (f *File) wrongType(key string, v any, want string) error {
	return newError(f.Name, ErrType, "key %s holds %s, not %s", show(key), describe(v), want)
}

// String returns the string value of key.
func (f *File) String(key string) (string, error) {
	v, err := f.lookup(key)
	if err != nil {
		return "", err
	}
	s, ok := v.(string)
	if !ok {
		return "", f.wrongType(key, v, "a string")
	}
	return s, nil
}

// Bool returns the bool value of key.
func (f *File) Bool(key string) (bool, error) {
	v, err := f.lookup(key)
	if err != nil {
		return false, err
	}
	b, ok := v.(bool)
	if !ok {
		return false, f.wrongType(key, v, "a bool")
	}
	return b, nil
}

// Uint returns the value of key, which may have any integer type as long
// as it is not negative: writers differ on the width and signedness of
// counts (llama.cpp's converter writes uint32, others int32 or uint64).
func (f *File) Uint(key string) (uint64, error) {
	v, err := f.lookup(key)
	if err != nil {
		return 0, err
	}
	u, signed, ok := integer(v)
	if !ok || (signed && int64(u) < 0) {
		return 0, f.wrongType(key, v, "an unsigned integer")
	}
	return u, nil
}

// Int returns the value of key, which may have any integer type whose
// value fits an int64.
func (f *File) Int(key string) (int64, error) {
	v, err := f.lookup(key)
	if err != nil {
		return 0, err
	}
	u, signed, ok := integer(v)
	if !ok {
		return 0, f.wrongType(key, v, "an integer")
	}
	if !signed && u > math.MaxInt64 {
		return 0, newError(f.Name, ErrType, "key %s holds %s, which does not fit an int64", show(key), describe(v))
	}
	return int64(u), nil
}

// Float returns the value of key, a float32 (widened exactly) or a
// float64. Integers are refused: a float key holding one is a sign of a
// wrong key.
func (f *File) Float(key string) (float64, error) {
	v, err := f.lookup(key)
	if err != nil {
		return 0, err
	}
	switch x := v.(type) {
	case float32:
		return float64(x), nil
	case float64:
		return x, nil
	}
	return 0, f.wrongType(key, v, "a float")
}

// Strings returns the array of strings of key. The slice is the file's:
// do not modify it.
func (f *File) Strings(key string) ([]string, error) {
	v, err := f.lookup(key)
	if err != nil {
		return nil, err
	}
	s, ok := v.([]string)
	if !ok {
		return nil, f.wrongType(key, v, "an array of strings")
	}
	return s, nil
}

// Ints returns the array of key, of any integer element type, as int64s.
func (f *File) Ints(key string) ([]int64, error) {
	v, err := f.lookup(key)
	if err != nil {
		return nil, err
	}
	var out []int64
	ok := true
	switch a := v.(type) {
	case []uint8:
		out = widen(a)
	case []int8:
		out = widen(a)
	case []uint16:
		out = widen(a)
	case []int16:
		out = widen(a)
	case []uint32:
		out = widen(a)
	case []int32:
		out = widen(a)
	case []int64:
		out = append([]int64(nil), a...)
	case []uint64:
		for i, x := range a {
			if x > math.MaxInt64 {
				return nil, newError(f.Name, ErrType, "key %s holds %d at index %d, which does not fit an int64", show(key), x, i)
			}
		}
		out = widen(a)
	default:
		ok = false
	}
	if !ok {
		return nil, f.wrongType(key, v, "an array of integers")
	}
	return out, nil
}

// Floats returns the array of key, of float32 (widened exactly) or
// float64 elements, as float64s.
func (f *File) Floats(key string) ([]float64, error) {
	v, err := f.lookup(key)
	if err != nil {
		return nil, err
	}
	switch a := v.(type) {
	case []float32:
		out := make([]float64, len(a))
		for i, x := range a {
			out[i] = float64(x)
		}
		return out, nil
	case []float64:
		return append([]float64(nil), a...), nil
	}
	return nil, f.wrongType(key, v, "an array of floats")
}

// integer is v's bits as a uint64 if v is a Go integer of KV.Value, and
// whether it is signed (then int64(u) is its value).
func integer(v any) (u uint64, signed, ok bool) {
	switch x := v.(type) {
	case uint8:
		return uint64(x), false, true
	case uint16:
		return uint64(x), false, true
	case uint32:
		return uint64(x), false, true
	case uint64:
		return x, false, true
	case int8:
		return uint64(int64(x)), true, true
	case int16:
		return uint64(int64(x)), true, true
	case int32:
		return uint64(int64(x)), true, true
	case int64:
		return uint64(x), true, true
	}
	return 0, false, false
}

// widen converts integers to int64 (callers have checked they fit).
func widen[T uint8 | int8 | uint16 | int16 | uint32 | int32 | uint64](a []T) []int64 {
	out := make([]int64, len(a))
	for i, x := range a {
		out[i] = int64(x)
	}
	return out
}
