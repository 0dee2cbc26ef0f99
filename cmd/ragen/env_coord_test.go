package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ragen-go/ragen/envs"
)

// CoordSokoban plays like SimpleSokoban, drawn with its coordinates.
func TestEnvPlayCoordSokoban(t *testing.T) {
	e, _ := envs.New("CoordSokoban")
	if _, err := e.Reset(4); err != nil {
		t.Fatal(err)
	}
	sol, ok := e.(envs.Solver).Solve()
	if !ok {
		t.Fatal("seed 4 unsolved")
	}
	out := runPlay(t, strings.Join(sol, " || ")+"\n", "--env", "CoordSokoban", "--seed", "4")
	for _, want := range []string{"Coordinates: \nBoard size: 6 rows x 6 cols (zero-indexed).\nTargets: (",
		"\nGrid Map: \n#", "> " + sol[0] + "\nCoordinates: \n", "done: true  success: true", "episode over: success true"} {
		if !strings.Contains(out, want) {
			t.Errorf("play output lacks %q:\n%s", want, out)
		}
	}
}

func TestEnvJSONCoordFrozenLake(t *testing.T) {
	var out, errb bytes.Buffer
	if code := runMain([]string{"env", "--env", "CoordFrozenLake", "--seed", "2", "--json"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d, stderr %s", code, errb.String())
	}
	var r envReport
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(r.Observation, "Coordinates: \nBoard size: 4 rows x 4 cols (zero-indexed).\nStart: (") ||
		len(r.Solution) != 1 || r.SuccessProb == nil {
		t.Errorf("report %+v", r)
	}
}

// --config makes a training config's custom_envs playable.
func TestEnvConfigTags(t *testing.T) {
	t.Cleanup(func() { envs.Configure(nil) })
	path := filepath.Join(t.TempDir(), "c.yaml")
	preset := "custom_envs:\n" +
		"  OpenLake: {env_type: frozen_lake, max_actions_per_traj: 2, env_config: {size: 5, p: 1, is_slippery: false}}\n"
	if err := os.WriteFile(path, []byte(preset), 0o644); err != nil {
		t.Fatal(err)
	}
	out := runPlay(t, "up || up || up\n", "--config", path, "--env", "OpenLake", "--seed", "1")
	for i, row := range strings.SplitN(out, "\n", 6)[:5] { // the 5×5 map
		if utf8.RuneCountInString(row) != 5 {
			t.Fatalf("row %d %q of a 5×5 map:\n%s", i, row, out)
		}
	}
	if !strings.Contains(out, "budget of 2 actions is spent") {
		t.Errorf("OpenLake's budget of 2 not applied:\n%s", out)
	}
}
