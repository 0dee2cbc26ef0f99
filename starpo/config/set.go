package config

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Values are checked against the Config struct before yaml decodes them,
// because yaml.v3 is lenient where a run must not be: it truncates 7.9 to
// an integer field's 7, and its errors name lines of whatever text it was
// given. checkNode walks a YAML value beside the type it will fill and
// names the dotted key at fault.

// nodeError is a value that does not fit its key.
type nodeError struct {
	line     int    // of the value in its text
	key      string // dotted, "" for the top level
	msg      string // the sentence after the key
	mismatch bool   // the value is of the wrong kind (not an unknown key)
}

func (e *nodeError) Error() string {
	if e.key == "" {
		return e.msg
	}
	return e.key + " " + e.msg
}

// checkNode checks n against t: known keys, sections given as mappings,
// lists as sequences, and numbers, strings and booleans of the right kind
// (an integer field takes an integral number only). A null leaves a value
// as it is in a file and is not checked here.
func checkNode(n *yaml.Node, t reflect.Type, key string) *nodeError {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return nil
		}
		return checkNode(n.Content[0], t, key)
	}
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		return nil
	}
	bad := func() *nodeError {
		if key == "" {
			return &nodeError{line: n.Line, msg: "a config is a mapping of keys, not " + shown(n), mismatch: true}
		}
		return &nodeError{line: n.Line, key: key, msg: "is " + describe(t) + ", not " + shown(n), mismatch: true}
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return bad()
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Value == "<<" { // a YAML merge: yaml.v3 checks it when decoding
				continue
			}
			f, ok := fieldByTag(t, k.Value)
			if !ok {
				if key == "" {
					return &nodeError{line: k.Line, msg: fmt.Sprintf("unknown key %q", k.Value)}
				}
				return &nodeError{line: k.Line, key: key, msg: fmt.Sprintf("has no key %q", k.Value)}
			}
			if err := checkNode(v, f.Type, join(key, k.Value)); err != nil {
				return err
			}
		}
	case reflect.Map: // custom_envs: names of the caller's choosing, each value checked
		if n.Kind != yaml.MappingNode {
			return bad()
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode {
				return &nodeError{line: k.Line, key: key, msg: "has a key that is not a name", mismatch: true}
			}
			if err := checkNode(v, t.Elem(), join(key, k.Value)); err != nil {
				return err
			}
		}
	case reflect.Pointer: // an optional value: set, or left to a default
		return checkNode(n, t.Elem(), key)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return bad()
		}
		for i, e := range n.Content {
			if err := checkNode(e, t.Elem(), fmt.Sprintf("%s[%d]", key, i)); err != nil {
				return err
			}
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if n.Kind != yaml.ScalarNode || !isInteger(n, t.Kind() >= reflect.Uint) {
			return bad()
		}
	case reflect.Float32, reflect.Float64:
		if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!int" && n.ShortTag() != "!!float") {
			return bad()
		}
	case reflect.Bool:
		var b bool
		if n.Kind != yaml.ScalarNode || n.Decode(&b) != nil {
			return bad()
		}
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			return bad()
		}
	}
	return nil
}

// isInteger says whether a scalar is an integer: an !!int, or an !!float
// with an integral value in int64's range (1e3); non-negative for an
// unsigned field.
func isInteger(n *yaml.Node, unsigned bool) bool {
	var f float64
	switch n.ShortTag() {
	case "!!int":
		if !unsigned {
			return true
		}
		var i int64
		if n.Decode(&i) == nil {
			return i >= 0
		}
		return true // a uint64 beyond int64: yaml decodes it
	case "!!float":
		if n.Decode(&f) != nil {
			return false
		}
	default:
		return false
	}
	if f != math.Trunc(f) || math.Abs(f) >= 1<<63 {
		return false
	}
	return !unsigned || f >= 0
}

// describe names what a field of type t holds.
func describe(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "a section"
	case reflect.Pointer:
		return describe(t.Elem())
	case reflect.Slice:
		return "a list of " + strings.TrimPrefix(strings.TrimPrefix(describe(t.Elem()), "a "), "an ") + "s"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a non-negative integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "a boolean"
	}
	return "a string"
}

// shown is a value as an error message quotes it.
func shown(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 || n.ShortTag() == "!!str" {
		return fmt.Sprintf("%q", n.Value)
	}
	return n.Value
}

