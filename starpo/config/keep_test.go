package config

import "testing"

// keep_checkpoints and keep_every are counts ≥ 0; an error names the --set.
func TestKeepKeys(t *testing.T) {
	c, err := Load("", nil)
	if err != nil || c.KeepCheckpoints != 3 || c.KeepEvery != 0 {
		t.Fatalf("defaults keep_checkpoints %d keep_every %d, %v; want 3 and 0", c.KeepCheckpoints, c.KeepEvery, err)
	}
	for _, tc := range []struct{ set, want string }{
		{"keep_checkpoints=-1",
			"--set keep_checkpoints=-1: keep_checkpoints -1 must be ≥ 0 (the newest checkpoints kept; 0 keeps all)"},
		{"keep_every=-5", "--set keep_every=-5: keep_every -5 must be ≥ 0 (0: no checkpoint kept beyond the newest)"},
	} {
		if _, err := Load("", []string{tc.set}); err == nil || err.Error() != tc.want {
			t.Errorf("--set %s: %v; want %q", tc.set, err, tc.want)
		}
	}
	c, err = Load("", []string{"keep_checkpoints=0", "keep_every=50"})
	if err != nil || c.KeepCheckpoints != 0 || c.KeepEvery != 50 {
		t.Errorf("keep_checkpoints=0 keep_every=50: %+v, %v", c, err)
	}
}
