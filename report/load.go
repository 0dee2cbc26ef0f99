package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Row is one line of metrics.jsonl: metric name to value. Every row has "step".
type Row map[string]float64

// Metrics is a run's metrics.jsonl split by kind of line.
type Metrics struct {
	Train []Row // training steps, in file order
	Val   []Row // validation passes (lines with a val-env/ key or timing_s/testing)
}

// Message is one chat message of a trajectory.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Trajectory is one line of a trajectories/*.jsonl file: the schema the
// trainer writes them in.
type Trajectory struct {
	EnvID       int       `json:"env_id"`
	GroupID     int       `json:"group_id"`
	Tag         string    `json:"tag"`
	Seed        int64     `json:"seed"`
	Messages    []Message `json:"messages"`
	TurnRewards []float64 `json:"turn_rewards"`
	Penalty     float64   `json:"penalty"`
	Shaping     float64   `json:"shaping"`
	Score       float64   `json:"score"`
	Success     bool      `json:"success"`
	NumActions  int       `json:"num_actions"`
}

// TrajFile is one file of a run's trajectories/ folder.
type TrajFile struct {
	Path string
	Kind string // "train" or "val"
	Step int
}

// Label is how the page names the file, e.g. "train step 12".
func (f TrajFile) Label() string { return f.Kind + " step " + strconv.Itoa(f.Step) }

// Run is what a report shows of one run folder.
type Run struct {
	Dir     string
	Name    string            // config.yaml's name, else the folder's base name
	Config  string            // config.yaml as written; empty when absent
	Info    map[string]string // run.json (model, device, dtype); nil when absent
	Metrics Metrics
}

// LoadRun reads a run folder's config.yaml, run.json and metrics.jsonl; only
// metrics.jsonl is required.
func LoadRun(dir string) (*Run, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("run folder %s does not exist or cannot be read: %w", dir, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("run folder %s is not a folder", dir)
	}
	mpath := filepath.Join(dir, "metrics.jsonl")
	if _, err := os.Stat(mpath); errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("run folder %s has no metrics.jsonl", dir)
	}
	m, err := LoadMetrics(mpath)
	if err != nil {
		return nil, err
	}
	r := &Run{Dir: dir, Metrics: m}
	if b, err := os.ReadFile(filepath.Join(dir, "config.yaml")); err == nil {
		r.Config = string(b)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("reading %s: %w", filepath.Join(dir, "config.yaml"), err)
	}
	r.Name = topLevel(r.Config, "name")
	if r.Name == "" {
		abs, _ := filepath.Abs(dir)
		r.Name = filepath.Base(abs)
	}
	if r.Info, err = loadInfo(filepath.Join(dir, "run.json")); err != nil {
		return nil, err
	}
	return r, nil
}

// loadInfo reads run.json's string fields; a missing file is no error.
func loadInfo(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	info := map[string]string{}
	for k, v := range raw {
		info[k] = fmt.Sprint(v)
	}
	return info, nil
}

// LoadMetrics reads metrics.jsonl. Values that are not numbers are dropped,
// lines without "step" are skipped, and a truncated last line (a run still
// writing) is ignored; a malformed line elsewhere is an error naming it.
func LoadMetrics(path string) (Metrics, error) {
	f, err := os.Open(path)
	if err != nil {
		return Metrics{}, err
	}
	defer f.Close()
	return readMetrics(path, f)
}

// readMetrics is LoadMetrics on the file's contents; path names it in
// errors.
func readMetrics(path string, r io.Reader) (Metrics, error) {
	var m Metrics
	err := eachLine(path, r, func(line []byte) error {
		var raw map[string]any
		if err := json.Unmarshal(line, &raw); err != nil {
			return err
		}
		row := Row{}
		for k, v := range raw {
			if f, ok := v.(float64); ok {
				row[k] = f
			}
		}
		if _, ok := row["step"]; !ok {
			return nil
		}
		if isVal(row) {
			m.Val = append(m.Val, row)
		} else {
			m.Train = append(m.Train, row)
		}
		return nil
	})
	return m, err
}

