package parity

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
)

// libtorch's grad mode and gotch's error slot are per OS thread.
func init() { runtime.LockOSThread() }

// pythonEnv names the interpreter of the pinned parity environment.
const pythonEnv = "RAGEN_PARITY_PYTHON"

// python returns the parity interpreter, or skips the test without one.
func python(t testing.TB) string {
	t.Helper()
	p := os.Getenv(pythonEnv)
	if p == "" {
		t.Skip("set RAGEN_PARITY_PYTHON (make parity does)")
	}
	return p
}

// script is a helper's path under scripts/parity/ of the repository.
func script(t testing.TB, name string) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "scripts", "parity", name)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}

// runPython runs scripts/parity/<name> with req as JSON on standard input
// and decodes its standard output into resp.
func runPython(py, path string, req, resp any) error {
	in, err := json.Marshal(req)
	if err != nil {
		return err
	}
	cmd := exec.Command(py, path)
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w\n%s", py, path, err, stderr.Bytes())
	}
	if err := json.Unmarshal(stdout.Bytes(), resp); err != nil {
		return fmt.Errorf("%s: reading its answer: %w\n%s", path, err, stderr.Bytes())
	}
	return nil
}

// num is a number from Python that may be non-finite: verl_ref.py writes
// NaN and ±Inf as strings, which JSON has no numbers for.
type num float64

func (n *num) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		switch s {
		case "NaN":
			*n = num(math.NaN())
		case "Inf":
			*n = num(math.Inf(1))
		case "-Inf":
			*n = num(math.Inf(-1))
		default:
			return errors.New("unknown number " + strconv.Quote(s))
		}
		return nil
	}
	var f float64
	err := json.Unmarshal(b, &f)
	*n = num(f)
	return err
}
