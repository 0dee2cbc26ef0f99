package starpo

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// trainer.json must give the step its folder is named after: {} would
// otherwise resume step-N's weights at step 0.
func TestTrainerStateChecked(t *testing.T) {
	root := t.TempDir()
	write := func(folder, body string) string {
		dir := filepath.Join(root, folder)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "trainer.json"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	for _, tc := range []struct{ folder, body, want string }{
		{"step-000004", `{}`, `the step key is missing; it must hold {"step": N}`},
		{"step-000004", `null`, `the step key is missing`},
		{"step-000004", ``, "the file is empty"},
		{"step-000004", `{"step": 3}`, "step 3 does not match its folder step-000004"},
		{"step-000004", `{"step": -4}`, "step -4 is negative"},
		{"step-000004", `{"step": 4.5}`, "step is a JSON number 4.5, not a count of steps"},
		{"step-000004", `{"step": "4"}`, "step is a JSON string, not a count of steps"},
		{"step-000004", `{"step": 4, "stpe": 4}`, `unknown key "stpe"; trainer.json holds only step`},
		{"step-000004", `{"step": 4} {}`, "data after the JSON object"},
		{"step-000004", `[4]`, "not a trainer state"},
		{"mine", `{"step": 4}`, "its folder mine is not named step-N"},
	} {
		dir := write(tc.folder, tc.body)
		path := filepath.Join(dir, "trainer.json")
		// LoadCheckpoint reads trainer.json before it touches a weight.
		_, err := (&Trainer{}).LoadCheckpoint(dir)
		if err == nil || !strings.HasPrefix(err.Error(), path+": ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %q: %v; want an error naming %s and saying %q", tc.folder, tc.body, err, path, tc.want)
		}
	}
	if st, err := readTrainerState(write("step-000012", "{\n  \"step\": 12\n}\n")); err != nil || st.Step != 12 {
		t.Errorf("a valid trainer.json: %+v, %v", st, err)
	}

	// "latest" must name a step-N folder beside it.
	for _, name := range []string{"../elsewhere", "step-x", "/tmp/step-1"} {
		if err := os.WriteFile(filepath.Join(root, latestFile), []byte(name+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LatestCheckpoint(root); err == nil || !strings.Contains(err.Error(), "not a checkpoint folder step-N") {
			t.Errorf("latest %q: %v", name, err)
		}
	}
}

// FuzzTrainerState: no trainer.json or folder name makes the parsers
// panic; a state they accept is a step count ≥ 0 that SaveCheckpoint's
// encoding gives back, and a folder step-N they accept has N ≥ 0.
func FuzzTrainerState(f *testing.F) {
	for _, s := range []string{`{"step": 12}`, "{\n  \"step\": 0\n}\n", `{}`, `null`, ``, `{"step": -1}`, `{"step": 1e3}`,
		`{"step": 1, "x": 2}`, `{"step": 1}{}`, `[]`, `{"step": 99999999999999999999}`, `{"step":"1"}`} {
		f.Add([]byte(s), "step-000012")
	}
	f.Add([]byte(`{"step": 3}`), "step-")
	f.Add([]byte(`{"step": 3}`), "step-99999999999999999999")
	f.Add([]byte(`{"step": 3}`), "step--1")
	f.Fuzz(func(t *testing.T, data []byte, folder string) {
		if n, ok := folderStep(folder); ok {
			digits := strconv.Itoa(n)
			if n < 0 || folder != "step-"+strings.Repeat("0", len(folder)-len("step-")-len(digits))+digits {
				t.Fatalf("folder %q read as step %d", folder, n)
			}
		}
		st, err := parseTrainerState(data)
		if err != nil {
			return
		}
		if st.Step < 0 {
			t.Fatalf("accepted a negative step %d", st.Step)
		}
		enc, _ := json.MarshalIndent(st, "", "  ")
		if back, err := parseTrainerState(enc); err != nil || back != st {
			t.Fatalf("%+v encodes as %s, which reads back as %+v, %v", st, enc, back, err)
		}
	})
}
