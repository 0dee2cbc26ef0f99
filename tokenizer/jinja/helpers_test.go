package jinja

import (
	"strings"
	"testing"
	"time"
)

// renderCase is a template, its variables as a JSON object, and what
// transformers' environment renders: want, or an error (err is a
// substring of the error message, and Jinja fails too). Every table of
// renderCases is checked against real jinja2 by TestCasesMatchJinja.
type renderCase struct {
	name string
	src  string
	vars string
	want string
	err  string
}

// testNow is the clock of strftime_now in tests.
var testNow = time.Date(2024, 9, 5, 13, 4, 5, 0, time.UTC)

// render parses and renders src with vars given as a JSON object.
func render(t testing.TB, src, vars string) (string, error) {
	t.Helper()
	tmpl, err := Parse("test", src)
	if err != nil {
		return "", err
	}
	m := map[string]any{}
	if vars != "" {
		v, err := DecodeJSON([]byte(vars))
		if err != nil {
			t.Fatalf("vars %s: %v", vars, err)
		}
		d := v.(*Dict)
		for i, k := range d.keys {
			m[k.(string)] = d.vals[i]
		}
	}
	return tmpl.RenderOptions(m, Options{Now: func() time.Time { return testNow }})
}

// runCases checks each case's output or error.
func runCases(t *testing.T, cases []renderCase) {
	t.Helper()
	for _, c := range cases {
		got, err := render(t, c.src, c.vars)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: %s: unexpected error %v", c.name, c.src, err)
		case c.err == "" && got != c.want:
			t.Errorf("%s: %s\n got %q\nwant %q", c.name, c.src, got, c.want)
		case c.err != "" && err == nil:
			t.Errorf("%s: %s: rendered %q, want an error with %q", c.name, c.src, got, c.err)
		case c.err != "" && !strings.Contains(err.Error(), c.err):
			t.Errorf("%s: %s: error %q, want one with %q", c.name, c.src, err, c.err)
		}
	}
}
