// Package manifest writes and checks manifest.json, the record of a folder
// ragen wrote (a checkpoint, a run's export): the SHA-256 of every file in
// it, the training step, the hash of the run's config and the ragen that
// wrote it. A file that rotted on disk, was cut short by a full disk, or
// was changed by hand is found before it is loaded. It does not import
// libtorch.
package manifest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ragen-go/ragen/internal/durable"
)

// Name is the manifest's file name in the folder it describes.
const Name = "manifest.json"

// Hint ends every error of Verify: what the commands that verify offer.
const Hint = "--skip-verify loads it anyway"

// Manifest is manifest.json.
type Manifest struct {
	Step    int               `json:"step"`          // training steps completed when the folder was written
	Config  string            `json:"config_sha256"` // SHA-256 of the run's config.yaml, hex
	Version string            `json:"ragen_version"` // the ragen that wrote the folder (ragen version)
	Files   map[string]string `json:"files"`         // file name → its SHA-256, hex; every file but manifest.json
}

// Write hashes every file directly in dir into m.Files and writes
// dir/manifest.json durably (durable.WriteFile). Subfolders are not part
// of a manifest.
func Write(dir string, m Manifest) error {
	names, err := files(dir)
	if err != nil {
		return err
	}
	m.Files = make(map[string]string, len(names))
	for _, n := range names {
		if m.Files[n], err = FileSHA256(filepath.Join(dir, n)); err != nil {
			return err
		}
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return durable.WriteFile(filepath.Join(dir, Name), append(b, '\n'), 0o644)
}

// Verify checks dir against its manifest.json: every listed file present
// with its SHA-256, and no file in dir that the manifest does not list. It
// returns the manifest, or nil and no error when dir has none (a folder
// from before manifests, or not written by ragen). Each error is one
// sentence naming the file at fault and ending in Hint.
func Verify(dir string) (*Manifest, error) {
	m, err := Read(dir)
	if m == nil || err != nil {
		return nil, err
	}
	names, err := files(dir)
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		if _, ok := m.Files[n]; !ok {
			return nil, fmt.Errorf("%s is not listed in %s (it was added after the folder was written); %s",
				filepath.Join(dir, n), Name, Hint)
		}
	}
	listed := make([]string, 0, len(m.Files))
	for n := range m.Files {
		listed = append(listed, n)
	}
	sort.Strings(listed)
	for _, n := range listed {
		path := filepath.Join(dir, n)
		sum, err := FileSHA256(path)
		switch {
		case errors.Is(err, os.ErrNotExist):
			return nil, fmt.Errorf("%s is listed in %s but missing (the folder is incomplete); %s", path, Name, Hint)
		case err != nil:
			return nil, err
		case sum != m.Files[n]:
			return nil, fmt.Errorf("%s: sha256 does not match %s (the file is corrupt or was changed); %s", path, Name, Hint)
		}
	}
	return m, nil
}

// Read parses dir/manifest.json strictly: one object with exactly the keys
// of Manifest, step ≥ 0, and files naming plain files of dir with 64-digit
// hex hashes. It returns nil and no error when there is no manifest.
func Read(dir string) (*Manifest, error) {
	path := filepath.Join(dir, Name)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	m, err := parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w; %s", path, err, Hint)
	}
	return m, nil
}

func parse(b []byte) (*Manifest, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var raw struct {
		Step    *int              `json:"step"`
		Config  *string           `json:"config_sha256"`
		Version *string           `json:"ragen_version"`
		Files   map[string]string `json:"files"`
	}
	if err := dec.Decode(&raw); err != nil {
		if k, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			return nil, fmt.Errorf("unknown key %s", k)
		}
		return nil, fmt.Errorf("not a manifest (%v)", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("data after the JSON object")
	}
	switch {
	case raw.Step == nil || raw.Config == nil || raw.Version == nil || raw.Files == nil:
		return nil, errors.New("it must hold step, config_sha256, ragen_version and files")
	case *raw.Step < 0:
		return nil, fmt.Errorf("step %d is negative", *raw.Step)
	}
	for n, sum := range raw.Files {
		if n == "" || n == Name || n != filepath.Base(n) || n == "." || n == ".." || strings.ContainsRune(n, '\\') {
			return nil, fmt.Errorf("files lists %q, which is not a file of the folder", n)
		}
		if d, err := hex.DecodeString(sum); err != nil || len(d) != sha256.Size || sum != strings.ToLower(sum) {
			return nil, fmt.Errorf("the sha256 of %s is %q, not 64 lowercase hex digits", n, sum)
		}
	}
	return &Manifest{Step: *raw.Step, Config: *raw.Config, Version: *raw.Version, Files: raw.Files}, nil
}

// files lists the regular files directly in dir but the manifest, sorted.
func files(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if e.Type().IsRegular() && e.Name() != Name {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// FileSHA256 is the SHA-256 of a file's bytes, hex.
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("reading %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
