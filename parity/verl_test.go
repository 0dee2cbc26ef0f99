package parity

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
)

// The verl comparisons share one run of scripts/parity/verl_ref.py:
// importing verl (and Ray through it) takes seconds, so every family's
// cases go in one request, and each test reads its answers by case name.

// request is one case for verl_ref.py: name, fn, dtype and its inputs.
type request map[string]any

// families lists each family's requests; the tests regenerate the same
// inputs from the same seeds to compare.
var families = []func() []request{gaeRequests, grpoRequests, whitenRequests, aggRequests, policyRequests, valueRequests, klRequests, entropyRequests}

var verlRun = sync.OnceValues(func() (map[string]json.RawMessage, error) {
	var cases []request
	for _, f := range families {
		cases = append(cases, f()...)
	}
	var resp struct {
		Versions map[string]string          `json:"versions"`
		Results  map[string]json.RawMessage `json:"results"`
	}
	if err := runPython(pythonPath, scriptPath, map[string]any{"cases": cases}, &resp); err != nil {
		return nil, err
	}
	fmt.Printf("parity: verl %s, torch %s; %d cases\n", resp.Versions["verl"], resp.Versions["torch"], len(cases))
	return resp.Results, nil
})

// pythonPath and scriptPath are set by verlAnswer before verlRun runs.
var pythonPath, scriptPath string

// verlAnswer decodes verl's answer to the named case into out.
// It also locks the test's goroutine to its thread for the libtorch work
// that follows (grad mode and gotch's error slot are per thread).
func verlAnswer(t *testing.T, name string, out any) {
	t.Helper()
	runtime.LockOSThread()
	if pythonPath == "" {
		pythonPath, scriptPath = python(t), script(t, "verl_ref.py")
	}
	res, err := verlRun()
	if err != nil {
		t.Fatal(err)
	}
	raw, ok := res[name]
	if !ok {
		t.Fatalf("verl_ref.py did not answer case %q", name)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatalf("case %s: %v", name, err)
	}
}

// dtypes are the precisions every tensor case runs in on both sides.
var dtypes = []string{"float32", "float64"}

// Tolerances, as |got − want| ≤ tol·max(1, |want|). fp32: a few ulps of
// fp32 (2^-23 ≈ 1.2e-7) grown by reductions over up to 2,048 terms, where
// libtorch 1.13 and torch 2.11 may sum in different orders. fp64: the same
// for 2^-52; the plain-Go float64 code runs verl's recursions in the same
// order, so it matches to the last bits.
var tolerance = map[string]float64{"float32": 2e-6, "float64": 1e-12}

// shapes are the [B, T] batches the cases run on: a single short row, small
// odd sizes, and a batch as long as a Sokoban turn.
var shapes = [][2]int{{1, 3}, {2, 5}, {4, 16}, {8, 37}, {16, 128}}

// newRand is the generator of one case, from the family's seed and the
// case's index.
func newRand(family, i uint64) *rand.Rand { return rand.New(rand.NewPCG(family, i)) }

// f32 rounds v to float32, so that inputs are exact in both dtypes.
func f32(v float64) float64 { return float64(float32(v)) }

// matrix is a [B][T] matrix of f(r) rounded to float32.
func matrix(r *rand.Rand, B, T int, f func(*rand.Rand) float64) [][]float64 {
	m := make([][]float64, B)
	for b := range m {
		m[b] = make([]float64, T)
		for t := range m[b] {
			m[b][t] = f32(f(r))
		}
	}
	return m
}

func normal(scale float64) func(*rand.Rand) float64 {
	return func(r *rand.Rand) float64 { return scale * r.NormFloat64() }
}

// Mask row layouts.
const (
	rowFull      = iota // every position trained
	rowRightPad         // trained prefix, padding after (a response cut short)
	rowLeftPad          // trained suffix (left padding, the layout of a full sequence)
	rowMultiTurn        // trained runs between untrained ones: assistant turns and env turns
	rowEmpty            // nothing trained
)

