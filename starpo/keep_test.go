package starpo

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// dirNames lists the entries of dir, sorted.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// The keep rule: the newest keep_checkpoints, the multiples of keep_every,
// always the one just saved; later folders and files stay, leftover
// .partial folders go.
func TestPruneCheckpoints(t *testing.T) {
	for _, tc := range []struct {
		keep, every int
		want        []string
	}{
		{3, 0, []string{"step-000008", "step-000009", "step-000010"}},
		{3, 4, []string{"step-000004", "step-000008", "step-000009", "step-000010"}},
		{1, 0, []string{"step-000010"}},
		{1, 5, []string{"step-000005", "step-000010"}},
		{0, 0, []string{"step-000001", "step-000002", "step-000003", "step-000004", "step-000005", "step-000006",
			"step-000007", "step-000008", "step-000009", "step-000010"}},
	} {
		root := t.TempDir()
		for _, n := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12} {
			if err := os.MkdirAll(filepath.Join(root, checkpointName(n)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, checkpointName(n), "trainer.json"), []byte("{}"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		// An interrupted save, an interrupted prune.
		for _, leftover := range []string{"step-000011.partial", "step-000001.partial/x"} {
			if err := os.MkdirAll(filepath.Join(root, leftover), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(root, latestFile), []byte("step-000010\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := pruneCheckpoints(root, 10, tc.keep, tc.every); err != nil {
			t.Fatal(err)
		}
		want := append(slices.Clone(tc.want), latestFile, "step-000012") // a later step is another timeline's
		slices.Sort(want)
		if got := dirNames(t, root); !slices.Equal(got, want) {
			t.Errorf("keep %d every %d: %v, want %v", tc.keep, tc.every, got, want)
		}
	}
}

// A checkpoint is not started on a disk without room for it: the error is
// one sentence with both sizes, and nothing is written. The estimate
// bounds the real checkpoint from above by at most a fifth.
func TestSaveNeedsRoom(t *testing.T) {
	tr := newTinyTrainer(t, filepath.Join(t.TempDir(), "tiny"), 2, 2, 1)
	dir := t.TempDir()
	root := filepath.Join(dir, "checkpoints")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	r := &Run{Cfg: tr.Cfg, Dir: dir, Trainer: tr, saved: -1}
	measure := freeSpace
	freeSpace = func(string) (uint64, error) { return 1_200_000, nil }
	err := r.save(2)
	freeSpace = measure
	need := tr.checkpointBytes()
	want := root + ": 1.2 MB free, a checkpoint needs about " + gigabytes(need) +
		"; free space, or lower keep_checkpoints and --resume"
	if err == nil || err.Error() != want {
		t.Fatalf("save on a full disk: %v\nwant %s", err, want)
	}
	if names := dirNames(t, root); len(names) != 0 {
		t.Fatalf("a refused save wrote %v", names)
	}

	if err := r.save(2); err != nil {
		t.Fatal(err)
	}
	var size uint64
	filepath.WalkDir(filepath.Join(root, checkpointName(2)), func(_ string, d fs.DirEntry, _ error) error {
		if info, err := d.Info(); err == nil && !d.IsDir() {
			size += uint64(info.Size())
		}
		return nil
	})
	if need < size || float64(need) > 1.2*float64(size) {
		t.Errorf("estimated %d bytes for a checkpoint of %d", need, size)
	}
	for _, tc := range []struct {
		b    uint64
		want string
	}{{1_200_000, "1.2 MB"}, {99_999_999, "100.0 MB"}, {100_000_000, "0.1 GB"}, {2_345_000_000, "2.3 GB"}} {
		if got := gigabytes(tc.b); got != tc.want {
			t.Errorf("gigabytes(%d) = %q, want %q", tc.b, got, tc.want)
		}
	}
}
