package manifest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func writeFolder(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "step-000012")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for n, body := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A manifest lists every file with its SHA-256 (sha256("weights") below,
// from `printf weights | sha256sum`), and Verify passes the folder it was
// written for.
func TestWriteVerify(t *testing.T) {
	dir := writeFolder(t, map[string]string{"actor.safetensors": "weights", "trainer.json": `{"step": 12}`})
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil { // folders are not part of it
		t.Fatal(err)
	}
	if err := Write(dir, Manifest{Step: 12, Config: strings.Repeat("ab", 32), Version: "v1"}); err != nil {
		t.Fatal(err)
	}
	m, err := Verify(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := "9a129038d9a00aed0cf6a7ea059ca50a813449061ab87848cf1a13eafdf33b2c"; m.Files["actor.safetensors"] != want {
		t.Errorf("sha256 %s, want %s", m.Files["actor.safetensors"], want)
	}
	if len(m.Files) != 2 || m.Step != 12 || m.Version != "v1" {
		t.Fatalf("manifest %+v", m)
	}
	if m, err := Verify(t.TempDir()); m != nil || err != nil {
		t.Fatalf("a folder without a manifest: %v, %v; want nil, nil", m, err)
	}
}

// Each way a folder can differ from its manifest is one sentence naming
// the file.
func TestVerifyFindsChanges(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(dir string) error
		want   string
	}{
		{"a changed byte", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "actor.safetensors"), []byte("weighTs"), 0o644)
		}, "/actor.safetensors: sha256 does not match manifest.json (the file is corrupt or was changed); --skip-verify loads it anyway"},
		{"a cut file", func(dir string) error { return os.Truncate(filepath.Join(dir, "actor.safetensors"), 3) },
			"/actor.safetensors: sha256 does not match manifest.json"},
		{"a missing file", func(dir string) error { return os.Remove(filepath.Join(dir, "critic.safetensors")) },
			"/critic.safetensors is listed in manifest.json but missing (the folder is incomplete); --skip-verify loads it anyway"},
		{"an added file", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "model.safetensors.index.json"), []byte("{}"), 0o644)
		}, "/model.safetensors.index.json is not listed in manifest.json (it was added after the folder was written); --skip-verify loads it anyway"},
	} {
		dir := writeFolder(t, map[string]string{"actor.safetensors": "weights", "critic.safetensors": "values"})
		if err := Write(dir, Manifest{Step: 12}); err != nil {
			t.Fatal(err)
		}
		if err := tc.change(dir); err != nil {
			t.Fatal(err)
		}
		_, err := Verify(dir)
		if err == nil || !strings.HasPrefix(err.Error(), dir) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want an error naming the file and saying %q", tc.name, err, tc.want)
		}
	}
}

// manifest.json itself is read strictly.
func TestReadStrict(t *testing.T) {
	sum := strings.Repeat("0a", 32)
	for _, tc := range []struct{ body, want string }{
		{`{"step": 1, "config_sha256": "", "ragen_version": "", "files": {}, "extra": 1}`, `unknown key "extra"`},
		{`{"step": 1, "config_sha256": "", "ragen_version": ""}`, "it must hold step, config_sha256, ragen_version and files"},
		{`{"step": -1, "config_sha256": "", "ragen_version": "", "files": {}}`, "step -1 is negative"},
		{`{"step": 1, "config_sha256": "", "ragen_version": "", "files": {"../x": "` + sum + `"}}`, `files lists "../x", which is not a file of the folder`},
		{`{"step": 1, "config_sha256": "", "ragen_version": "", "files": {"manifest.json": "` + sum + `"}}`, `files lists "manifest.json"`},
		{`{"step": 1, "config_sha256": "", "ragen_version": "", "files": {"a": "xyz"}}`, `the sha256 of a is "xyz", not 64 lowercase hex digits`},
		{`{"step": 1, "config_sha256": "", "ragen_version": "", "files": {}} {}`, "data after the JSON object"},
		{``, "not a manifest"},
	} {
		dir := writeFolder(t, map[string]string{Name: tc.body})
		_, err := Read(dir)
		path := filepath.Join(dir, Name)
		if err == nil || !strings.HasPrefix(err.Error(), path+": ") || !strings.Contains(err.Error(), tc.want) ||
			!strings.HasSuffix(err.Error(), "; "+Hint) {
			t.Errorf("%s: %v; want an error naming %s and saying %q", tc.body, err, path, tc.want)
		}
	}
}

// FuzzParse: no manifest.json makes the parser panic, and one it accepts
// encodes back to itself.
func FuzzParse(f *testing.F) {
	sum := strings.Repeat("0a", 32)
	f.Add([]byte(`{"step": 3, "config_sha256": "", "ragen_version": "v1", "files": {"a": "` + sum + `"}}`))
	f.Add([]byte(`{"step": 3, "files": {"../a": "` + sum + `"}}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := parse(b)
		if err != nil {
			return
		}
		enc, _ := json.Marshal(m)
		back, err := parse(enc)
		if err != nil || !reflect.DeepEqual(back, m) {
			t.Fatalf("%+v encodes as %s, which reads back as %+v, %v", m, enc, back, err)
		}
	})
}
