package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragen-go/ragen/envs"
)

// eval --config evaluates on a tag a training config defines.
func TestEvalConfigTags(t *testing.T) {
	t.Cleanup(func() { envs.Configure(nil) })
	dir := policyCheckpoint(t)
	path := filepath.Join(t.TempDir(), "c.yaml")
	preset := "custom_envs:\n  TinyLake: {env_type: frozen_lake, max_actions_per_traj: 3, env_config: {size: 3}}\n"
	if err := os.WriteFile(path, []byte(preset), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb strings.Builder
	code := runMain([]string{"eval", "--model", dir, "--config", path, "--env", "TinyLake", "--n", "2", "--max-tokens", "8",
		"--max-turn", "1", "--json"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if s := out.String(); !strings.Contains(s, `"tag":"TinyLake"`) || !strings.Contains(s, `"episodes":2`) {
		t.Fatalf("eval output:\n%s", s)
	}
	var o, e strings.Builder
	if code := runMain([]string{"eval", "--model", dir, "--config", path + ".missing", "--env", "TinyLake"}, &o, &e); code == 0 ||
		!strings.Contains(e.String(), "--config") {
		t.Errorf("a missing --config: exit %d, stderr %q", code, e.String())
	}
}
