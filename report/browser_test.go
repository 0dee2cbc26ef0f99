package report

import (
	"context"
	"encoding/json"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// browserTimeout bounds each headless-browser command.
const browserTimeout = 60 * time.Second

// testResult is what testdata/testhook.js writes into <pre id="test-result">.
type testResult struct {
	Step    string   `json:"step"`
	Group   string   `json:"group"`
	Members int      `json:"members"`
	Text    string   `json:"text"`
	Charts  int      `json:"charts"`
	Curves  int      `json:"curves"`
	Errors  []string `json:"errors"`
}

// TestBrowserRendersReport opens the fixture's page in headless Chromium
// with the #test hook, which switches to val step 0, group 1 and reports
// what the trajectory panel shows; then takes a screenshot.
func TestBrowserRendersReport(t *testing.T) {
	browser := findBrowser(t)
	path, err := Write(writeFixture(t))
	if err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(withTestHook(t, path))
	if err != nil {
		t.Fatal(err)
	}
	url := "file://" + filepath.ToSlash(abs) + "#test"

	dom := runBrowser(t, browser, "--dump-dom", "--virtual-time-budget=5000", url)
	r := parseResult(t, dom)
	if len(r.Errors) > 0 {
		t.Fatalf("JavaScript errors on the page: %q", r.Errors)
	}
	if r.Step != "val step 0" || !strings.HasPrefix(r.Group, "group 1 · SimpleSokoban · seed 12") {
		t.Errorf("hook selected %q / %q; want val step 0, group 1", r.Step, r.Group)
	}
	if r.Members != 2 {
		t.Errorf("%d .member elements, want 2", r.Members)
	}
	for _, want := range []string{winThink, "success", "fail", "Down", "######\n#_P__#", "I give up, no tags here", "reward 10.9"} {
		if !strings.Contains(r.Text, want) {
			t.Errorf("trajectory panel does not show %q; it shows:\n%s", want, r.Text)
		}
	}
	if strings.Contains(r.Text, "You're a helpful assistant.") {
		t.Error("the system prompt is visible; it should be collapsed")
	}
	if want := len(chartsFor([]*Run{mustLoad(t, filepath.Dir(path))})); r.Charts != want || r.Curves < 10 {
		t.Errorf("%d charts drawn with %d curves; want %d charts and at least 10 curves", r.Charts, r.Curves, want)
	}

	shot := filepath.Join(t.TempDir(), "report.png")
	runBrowser(t, browser, "--screenshot="+shot, "--window-size=1280,2000", "--virtual-time-budget=5000", url)
	st, err := os.Stat(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	if st.Size() < 10_000 {
		t.Errorf("screenshot %s is %d bytes; a rendered page is well over 10 kB", shot, st.Size())
	}
	if dir := os.Getenv("RAGEN_ARTIFACTS"); dir != "" {
		copyFile(t, shot, filepath.Join(dir, "report.png"))
		copyFile(t, path, filepath.Join(dir, "report.html"))
	}
}

// withTestHook writes a copy of the page at path with testdata/testhook.js
// as the last script of its body and a rule that hides the hook's result
// (reports ship neither), and returns the copy's path.
func withTestHook(t *testing.T, path string) string {
	t.Helper()
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	hook, err := os.ReadFile(filepath.Join("testdata", "testhook.js"))
	if err != nil {
		t.Fatal(err)
	}
	i := strings.LastIndex(string(page), "</body>")
	if i < 0 {
		t.Fatalf("%s has no </body>", path)
	}
	hooked := string(page[:i]) + "<style>#test-result { display: none; }</style>\n" +
		"<script>" + string(hook) + "</script>\n" + string(page[i:])
	out := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(out, []byte(hooked), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// findBrowser is a Chromium on PATH; without one the test fails, unless
// RAGEN_SKIP_BROWSER=1.
func findBrowser(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("RAGEN_SKIP_BROWSER") == "1" {
		t.Skip("no Chromium on PATH and RAGEN_SKIP_BROWSER=1")
	}
	t.Fatal("no chromium, chromium-browser or google-chrome on PATH: install Debian's chromium package " +
		"(apt-get install --no-install-recommends chromium), or set RAGEN_SKIP_BROWSER=1 to skip this test")
	return ""
}

// runBrowser runs headless Chromium with its own profile and returns stdout.
func runBrowser(t *testing.T, browser string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), browserTimeout)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
		"--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(ctx, browser, append(base, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if ctx.Err() != nil {
		t.Fatalf("%s %v: timed out after %v; stderr:\n%s", browser, args, browserTimeout, stderr.String())
	}
	if err != nil {
		t.Fatalf("%s %v: %v; stderr:\n%s", browser, args, err, stderr.String())
	}
	return string(out)
}

var resultRe = regexp.MustCompile(`(?s)<pre id="test-result">(.*?)</pre>`)

// parseResult finds the hook's JSON in a dumped DOM.
func parseResult(t *testing.T, dom string) testResult {
	t.Helper()
	all := resultRe.FindAllStringSubmatch(dom, -1)
	if all == nil {
		t.Fatalf("the dumped DOM has no <pre id=\"test-result\">: the test hook did not run. DOM starts:\n%.2000s", dom)
	}
	m := all[len(all)-1] // the hook appends it last in <body>
	var r testResult
	if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &r); err != nil {
		t.Fatalf("test result %q: %v", m[1], err)
	}
	return r
}

func mustLoad(t *testing.T, dir string) *Run {
	t.Helper()
	r, err := LoadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
