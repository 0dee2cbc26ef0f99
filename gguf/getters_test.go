package gguf

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"testing"
)

// metaFile is a parsed file holding everyValue's metadata.
func metaFile(t *testing.T) *File {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, everyValue(), nil); err != nil {
		t.Fatal(err)
	}
	f, err := Parse(buf.Bytes(), "meta.gguf")
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestGetters(t *testing.T) {
	f := metaFile(t)
	type result struct {
		got any
		err error
	}
	r := func(v any, err error) result { return result{v, err} }
	cases := []struct {
		name string
		res  result
		want any
	}{
		{"String", r(f.String("string")), "héllo, 世界"},
		{"Bool", r(f.Bool("bool")), true},
		{"Uint u8", r(f.Uint("u8")), uint64(255)},
		{"Uint u16", r(f.Uint("u16")), uint64(65535)},
		{"Uint u32", r(f.Uint("u32")), uint64(4294967295)},
		{"Uint u64", r(f.Uint("u64")), uint64(18446744073709551615)},
		{"Int i8", r(f.Int("i8")), int64(-128)},
		{"Int i16", r(f.Int("i16")), int64(-32768)},
		{"Int i32", r(f.Int("i32")), int64(-2147483648)},
		{"Int i64", r(f.Int("i64")), int64(-9223372036854775808)},
		{"Int u32", r(f.Int("u32")), int64(4294967295)},
		{"Float f32", r(f.Float("f32")), float64(float32(1e-5))},
		{"Float f64", r(f.Float("f64")), -5e-324},
		{"Strings", r(f.Strings("a.string")), []string{"", "a", "<|im_end|>"}},
		{"Ints u8", r(f.Ints("a.u8")), []int64{0, 1, 255}},
		{"Ints i8", r(f.Ints("a.i8")), []int64{-128, 127}},
		{"Ints u16", r(f.Ints("a.u16")), []int64{65535}},
		{"Ints i16", r(f.Ints("a.i16")), []int64{-32768, 1}},
		{"Ints u32", r(f.Ints("a.u32")), []int64{0, 4294967295}},
		{"Ints i32", r(f.Ints("a.i32")), []int64{-2147483648, 2147483647}},
		{"Ints i64", r(f.Ints("a.i64")), []int64{-9223372036854775808, 9223372036854775807}},
		{"Ints empty", r(f.Ints("a.empty")), []int64{}},
		{"Floats f32", r(f.Floats("a.f32")), []float64{0.5, math.Inf(-1)}},
		{"Floats f64", r(f.Floats("a.f64")), []float64{0.1, 1.7976931348623157e308}},
	}
	for _, c := range cases {
		if c.res.err != nil {
			t.Errorf("%s: %v", c.name, c.res.err)
			continue
		}
		var ok bool
		switch want := c.want.(type) {
		case []string:
			ok = slices.Equal(c.res.got.([]string), want)
		case []int64:
			ok = slices.Equal(c.res.got.([]int64), want)
		case []float64:
			ok = slices.Equal(c.res.got.([]float64), want)
		default:
			ok = c.res.got == c.want
		}
		if !ok {
			t.Errorf("%s = %v, want %v", c.name, c.res.got, c.want)
		}
	}
	if !f.Has("u8") || f.Has("nope") {
		t.Error("Has")
	}
	if v, ok := f.Get("i16"); !ok || v != int16(-32768) {
		t.Errorf("Get = %v, %v", v, ok)
	}
}

func TestGetterErrors(t *testing.T) {
	f := metaFile(t)
	errOf := func(_ any, err error) error { return err }
	cases := []struct {
		name string
		err  error
		kind error
		want string
	}{
		{"missing", errOf(f.String("nope")), ErrNoKey, "gguf meta.gguf: no metadata key nope"},
		{"String of int", errOf(f.String("u8")), ErrType, "gguf meta.gguf: key u8 holds uint8 255, not a string"},
		{"Bool of string", errOf(f.Bool("string")), ErrType, "gguf meta.gguf: key string holds string \"héllo, 世界\", not a bool"},
		{"Uint of negative", errOf(f.Uint("i8")), ErrType, "gguf meta.gguf: key i8 holds int8 -128, not an unsigned integer"},
		{"Uint of float", errOf(f.Uint("f32")), ErrType, "gguf meta.gguf: key f32 holds float32 1e-05, not an unsigned integer"},
		{"Int of huge", errOf(f.Int("u64")), ErrType, "gguf meta.gguf: key u64 holds uint64 18446744073709551615, which does not fit an int64"},
		{"Int of array", errOf(f.Int("a.i32")), ErrType, "gguf meta.gguf: key a.i32 holds a 2-element int32 array, not an integer"},
		{"Float of int", errOf(f.Float("u32")), ErrType, "gguf meta.gguf: key u32 holds uint32 4294967295, not a float"},
		{"Strings of ints", errOf(f.Strings("a.u8")), ErrType, "gguf meta.gguf: key a.u8 holds a 3-element uint8 array, not an array of strings"},
		{"Ints of huge", errOf(f.Ints("a.u64")), ErrType, "gguf meta.gguf: key a.u64 holds 18446744073709551615 at index 0, which does not fit an int64"},
		{"Ints of floats", errOf(f.Ints("a.f32")), ErrType, "gguf meta.gguf: key a.f32 holds a 2-element float32 array, not an array of integers"},
		{"Floats of scalar", errOf(f.Floats("f64")), ErrType, "gguf meta.gguf: key f64 holds float64 -5e-324, not an array of floats"},
		{"Floats missing", errOf(f.Floats("nope")), ErrNoKey, "gguf meta.gguf: no metadata key nope"},
	}
	for _, c := range cases {
		if c.err == nil || c.err.Error() != c.want || !errors.Is(c.err, c.kind) {
			t.Errorf("%s: got %v, want %q", c.name, c.err, c.want)
		}
	}
}
