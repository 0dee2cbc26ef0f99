package report

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
)

var (
	//go:embed assets/page.html
	pageHTML string
	//go:embed assets/report.css
	reportCSS string
	//go:embed assets/report.js
	reportJS string

	pageTmpl = template.Must(template.New("page").Parse(pageHTML))
)

// pageData is the JSON embedded in the page for report.js.
type pageData struct {
	Charts []chartSpec `json:"charts"`
	Runs   []runData   `json:"runs"`
	Texts  []string    `json:"texts"` // long texts members share (system prompts, instructions)
	Files  []fileData  `json:"files"` // trajectory files, in step order; empty on a comparison
}

// runData is one run's curves.
type runData struct {
	Name     string    `json:"name"`
	Train    []Row     `json:"train"`
	Val      []Row     `json:"val"`
	Warnings []warning `json:"warnings"`
}

// pageView is what assets/page.html renders.
type pageView struct {
	Title   string
	Runs    []runHeader
	Charts  []chartSpec
	Browser bool // a single run's page, with the trajectory browser
	CSS     template.CSS
	JS      template.JS
	Data    template.JS
}

// runHeader is a run's summary at the top of the page.
type runHeader struct {
	Name     string
	Dir      string
	Config   string
	Facts    []fact
	Warnings []string // "step 4: echo_trap, grad_norm_spike"
}

// fact is one labelled value of a run's summary.
type fact struct{ Label, Value string }

// renderPage writes the page for runs; files are the single run's trajectory
// files, nil on a comparison.
func renderPage(w io.Writer, title string, runs []*Run, files []fileData, tx *texts) error {
	charts := chartsFor(runs)
	data := pageData{Charts: charts, Texts: tx.list, Files: files}
	if data.Texts == nil {
		data.Texts = []string{}
	}
	if data.Files == nil {
		data.Files = []fileData{}
	}
	view := pageView{Title: title, Charts: charts, Browser: len(runs) == 1,
		CSS: template.CSS(reportCSS), JS: template.JS(reportJS)}
	for _, r := range runs {
		data.Runs = append(data.Runs, runData{Name: r.Name, Train: chartRows(r.Metrics.Train, charts),
			Val: chartRows(r.Metrics.Val, charts), Warnings: warnings(r.Metrics.Train)})
		view.Runs = append(view.Runs, header(r))
	}
	js, err := scriptJSON(data)
	if err != nil {
		return fmt.Errorf("encoding the page data: %w", err)
	}
	// The data is escaped for a script element by scriptJSON itself.
	view.Data = template.JS(js)
	return pageTmpl.Execute(w, view)
}

// scriptJSON encodes v for a <script type="application/json"> element: "</"
// becomes "<\/" and "<!" becomes "\u003c!", so no message text can close the
// element or switch the HTML parser into its script-escape states.
func scriptJSON(v any) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // keep <think> readable and the page small
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	s := strings.ReplaceAll(b.String(), "</", `<\/`)
	return strings.ReplaceAll(s, "<!", `\u003c!`), nil
}

// header summarises a run: run.json, progress, throughput, warnings.
func header(r *Run) runHeader {
	h := runHeader{Name: r.Name, Dir: r.Dir, Config: r.Config}
	for _, k := range infoKeys(r.Info) {
		h.Facts = append(h.Facts, fact{k, r.Info[k]})
	}
	done := "0"
	if s, ok := maxOf(r.Metrics.Train, "step"); ok {
		done = num(s)
	}
	if total := topLevel(r.Config, "steps"); total != "" {
		done += " of " + total
	}
	h.Facts = append(h.Facts, fact{"steps done", done}, fact{"validation passes", strconv.Itoa(len(r.Metrics.Val))})
	h.Facts = append(h.Facts, throughput(r.Metrics.Train)...)
	for _, w := range warnings(r.Metrics.Train) {
		h.Warnings = append(h.Warnings, "step "+num(w.Step)+": "+strings.Join(w.Kinds, ", "))
	}
	return h
}

// infoKeys orders run.json's keys: model, device, dtype, then the rest.
func infoKeys(info map[string]string) []string {
	first := []string{"model", "device", "dtype"}
	var keys, rest []string
	for _, k := range first {
		if _, ok := info[k]; ok {
			keys = append(keys, k)
		}
	}
	for k := range info {
		if !slices.Contains(first, k) {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	return append(keys, rest...)
}

// throughput is the median step time and token rates and the peak memory,
// each where recorded.
func throughput(rows []Row) []fact {
	var out []fact
	for _, t := range []struct{ key, label, unit string }{
		{"timing_s/step", "step time (median)", " s"},
		{"perf/gen_tokens_per_s", "generation (median)", " tokens/s"},
		{"perf/train_tokens_per_s", "training (median)", " tokens/s"},
	} {
		if v, ok := median(rows, t.key); ok {
			out = append(out, fact{t.label, num(v) + t.unit})
		}
	}
	if v, ok := maxOf(rows, "perf/max_memory_mb"); ok {
		out = append(out, fact{"peak memory", num(v) + " MB"})
	}
	return out
}

// values is the column key of rows, where present.
func values(rows []Row, key string) []float64 {
	var vs []float64
	for _, r := range rows {
		if v, ok := r[key]; ok {
			vs = append(vs, v)
		}
	}
	return vs
}

func median(rows []Row, key string) (float64, bool) {
	vs := values(rows, key)
	if len(vs) == 0 {
		return 0, false
	}
	sort.Float64s(vs)
	n := len(vs)
	if n%2 == 1 {
		return vs[n/2], true
	}
	return (vs[n/2-1] + vs[n/2]) / 2, true
}

func maxOf(rows []Row, key string) (float64, bool) {
	vs := values(rows, key)
	if len(vs) == 0 {
		return 0, false
	}
	return slices.Max(vs), true
}

// num prints v with at most 4 significant digits, integers as integers.
func num(v float64) string {
	if v == float64(int64(v)) && v < 1e15 && v > -1e15 {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// topLevel is the value of a top-level "key: value" line of a YAML text,
// unquoted; empty when absent.
func topLevel(yaml, key string) string {
	for line := range strings.Lines(yaml) {
		if v, ok := strings.CutPrefix(line, key+": "); ok {
			v = strings.TrimSpace(v)
			if uq, err := strconv.Unquote(v); err == nil {
				return uq
			}
			return strings.Trim(v, "'")
		}
	}
	return ""
}
