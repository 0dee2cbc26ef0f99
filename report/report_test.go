package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestWritePageShape(t *testing.T) {
	dir := writeFixture(t)
	path, err := Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "report.html"); path != want {
		t.Errorf("path %s, want %s", path, want)
	}
	if _, err := os.Stat(path + ".partial"); !os.IsNotExist(err) {
		t.Errorf("%s.partial left behind (%v)", path, err)
	}
	page := read(t, path)
	for _, want := range []string{
		"<!DOCTYPE html>", `<script type="application/json" id="data">`, `<select id="step-select">`,
		`<select id="group-select">`, `<div id="trajectories">`, "<details class=\"config\">",
		"<h1>" + fixtureName + "</h1>", "Qwen2.5-0.5B-Instruct", "cuda:0",
		"<dt>steps done</dt><dd>6 of 6</dd>", "<dt>step time (median)</dt><dd>43.5 s</dd>",
		"<dt>generation (median)</dt><dd>13.5 tokens/s</dd>", "<dt>peak memory</dt><dd>1006 MB</dd>",
		"<li>step 4: echo_trap</li>", "# effective config\nname: sokoban-fixture",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	ids := regexp.MustCompile(`<figure class="chart" id="chart-([a-z-]+)"`).FindAllStringSubmatch(page, -1)
	var got []string
	for _, m := range ids {
		got = append(got, m[1])
	}
	want := []string{"val-success", "val-pass", "val-play", "reward", "entropy", "grad-norm", "response-length", "clipfrac", "kl", "value-loss"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("chart containers %v, want %v", got, want)
	}
	checkSelfContained(t, page)
}

// checkSelfContained fails on anything that would load from elsewhere.
func checkSelfContained(t *testing.T, page string) {
	t.Helper()
	for _, bad := range []string{"http://", "https://", "@import", "<link", "<iframe", "<img", " src="} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q: it must not reference external resources", bad)
		}
	}
	if n := strings.Count(page, "</script>"); n != 3 {
		t.Errorf("%d script end tags, want 3 (error trap, data, report.js): a message may have broken out", n)
	}
	if strings.Contains(page, "test-result") {
		t.Error("the page ships the browser test's hook")
	}
}

func TestWriteDataRoundTrip(t *testing.T) {
	dir := writeFixture(t)
	path, err := Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	raw := dataScript(t, read(t, path))
	if strings.Contains(raw, "</script") || !strings.Contains(raw, `<\/script>`) {
		t.Errorf("</script> inside the data is not escaped as <\\/script>")
	}
	var d pageData
	if err := json.Unmarshal([]byte(raw), &d); err != nil {
		t.Fatalf("embedded data does not parse: %v", err)
	}
	if len(d.Runs) != 1 || d.Runs[0].Name != fixtureName || len(d.Runs[0].Train) != 6 || len(d.Runs[0].Val) != 3 {
		t.Fatalf("runs %+v; want one run %s of 6 train and 3 val rows", d.Runs, fixtureName)
	}
	r := d.Runs[0]
	if got := r.Train[2]["critic/score/mean"]; got != 0.3 {
		t.Errorf("step 3 reward %v, want 0.3", got)
	}
	if _, ok := r.Train[0]["note"]; ok {
		t.Error("a text value reached the data")
	}
	if want := []warning{{Step: 4, Kinds: []string{"echo_trap"}}}; !reflect.DeepEqual(r.Warnings, want) {
		t.Errorf("warnings %+v, want %+v", r.Warnings, want)
	}
	if len(d.Files) != 2 || d.Files[0].Label != "val step 0" || d.Files[1].Label != "train step 3" {
		t.Fatalf("files %+v; want val step 0, train step 3", d.Files)
	}
	g := d.Files[0].Groups
	if len(g) != 2 || g[1].GroupID != 1 || g[1].Seed != 12 || len(g[1].Members) != 2 {
		t.Fatalf("val groups %+v", g)
	}
	win := g[1].Members[0]
	if !win.Success || win.EnvID != 2 || len(win.Turns) != 2 || win.Turns[1].Think != winThink {
		t.Errorf("member %+v; want env 2, success, think %q", win, winThink)
	}
	if a := win.Turns[1].Actions; !reflect.DeepEqual(a, []string{"Down", "Down"}) || *win.Turns[1].Reward != 10.9 {
		t.Errorf("turn 2 actions %v reward %v", a, *win.Turns[1].Reward)
	}
	if !strings.HasPrefix(win.Turns[0].State, "Turn 1:\nState:\n"+grid) || !strings.HasPrefix(d.Texts[win.Prompt], "You are solving") {
		t.Errorf("turn 1 state %q, prompt %q", win.Turns[0].State, d.Texts[win.Prompt])
	}
	if lost := g[1].Members[1]; lost.Turns[1].Raw != "I give up, no tags here" || lost.Turns[1].Actions != nil {
		t.Errorf("malformed response kept as %+v", lost.Turns[1])
	}
	if len(d.Texts) != 2 {
		t.Errorf("%d shared texts, want 2 (system prompt, instructions): %q", len(d.Texts), d.Texts)
	}
}

