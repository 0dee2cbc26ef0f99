package jinja

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// allCases are the tables whose expectations come from jinja2.
func allCases() map[string][]renderCase {
	return map[string][]renderCase{
		"whitespace": whitespaceCases, "expr": exprCases, "tests": testCases,
		"filters": filterCases, "tojson": tojsonCases, "statements": stmtCases,
		"methods": methodCases, "runtime errors": runtimeErrorCases, "scoping": scopingCases, "formatting": formatCases,
	}
}

// refOutcome is chat_template_ref.py's answer for one render.
type refOutcome struct {
	Text  *string `json:"text"`
	Error string  `json:"error"`
	Type  string  `json:"type"`
}

// reference renders the request with transformers and jinja2 through
// scripts/parity/chat_template_ref.py, skipping the test unless
// RAGEN_PARITY_PYTHON names the parity interpreter.
func reference(t *testing.T, req any) (conversations, cases []refOutcome) {
	t.Helper()
	py := os.Getenv("RAGEN_PARITY_PYTHON")
	if py == "" {
		t.Skip("set RAGEN_PARITY_PYTHON to check against jinja2 and transformers")
	}
	in, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, filepath.Join("..", "..", "scripts", "parity", "chat_template_ref.py"))
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chat_template_ref.py: %v\n%s", err, stderr.Bytes())
	}
	var resp struct{ Conversations, Cases []refOutcome }
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatalf("chat_template_ref.py: %v", err)
	}
	return resp.Conversations, resp.Cases
}

// TestCasesMatchJinja checks the expectations of every table against
// jinja2 in transformers' environment, with the same frozen clock: an
// expected text must be jinja2's, an expected error must be one jinja2
// raises too, with the same message where the table quotes Jinja's.
func TestCasesMatchJinja(t *testing.T) {
	type refCase struct {
		Template string          `json:"template"`
		Vars     json.RawMessage `json:"vars,omitempty"`
	}
	var reqs []refCase
	var all []renderCase
	for _, table := range allCases() {
		for _, c := range table {
			var vars json.RawMessage
			if c.vars != "" {
				vars = json.RawMessage(c.vars)
			}
			reqs = append(reqs, refCase{c.src, vars})
			all = append(all, c)
		}
	}
	_, outs := reference(t, map[string]any{"cases": reqs, "now": testNow.Format("2006-01-02T15:04:05")})
	for i, c := range all {
		o := outs[i]
		switch {
		case c.err == "" && o.Text == nil:
			t.Errorf("%s: %s: jinja2 raises %s: %s", c.name, c.src, o.Type, o.Error)
		case c.err == "" && *o.Text != c.want:
			t.Errorf("%s: %s\njinja2 %q\n want %q", c.name, c.src, *o.Text, c.want)
		case c.err != "" && o.Text != nil:
			t.Errorf("%s: %s: jinja2 renders %q, the table expects an error", c.name, c.src, *o.Text)
		case c.err != "" && !strings.Contains(o.Error, jinjaPart(c.err)):
			t.Errorf("%s: %s: jinja2 raises %s(%q), the table expects %q", c.name, c.src, o.Type, o.Error, c.err)
		}
	}
	t.Logf("%d cases checked against jinja2", len(all))
}

// jinjaPart drops this package's "chat template NAME: line N: " prefix
// from an expected error, leaving Jinja's message.
func jinjaPart(msg string) string {
	if strings.HasPrefix(msg, "chat template ") || strings.HasPrefix(msg, "line ") {
		if _, rest, ok := strings.Cut(msg, ": line "); ok {
			msg = rest
		}
		if _, rest, ok := strings.Cut(msg, ": "); ok {
			msg = rest
		}
	}
	return msg
}

// TestRandomTemplatesMatchJinja renders random templates of the subset
// (gen_test.go) with jinja2 and with this package: the texts must be
// equal, and where jinja2 raises, this package must fail too.
func TestRandomTemplatesMatchJinja(t *testing.T) {
	if os.Getenv("RAGEN_PARITY_PYTHON") == "" {
		t.Skip("set RAGEN_PARITY_PYTHON to check against jinja2 and transformers")
	}
	g := &templateGen{r: rand.New(rand.NewPCG(1, 2))}
	type refCase struct {
		Template string          `json:"template"`
		Vars     json.RawMessage `json:"vars"`
	}
	n := 5000
	if testing.Short() {
		n = 300
	}
	var reqs []refCase
	for range n {
		reqs = append(reqs, refCase{g.template(), json.RawMessage(genVars)})
	}
	_, outs := reference(t, map[string]any{"cases": reqs})
	failed, bad := 0, 0
	kinds := map[string]int{} // jinja2's exception classes
	for i, c := range reqs {
		o := outs[i]
		got, err := render(t, c.Template, genVars)
		switch {
		case o.Text != nil && err != nil:
			t.Errorf("%q: jinja2 renders %q, this package fails: %v", c.Template, *o.Text, err)
		case o.Text != nil && got != *o.Text:
			t.Errorf("%q:\n got %q\nwant %q", c.Template, got, *o.Text)
		case o.Text == nil && err == nil:
			t.Errorf("%q: jinja2 raises %s(%q), this package renders %q", c.Template, o.Type, o.Error, got)
		case o.Text == nil:
			failed++
			kinds[o.Type]++
			// Syntax errors are this package's own sentences.
			if o.Type != "TemplateSyntaxError" && !strings.Contains(err.Error(), o.Error) {
				bad++
				t.Logf("%q: messages differ: jinja2 %s(%q), this package %v", c.Template, o.Type, o.Error, err)
			}
		}
	}
	t.Logf("%d random templates, %d failing on both sides %v, %d runtime errors with other messages", len(reqs), failed, kinds, bad)
}