// fieldByTag finds the field of struct t whose yaml name is name.
func fieldByTag(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); tag == name && f.IsExported() {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func join(key, k string) string {
	if key == "" {
		return k
	}
	return key + "." + k
}

// decodeFile decodes a preset over c, strictly.
func decodeFile(data []byte, c *Config) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return cleanYAML(err)
	}
	if len(doc.Content) == 0 {
		return nil // an empty file: the defaults
	}
	if err := checkNode(&doc, reflect.TypeOf(*c), ""); err != nil {
		return fmt.Errorf("line %d: %w", err.line, err)
	}
	if err := doc.Decode(c); err != nil {
		return cleanYAML(err)
	}
	return nil
}

// set applies one --set key=value to c. Its errors name the argument.
func (c *Config) set(arg string) error {
	fail := func(format string, a ...any) error {
		return fmt.Errorf("--set %s: %s", arg, fmt.Sprintf(format, a...))
	}
	key, val, ok := strings.Cut(arg, "=")
	if !ok || key == "" {
		return fmt.Errorf("--set %q is not key=value", arg)
	}
	keys := strings.Split(key, ".")
	v := reflect.ValueOf(c).Elem()
	var stores []func() // map entries, written back once the value is in
	for i, k := range keys {
		if v.Kind() == reflect.Map { // custom_envs.<tag>: a copy of the entry, or a new one
			if v.IsNil() {
				v.Set(reflect.MakeMap(v.Type()))
			}
			m, name, entry := v, reflect.ValueOf(k), reflect.New(v.Type().Elem()).Elem()
			if old := m.MapIndex(name); old.IsValid() {
				entry.Set(old)
			}
			stores = append(stores, func() { m.SetMapIndex(name, entry) })
			v = entry
			continue
		}
		if v.Kind() != reflect.Struct {
			return fail("%s is not a section", strings.Join(keys[:i], "."))
		}
		f, ok := fieldByTag(v.Type(), k)
		if !ok {
			if i == 0 {
				return fail("unknown key %q", k)
			}
			return fail("%s has no key %q", strings.Join(keys[:i], "."), k)
		}
		v = v.FieldByIndex(f.Index)
	}
	if v.Kind() == reflect.Pointer { // a fresh value: the old one may be shared by a copied entry
		v.Set(reflect.New(v.Type().Elem()))
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(val), &doc); err != nil {
		return fail("the value is not valid YAML (%v)", cleanYAML(err))
	}
	if len(doc.Content) == 0 { // nothing, or only a comment
		hint := ""
		if v.Kind() == reflect.String {
			hint = fmt.Sprintf(` (an empty string is written %s="")`, key)
		}
		return fail("the value is empty; %s is %s%s", key, describe(v.Type()), hint)
	}
	n := doc.Content[0]
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		return fail("%s is %s, not null", key, describe(v.Type()))
	}
	if err := checkNode(n, v.Type(), key); err != nil {
		if err.mismatch && err.key == key { // the value as a whole: the argument shows it
			return fail("%s is %s", key, describe(v.Type()))
		}
		return fail("%v", err)
	}
	if err := n.Decode(v.Addr().Interface()); err != nil {
		return fail("%v", cleanYAML(err))
	}
	for _, store := range slices.Backward(stores) {
		store()
	}
	return nil
}

// cleanYAML turns yaml.v3's error, which may span lines ("yaml: unmarshal
// errors:\n  line 1: ..."), into its first message on one line.
func cleanYAML(err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		return errors.New(te.Errors[0])
	}
	return errors.New(strings.TrimPrefix(err.Error(), "yaml: "))
}

// blame prefixes a validation error with the last --set argument whose key
// it names (or a section holding that key), so a bad override is named as
// given; an error no argument touches is returned as it is.
func blame(err error, sets []string) error {
	msg := err.Error()
	for i := len(sets) - 1; i >= 0; i-- {
		k, _, _ := strings.Cut(sets[i], "=")
		if mentions(msg, k) {
			return fmt.Errorf("--set %s: %w", sets[i], err)
		}
	}
	return err
}

// mentions says whether msg names key as a whole dotted key, or a key
// inside it (key "train" is in "train.n_groups").
func mentions(msg, key string) bool {
	for i := 0; ; {
		j := strings.Index(msg[i:], key)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(key)
		before := start == 0 || msg[start-1] == ' ' || msg[start-1] == '('
		r, _ := utf8.DecodeRuneInString(msg[end:])
		after := end == len(msg) || !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_')
		if before && after {
			return true
		}
		i = start + 1
	}
}
