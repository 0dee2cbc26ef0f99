package bench

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strings"
)

// InstallHint says how to get the baseline's PyTorch on Debian, where it
// is the same libtorch 1.13 that ragen links.
const InstallHint = "apt-get install -y --no-install-recommends python3-torch"

// DefaultPython is the interpreter the baseline runs with: Debian's, whose
// python3-torch package is the baseline, when it exists.
func DefaultPython() string {
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		return "/usr/bin/python3"
	}
	return "python3"
}

// CheckTorch reports, as one sentence, why python cannot run the baseline.
func CheckTorch(python string) error {
	switch found, why := tryImport(python, "torch"); {
	case !found:
		return fmt.Errorf("--vs-torch: python interpreter %s not found (install python3, then: %s)", python, InstallHint)
	case why != "":
		return fmt.Errorf("--vs-torch: %s cannot import torch (%s); install it with: %s", python, why, InstallHint)
	}
	return nil
}

// tryImport runs `import module` in python: found is false when the
// interpreter itself is missing, why the error's last line when the import
// fails ("" when it works).
func tryImport(python, module string) (found bool, why string) {
	out, err := exec.Command(python, "-c", "import "+module).CombinedOutput()
	var ee *exec.Error
	switch {
	case errors.As(err, &ee) || errors.Is(err, fs.ErrNotExist):
		return false, ""
	case err != nil:
		return true, lastLine(string(out))
	}
	return true, ""
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// Torch is the PyTorch baseline, scripts/bench_torch.py, as a long-lived
// subprocess: one JSON request per line on its stdin, one answer per line
// on its stdout; its stderr goes to ours.
type Torch struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	Info BaselineInfo
}

// StartTorch starts the baseline server.
func StartTorch(python, script string, stderr io.Writer) (*Torch, error) {
	// The script first: a missing file is the user's to fix whether or not
	// torch is importable.
	if _, err := os.Stat(script); err != nil {
		return nil, fmt.Errorf("--torch-script %s: not found (run from the repository root, or point --torch-script at scripts/bench_torch.py)", script)
	}
	if err := CheckTorch(python); err != nil {
		return nil, err
	}
	cmd := exec.Command(python, script)
	cmd.Stderr = stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the PyTorch baseline: %w", err)
	}
	return &Torch{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}, nil
}

// call sends one request and decodes the answer into resp.
func (t *Torch) call(req map[string]any, resp any) error {
	b, err := json.Marshal(req)
	if err != nil {
		return err
	}
	if _, err := t.in.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("PyTorch baseline (%v): %w", req["cmd"], err)
	}
	line, err := t.out.ReadBytes('\n')
	if err != nil {
		return fmt.Errorf("PyTorch baseline (%v): no answer: %w", req["cmd"], err)
	}
	var status struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal(line, &status); err != nil {
		return fmt.Errorf("PyTorch baseline (%v): bad answer %q: %w", req["cmd"], truncate(string(line)), err)
	}
	if !status.OK {
		return fmt.Errorf("PyTorch baseline (%v): %s", req["cmd"], status.Error)
	}
	if resp == nil {
		return nil
	}
	return json.Unmarshal(line, resp)
}

func truncate(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// Load loads the checkpoint folder on the baseline's side, with libtorch's
// pool at threads (ours), so that the comparison is of implementations.
func (t *Torch) Load(dir, dtype, device string, threads int) error {
	var r struct {
		Python  string `json:"python"`
		Torch   string `json:"torch"`
		Threads int    `json:"threads"`
	}
	if err := t.call(map[string]any{"cmd": "load", "model": dir, "dtype": dtype, "device": device, "threads": threads}, &r); err != nil {
		return err
	}
	t.Info = BaselineInfo{Python: r.Python, Torch: r.Torch, Threads: r.Threads}
	return nil
}

// torchTiming is the answer of a timed request.
type torchTiming struct {
	Seconds        float64   `json:"seconds"`
	PrefillSeconds float64   `json:"prefill_seconds"`
	FLOPPerS       float64   `json:"flop_per_s"`
	GradNorms      []float64 `json:"grad_norms"` // the updates': per optimiser step, before clipping
	memoryFigures
}

// Run sends a timed request.
func (t *Torch) Run(req map[string]any) (torchTiming, error) {
	var r torchTiming
	err := t.call(req, &r)
	return r, err
}

// Logits returns the baseline's logits [B][T][V] of left-padded prompts.
func (t *Torch) Logits(ids [][]int) ([][][]float32, error) {
	var r struct {
		Logits [][][]float32 `json:"logits"`
	}
	err := t.call(map[string]any{"cmd": "logits", "ids": ids}, &r)
	return r.Logits, err
}

// Close stops the server.
func (t *Torch) Close() error {
	if t == nil || t.cmd == nil {
		return nil
	}
	io.WriteString(t.in, `{"cmd": "quit"}`+"\n")
	t.in.Close()
	return t.cmd.Wait()
}