// dataScript is the text of the page's data element.
func dataScript(t *testing.T, page string) string {
	t.Helper()
	const open = `<script type="application/json" id="data">`
	i := strings.Index(page, open)
	if i < 0 {
		t.Fatal("no data script")
	}
	rest := page[i+len(open):]
	j := strings.Index(rest, "</script>")
	if j < 0 {
		t.Fatal("data script not closed")
	}
	return rest[:j]
}

func TestWriteTruncatesLongMessages(t *testing.T) {
	dir := writeFixture(t)
	long := traj(0, 0, 1, true, strings.Repeat("é", 50), "Up")
	writeTrajs(t, filepath.Join(dir, "trajectories", "train-step-000005.jsonl"), []Trajectory{long})
	path, err := WriteWith(dir, Options{MaxTrainFiles: -1, MaxMessageChars: 40})
	if err != nil {
		t.Fatal(err)
	}
	var d pageData
	if err := json.Unmarshal([]byte(dataScript(t, read(t, path))), &d); err != nil {
		t.Fatal(err)
	}
	last := d.Files[len(d.Files)-1]
	raw := last.Groups[0].Members[0].Turns[1].Raw
	if last.Label != "train step 5" || !strings.HasPrefix(raw, "<think>"+strings.Repeat("é", 33)+"\n… [truncated: 44 more characters]") {
		t.Errorf("file %s, truncated response %q", last.Label, raw)
	}
}

func TestWriteErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-run")
	if _, err := Write(missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing folder: %v; want an error naming %s", err, missing)
	}
	empty := t.TempDir()
	if _, err := Write(empty); err == nil || !strings.Contains(err.Error(), empty) || !strings.Contains(err.Error(), "no metrics.jsonl") {
		t.Errorf("folder without metrics: %v", err)
	}
	bad := writeFixture(t)
	write(t, filepath.Join(bad, "metrics.jsonl"), "{\"step\": 1}\n{oops\n{\"step\": 2}\n")
	if _, err := Write(bad); err == nil || !strings.Contains(err.Error(), "metrics.jsonl line 2") {
		t.Errorf("malformed middle line: %v; want it named", err)
	}
}

func TestCompare(t *testing.T) {
	a, b := writeFixture(t), writeFixture(t)
	write(t, filepath.Join(b, "config.yaml"), "name: \"other run\"\nsteps: 6\n")
	os.Remove(filepath.Join(b, "run.json"))
	os.RemoveAll(filepath.Join(b, "trajectories"))
	out := filepath.Join(t.TempDir(), "compare.html")
	if err := Compare([]string{a, b}, out); err != nil {
		t.Fatal(err)
	}
	page := read(t, out)
	var d pageData
	if err := json.Unmarshal([]byte(dataScript(t, page)), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Runs) != 2 || d.Runs[0].Name != fixtureName || d.Runs[1].Name != "other run" || len(d.Files) != 0 {
		t.Errorf("runs %+v, %d files; want %s and other run, no files", d.Runs, len(d.Files), fixtureName)
	}
	for _, want := range []string{"<h2>other run</h2>", "<h2>" + fixtureName + "</h2>", `id="chart-reward"`} {
		if !strings.Contains(page, want) {
			t.Errorf("comparison lacks %q", want)
		}
	}
	if strings.Contains(page, `id="step-select"`) {
		t.Error("comparison has a trajectory browser")
	}
	// The same name twice is told apart by folder.
	if err := Compare([]string{a, a}, out); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(dataScript(t, read(t, out))), &d); err != nil || d.Runs[0].Name != fixtureName+" ("+a+")" {
		t.Errorf("duplicate names: %v %q", err, d.Runs[0].Name)
	}
	missing := filepath.Join(t.TempDir(), "gone")
	if err := Compare([]string{a, missing}, out); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing folder: %v", err)
	}
	if err := Compare(nil, out); err == nil {
		t.Error("no folders: no error")
	}
}

func TestLoadMetricsTolerates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "metrics.jsonl")
	write(t, path, "{\"step\": 1, \"a\": 2, \"s\": \"x\", \"n\": null}\n\n{\"no_step\": 1}\n{\"step\": 0, \"val-env/X/success\": 1}\n{\"step\": 2, \"a\"")
	m, err := LoadMetrics(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := []Row{{"step": 1, "a": 2}}; !reflect.DeepEqual(m.Train, want) {
		t.Errorf("train %v, want %v", m.Train, want)
	}
	if len(m.Val) != 1 || m.Val[0]["val-env/X/success"] != 1 {
		t.Errorf("val %v", m.Val)
	}
}

