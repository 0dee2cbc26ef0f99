package study

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/rs/zerolog/log"
)

// state is study.json: what the folder was started with, so that a
// rerun continues the same study and refuses a different one.
type state struct {
	Spec Spec     `json:"spec"`
	Base string   `json:"base_config"` // the base config file's text
	Sets []string `json:"sets"`
}

// Claim writes study.json in a new folder, or checks that an
// existing one holds the same study (spec, base config and overrides), so
// that continuing never mixes runs of two designs.
func Claim(out string, spec Spec, sets []string) error {
	base, err := os.ReadFile(spec.BasePath())
	if err != nil {
		return fmt.Errorf("reading the base config: %w", err)
	}
	if sets == nil {
		sets = []string{}
	}
	want, err := json.MarshalIndent(state{Spec: spec, Base: string(base), Sets: sets}, "", "  ")
	if err != nil {
		return err
	}
	want = append(want, '\n')
	path := filepath.Join(out, "study.json")
	have, err := os.ReadFile(path)
	switch {
	case err == nil && string(have) == string(want):
		log.Info().Str("study", out).Msg("continuing the study in this folder")
		return nil
	case err == nil:
		return fmt.Errorf("--out %s holds a study started with a different study file, base config or --set; give "+
			"another --out (or remove the folder)", out)
	case !errors.Is(err, os.ErrNotExist):
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("creating the study folder: %w", err)
	}
	return os.WriteFile(path, want, 0o644)
}

// readState parses study.json's bytes: exactly the keys Claim writes, and
// a spec that passes LoadSpec's checks, so that its environment tags and
// arm names are safe folder names under the study and its grid is
// bounded; path names the file in errors.
func readState(path string, data []byte) (state, error) {
	var st state
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&st); err != nil {
		return state{}, fmt.Errorf("%s: %w", path, err)
	}
	if err := dec.Decode(new(json.RawMessage)); err != io.EOF {
		return state{}, fmt.Errorf("%s: data after the JSON object", path)
	}
	if err := st.Spec.validate(); err != nil {
		return state{}, fmt.Errorf("%s: spec: %w", path, err)
	}
	return st, nil
}

// IsFolder tells whether dir is a study's folder (it has study.json).
func IsFolder(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "study.json"))
	return err == nil
}

// WriteReport renders a study folder's report.html: the arms side by
// side, from the runs finished so far (ragen report --run on a study).
func WriteReport(dir string) (string, error) {
	path := filepath.Join(dir, "study.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	st, err := readState(path, b)
	if err != nil {
		return "", err
	}
	var done []Cell
	for _, c := range st.Spec.Cells() {
		if _, err := os.Stat(filepath.Join(c.Dir(dir), "metrics.jsonl")); err == nil {
			done = append(done, c)
		}
	}
	if len(done) == 0 {
		return "", fmt.Errorf("%s: no run of the study has metrics yet", dir)
	}
	spec := st.Spec
	spec.Arms = slices.DeleteFunc(slices.Clone(spec.Arms), func(a Arm) bool {
		return !slices.ContainsFunc(done, func(c Cell) bool { return c.Arm.Name == a.Name })
	})
	return filepath.Join(dir, "report.html"), writePages(dir, spec, done, "report.html")
}