// maskRow makes one mask row of the given layout.
func maskRow(r *rand.Rand, T, layout int) []float64 {
	m := make([]float64, T)
	switch layout {
	case rowFull:
		for t := range m {
			m[t] = 1
		}
	case rowRightPad:
		for t := range 1 + r.IntN(T) {
			m[t] = 1
		}
	case rowLeftPad:
		for t := T - 1 - r.IntN(T); t < T; t++ {
			m[t] = 1
		}
	case rowMultiTurn:
		on := r.IntN(2) == 0
		for t := 0; t < T; {
			n := 1 + r.IntN(max(1, T/5))
			for ; n > 0 && t < T; n, t = n-1, t+1 {
				if on {
					m[t] = 1
				}
			}
			on = !on
		}
	}
	return m
}

// masks makes a [B][T] mask cycling through layouts (from a random start),
// and makes sure at least two positions are trained, which whitening needs.
func masks(r *rand.Rand, B, T int, layouts ...int) [][]float64 {
	m := make([][]float64, B)
	start := r.IntN(len(layouts))
	for b := range m {
		m[b] = maskRow(r, T, layouts[(start+b)%len(layouts)])
	}
	if trained(m) < 2 {
		for t := range m[0] {
			m[0][t] = 1
		}
	}
	return m
}

var allLayouts = []int{rowFull, rowRightPad, rowLeftPad, rowMultiTurn, rowEmpty}

func trained(mask [][]float64) int {
	n := 0
	for _, row := range mask {
		for _, w := range row {
			if w != 0 {
				n++
			}
		}
	}
	return n
}

// nonEmptyRows counts the rows with a trained position.
func nonEmptyRows(mask [][]float64) int {
	n := 0
	for _, row := range mask {
		for _, w := range row {
			if w != 0 {
				n++
				break
			}
		}
	}
	return n
}

// hasHole reports whether some row has an untrained position between two
// trained ones.
func hasHole(mask [][]float64) bool {
	for _, row := range mask {
		first, last := -1, -1
		for t, w := range row {
			if w != 0 {
				if first < 0 {
					first = t
				}
				last = t
			}
		}
		for t := first + 1; t < last; t++ {
			if row[t] == 0 {
				return true
			}
		}
	}
	return false
}

// maxDiff tracks the largest deviation |got − want|/max(1, |want|) of one
// comparison, and reports entries beyond the tolerance.
type maxDiff struct {
	t    *testing.T
	what string
	tol  float64
	max  float64
}

func (d *maxDiff) scalar(where string, got, want float64) {
	d.t.Helper()
	if math.IsNaN(got) != math.IsNaN(want) {
		d.t.Errorf("%s %s: got %v, verl %v", d.what, where, got, want)
		return
	}
	if math.IsNaN(want) {
		return
	}
	e := math.Abs(got-want) / max(1, math.Abs(want))
	d.max = max(d.max, e)
	if !(e <= d.tol) {
		d.t.Errorf("%s %s: got %.9g, verl %.9g (deviation %.3g > %.3g)", d.what, where, got, want, e, d.tol)
	}
}

// matrix compares got and want where keep[b][t] holds (keep nil: all).
func (d *maxDiff) matrix(where string, got, want [][]float64, keep [][]float64) {
	d.t.Helper()
	if len(got) != len(want) {
		d.t.Fatalf("%s %s: %d rows, verl %d", d.what, where, len(got), len(want))
	}
	for b := range want {
		if len(got[b]) != len(want[b]) {
			d.t.Fatalf("%s %s row %d: %d columns, verl %d", d.what, where, b, len(got[b]), len(want[b]))
		}
		for t := range want[b] {
			if keep == nil || keep[b][t] != 0 {
				d.scalar(fmt.Sprintf("%s[%d][%d]", where, b, t), got[b][t], want[b][t])
			}
		}
	}
}

// report logs the largest deviation seen, the number the parity report
// quotes.
func (d *maxDiff) report() {
	d.t.Helper()
	d.t.Logf("max deviation %-40s %.3g (tolerance %.0e)", d.what, d.max, d.tol)
}

// nums converts verl's [B][T] answer.
func nums(m [][]num) [][]float64 {
	out := make([][]float64, len(m))
	for b := range m {
		out[b] = make([]float64, len(m[b]))
		for t, v := range m[b] {
			out[b][t] = float64(v)
		}
	}
	return out
}

// scaled returns m·k.
func scaled(m [][]float64, k float64) [][]float64 {
	out := make([][]float64, len(m))
	for b := range m {
		out[b] = make([]float64, len(m[b]))
		for t, v := range m[b] {
			out[b][t] = v * k
		}
	}
	return out
}
