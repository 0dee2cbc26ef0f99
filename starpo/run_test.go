package starpo

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"github.com/rs/zerolog/log"
)

// captureLog sends the global logger to a buffer for the test.
func captureLog(t *testing.T) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	old := log.Logger
	log.Logger = zerolog.New(&buf)
	t.Cleanup(func() { log.Logger = old })
	return &buf
}

func lastLogLine(t *testing.T, buf *bytes.Buffer) map[string]any {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var m map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &m); err != nil {
		t.Fatalf("log line %q: %v", lines[len(lines)-1], err)
	}
	return m
}

func TestValidationLogShowsChangeSinceStart(t *testing.T) {
	buf := captureLog(t)
	r := &Run{Dir: t.TempDir()}
	r.logValidation(0, map[string]float64{"FrozenLake": 0.25, "Bandit": 0.5})
	got := lastLogLine(t, buf)
	if msg := got["message"]; msg != "validation success: Bandit 0.500, FrozenLake 0.250" {
		t.Errorf("step 0 message %q", msg)
	}
	r.logValidation(10, map[string]float64{"FrozenLake": 0.375, "Bandit": 0.25})
	got = lastLogLine(t, buf)
	want := "validation success: Bandit 0.250 (-0.250 since the start), FrozenLake 0.375 (+0.125 since the start)"
	if got["message"] != want {
		t.Errorf("message %q, want %q", got["message"], want)
	}
	if got["val-env/FrozenLake/success_change"] != 0.125 || got["val-env/FrozenLake/success"] != 0.375 {
		t.Errorf("fields %v", got)
	}
}

// After --resume the start is the first validation in metrics.jsonl, not
// the first one this process ran.
func TestValidationLogAfterResumeReadsTheStart(t *testing.T) {
	buf := captureLog(t)
	dir := t.TempDir()
	lines := `{"step":0,"timing_s/testing":1,"val-env/Bandit/success":0.125}
{"step":1,"critic/score/mean":0.5}
{"step":4,"timing_s/testing":1,"val-env/Bandit/success":0.5}
`
	if err := os.WriteFile(filepath.Join(dir, "metrics.jsonl"), []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &Run{Dir: dir}
	r.logValidation(8, map[string]float64{"Bandit": 0.75})
	if got := lastLogLine(t, buf)["message"]; got != "validation success: Bandit 0.750 (+0.625 since the start)" {
		t.Errorf("message %q", got)
	}
}