// isVal tells validation lines from training lines.
func isVal(r Row) bool {
	if _, ok := r["timing_s/testing"]; ok {
		return true
	}
	for k := range r {
		if strings.HasPrefix(k, "val-env/") {
			return true
		}
	}
	return false
}

// LoadTrajectories reads one trajectories/*.jsonl file, ignoring a truncated
// last line.
func LoadTrajectories(path string) ([]Trajectory, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readTrajectories(path, f)
}

// readTrajectories is LoadTrajectories on the file's contents; path names
// it in errors.
func readTrajectories(path string, r io.Reader) ([]Trajectory, error) {
	var ts []Trajectory
	err := eachLine(path, r, func(line []byte) error {
		var t Trajectory
		if err := json.Unmarshal(line, &t); err != nil {
			return err
		}
		ts = append(ts, t)
		return nil
	})
	return ts, err
}

// eachLine calls fn on each non-blank line of a JSONL file read from r. A
// failure on the last line is ignored when that line has no newline: the
// writer is midway. path names the file in errors.
func eachLine(path string, r io.Reader, fn func([]byte) error) error {
	br := bufio.NewReader(r)
	for n := 1; ; n++ {
		line, rerr := br.ReadBytes('\n')
		if rerr != nil && rerr != io.EOF {
			return fmt.Errorf("reading %s: %w", path, rerr)
		}
		complete := rerr == nil
		if line = bytes.TrimSpace(line); len(line) > 0 {
			if err := fn(line); err != nil && complete {
				return fmt.Errorf("%s line %d: %w", path, n, err)
			}
		}
		if !complete {
			return nil
		}
	}
}

var trajName = regexp.MustCompile(`^(train|val)-step-(\d+)\.jsonl$`)

// ListTrajectories lists dir/trajectories/ by step, validation before
// training at the same step; a run without the folder has none.
func ListTrajectories(dir string) ([]TrajFile, error) {
	tdir := filepath.Join(dir, "trajectories")
	ents, err := os.ReadDir(tdir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", tdir, err)
	}
	var fs []TrajFile
	for _, e := range ents {
		m := trajName.FindStringSubmatch(e.Name())
		if m == nil || e.IsDir() {
			continue
		}
		step, _ := strconv.Atoi(m[2])
		fs = append(fs, TrajFile{Path: filepath.Join(tdir, e.Name()), Kind: m[1], Step: step})
	}
	sort.Slice(fs, func(i, j int) bool {
		if fs[i].Step != fs[j].Step {
			return fs[i].Step < fs[j].Step
		}
		return fs[i].Kind == "val" && fs[j].Kind == "train"
	})
	return fs, nil
}

// SelectFiles keeps every validation file and at most maxTrain training
// files, evenly spaced and including the last; maxTrain < 0 keeps all.
func SelectFiles(files []TrajFile, maxTrain int) []TrajFile {
	var train []int
	for i, f := range files {
		if f.Kind == "train" {
			train = append(train, i)
		}
	}
	keep := map[int]bool{}
	for _, i := range spaced(train, maxTrain) {
		keep[i] = true
	}
	var out []TrajFile
	for i, f := range files {
		if f.Kind != "train" || keep[i] {
			out = append(out, f)
		}
	}
	return out
}

// spaced picks n of xs evenly, the last one always among them.
func spaced(xs []int, n int) []int {
	if n < 0 || len(xs) <= n {
		return xs
	}
	if n == 0 {
		return nil
	}
	if n == 1 {
		return xs[len(xs)-1:]
	}
	out := make([]int, n)
	for k := range n {
		// k·(len−1)/(n−1): 0 first, len−1 last, strictly increasing since n ≤ len.
		out[k] = xs[k*(len(xs)-1)/(n-1)]
	}
	return out
}