func TestLoadTrajectoriesTruncated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "val-step-000000.jsonl")
	write(t, path, `{"env_id": 1, "group_id": 0, "tag": "Bandit", "seed": 3, "success": true, "unknown": [1]}`+"\n"+`{"env_id": 2, "mess`)
	ts, err := LoadTrajectories(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 1 || ts[0].EnvID != 1 || ts[0].Tag != "Bandit" || !ts[0].Success {
		t.Errorf("%+v", ts)
	}
}

func TestListAndSelectFiles(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"train-step-000002.jsonl", "val-step-000002.jsonl", "train-step-000001.jsonl", "val-step-000000.jsonl", "notes.txt", "train-step-x.jsonl"} {
		write(t, filepath.Join(dir, "trajectories", n), "")
	}
	fs, err := ListTrajectories(dir)
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, f := range fs {
		labels = append(labels, f.Label())
	}
	if want := []string{"val step 0", "train step 1", "val step 2", "train step 2"}; !reflect.DeepEqual(labels, want) {
		t.Errorf("listed %v, want %v", labels, want)
	}
	if fs, err := ListTrajectories(t.TempDir()); err != nil || fs != nil {
		t.Errorf("no trajectories folder: %v, %v", fs, err)
	}
	for _, tt := range []struct {
		n, max int
		want   []int
	}{
		{5, 50, []int{1, 2, 3, 4, 5}},
		{10, 4, []int{1, 4, 7, 10}},
		{10, 1, []int{10}},
		{10, 0, nil},
		{7, 3, []int{1, 4, 7}},
		{3, -1, []int{1, 2, 3}},
	} {
		var files []TrajFile
		for s := 1; s <= tt.n; s++ {
			files = append(files, TrajFile{Kind: "train", Step: s})
		}
		files = append(files, TrajFile{Kind: "val", Step: 0})
		var steps []int
		vals := 0
		for _, f := range SelectFiles(files, tt.max) {
			if f.Kind == "val" {
				vals++
			} else {
				steps = append(steps, f.Step)
			}
		}
		if !reflect.DeepEqual(steps, tt.want) || vals != 1 {
			t.Errorf("%d train files, max %d: kept %v and %d val; want %v and 1", tt.n, tt.max, steps, vals, tt.want)
		}
	}
}

func TestParseResponse(t *testing.T) {
	for _, tt := range []struct {
		in      string
		think   string
		actions []string
		raw     bool
	}{
		{"<think>go left</think><answer>Left || Up</answer>", "go left", []string{"Left", "Up"}, false},
		{" <think>\nmulti\nline\n</think> <answer> Down </answer>\n", "multi\nline", []string{"Down"}, false},
		{"<answer>Right||</answer>", "", []string{"Right"}, false},
		{"<think>no answer</think>", "no answer", nil, true},
		{"<answer>Up</answer> and some chatter", "", []string{"Up"}, true},
		{"plain text", "", nil, true},
	} {
		got := parseResponse(tt.in)
		if got.Think != tt.think || !reflect.DeepEqual(got.Actions, tt.actions) || (got.Raw != "") != tt.raw || !got.Responded {
			t.Errorf("parseResponse(%q) = %+v; want think %q actions %v raw %v", tt.in, got, tt.think, tt.actions, tt.raw)
		}
	}
}

func TestTopLevel(t *testing.T) {
	cfg := "train:\n  name: nested\nname: 'quoted run'\nsteps: 200\n"
	if got := topLevel(cfg, "name"); got != "quoted run" {
		t.Errorf("name %q", got)
	}
	if got := topLevel(cfg, "steps"); got != "200" {
		t.Errorf("steps %q", got)
	}
	if got := topLevel(cfg, "seed"); got != "" {
		t.Errorf("seed %q", got)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The think charts appear when a run recorded think diagnostics, and only
// then, so a run without thinking gets no empty panels.
func TestReasoningCharts(t *testing.T) {
	ids := func(cs []chartSpec) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.ID)
		}
		return out
	}
	plain := &Run{Metrics: Metrics{Train: []Row{{"step": 1, "actor/grad_norm": 1}}}}
	if got := ids(chartsFor([]*Run{plain})); slices.Contains(got, "think-length") {
		t.Fatalf("a run without thinks got %v", got)
	}
	thinking := &Run{Metrics: Metrics{Train: []Row{{"step": 1, "train/think/tokens_mean": 12, "collapse/mi_estimate": 0.3}}}}
	got := ids(chartsFor([]*Run{plain, thinking}))
	for _, want := range []string{"think-length", "think-quality", "template-collapse", "reasoning-reward", "val-think"} {
		if !slices.Contains(got, want) {
			t.Errorf("charts %v lack %s", got, want)
		}
	}
}
