// Package report renders a training run folder (config.yaml, metrics.jsonl,
// run.json, trajectories/) as one self-contained HTML page: the run's
// summary, its curves as inline SVG and a browser of the recorded
// trajectories, group by group. Compare overlays the curves of several runs.
//
// The page needs no network: CSS, JavaScript and data are inline, the data
// as JSON in <script type="application/json" id="data">.
package report

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Options tune what a run's page embeds.
type Options struct {
	// MaxTrainFiles is how many training trajectory files are embedded,
	// evenly spaced and including the last; < 0 embeds all. Validation files
	// are always all embedded.
	MaxTrainFiles int
	// MaxMessageChars cuts longer message contents with a visible marker;
	// <= 0 keeps them whole.
	MaxMessageChars int
}

// DefaultOptions keeps a page of a few hundred steps at a sane size.
func DefaultOptions() Options { return Options{MaxTrainFiles: 50, MaxMessageChars: 4000} }

// Write renders runDir as runDir/report.html with DefaultOptions and returns
// the page's path.
func Write(runDir string) (string, error) { return WriteWith(runDir, DefaultOptions()) }

// WriteWith is Write with explicit options.
func WriteWith(runDir string, opt Options) (string, error) {
	run, err := LoadRun(runDir)
	if err != nil {
		return "", err
	}
	all, err := ListTrajectories(runDir)
	if err != nil {
		return "", err
	}
	var tx texts
	files, err := loadFiles(SelectFiles(all, opt.MaxTrainFiles), opt.MaxMessageChars, &tx)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := renderPage(&b, run.Name, []*Run{run}, files, &tx); err != nil {
		return "", err
	}
	path := filepath.Join(runDir, "report.html")
	return path, writeAtomic(path, b.Bytes())
}

// Compare writes to out one page overlaying the curves of runDirs, each run
// named by its config name (or folder).
func Compare(runDirs []string, out string) error {
	if len(runDirs) == 0 {
		return errors.New("compare: no run folders given")
	}
	runs := make([]*Run, len(runDirs))
	for i, d := range runDirs {
		r, err := LoadRun(d)
		if err != nil {
			return err
		}
		runs[i] = r
	}
	distinctNames(runs)
	return CompareRuns(fmt.Sprintf("comparison of %d runs", len(runs)), runs, out)
}

// distinctNames adds the folder to the names that several runs share, so the
// legend tells them apart.
func distinctNames(runs []*Run) {
	count := map[string]int{}
	for _, r := range runs {
		count[r.Name]++
	}
	for _, r := range runs {
		if count[r.Name] > 1 {
			r.Name += " (" + r.Dir + ")"
		}
	}
}

// writeAtomic writes path.partial, then renames it to path, so a reader
// (a browser refreshing a live run's page) never sees half a page.
func writeAtomic(path string, b []byte) error {
	tmp := path + ".partial"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
