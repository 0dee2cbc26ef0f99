package durable

import (
	"os"
	"path/filepath"
	"testing"
)

// WriteFile replaces a file whole, with the permissions asked for, and
// leaves no temporary file behind.
func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "latest")
	for _, body := range []string{"step-000002\n", "step-000004\n"} {
		if err := WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(path); err != nil || string(b) != body {
			t.Fatalf("read back %q, %v; want %q", b, err, body)
		}
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", st.Mode().Perm())
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d entries in the folder, want only latest", len(ents))
	}
	if err := WriteFile(filepath.Join(dir, "no", "such"), nil, 0o644); err == nil {
		t.Error("writing into a missing folder succeeded")
	}
}

func TestAppendAndSync(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "metrics.jsonl.rolled-back")
	for _, s := range []string{"a\n", "b\n"} {
		if err := AppendFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if b, _ := os.ReadFile(path); string(b) != "a\nb\n" {
		t.Fatalf("appended %q", b)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := SyncFolder(dir); err != nil {
		t.Fatal(err)
	}
	if free, err := Free(dir); err != nil || free == 0 {
		t.Errorf("Free(%s) = %d, %v", dir, free, err)
	}
}
