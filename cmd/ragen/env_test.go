package main

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/ragen-go/ragen/envs"
)

func TestEnvJSON(t *testing.T) {
	for _, tt := range []struct {
		tag         string
		seed        int64
		actions     bool // a discrete action list is expected
		successProb bool
	}{
		{"SimpleSokoban", 3, true, false},
		{"LargerSokoban", 7, true, false},
		{"FrozenLake", 1, true, true},
		{"Bandit", 2, true, false},
		{"Countdown", 5, false, false},
	} {
		t.Run(tt.tag, func(t *testing.T) {
			var out, errb bytes.Buffer
			args := []string{"env", "--env", tt.tag, "--seed", strconv.FormatInt(tt.seed, 10), "--json"}
			if code := runMain(args, &out, &errb); code != 0 {
				t.Fatalf("exit %d, stderr %s", code, errb.String())
			}
			var r envReport
			if err := json.Unmarshal(out.Bytes(), &r); err != nil {
				t.Fatalf("%v in %s", err, out.String())
			}
			e, err := envs.New(tt.tag)
			if err != nil {
				t.Fatal(err)
			}
			obs, err := e.Reset(tt.seed)
			if err != nil {
				t.Fatal(err)
			}
			if r.Tag != tt.tag || r.Seed != tt.seed || r.Observation != obs {
				t.Errorf("report %+v; want tag %s seed %d observation %q", r, tt.tag, tt.seed, obs)
			}
			if got := len(r.Actions) > 0; got != tt.actions || (tt.actions && strings.Join(r.Actions, ",") != strings.Join(e.Actions(), ",")) {
				t.Errorf("actions %v, want %v", r.Actions, e.Actions())
			}
			if len(r.Solution) == 0 || (r.SuccessProb != nil) != tt.successProb {
				t.Fatalf("solution %v success_prob %v", r.Solution, r.SuccessProb)
			}
			if tt.successProb {
				return // a policy's first action, not a solution to replay
			}
			var done, success bool
			for _, a := range r.Solution {
				_, _, done, info := e.Step(a)
				success = info.Success
				if done {
					break
				}
			}
			if !success {
				t.Errorf("replaying the solution %v did not succeed (done %v)", r.Solution, done)
			}
		})
	}
	// The JSON keys are the documented ones.
	var out, errb bytes.Buffer
	runMain([]string{"env", "--env", "Countdown", "--json"}, &out, &errb)
	var raw map[string]any
	if err := json.Unmarshal(out.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"tag", "seed", "observation", "actions", "solution"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("key %q missing from %s", k, out.String())
		}
	}
}

func TestEnvPlayPipedInput(t *testing.T) {
	e, _ := envs.New("SimpleSokoban")
	if _, err := e.Reset(4); err != nil {
		t.Fatal(err)
	}
	sol, ok := e.(envs.Solver).Solve()
	if !ok {
		t.Fatal("seed 4 unsolved")
	}
	// A junk line first, then the solution typed in lower case, one action a line.
	input := "fly\n" + strings.ToLower(strings.Join(sol, "\n")) + "\n"
	out := runPlay(t, input, "--env", "SimpleSokoban", "--seed", "4", "--max-actions", "0")
	for _, want := range []string{"no valid action in \"fly\" (format penalty)", "> " + sol[0] + "\n", "reward: -0.1  done: false",
		"done: true  success: true", "episode over: success true"} {
		if !strings.Contains(out, want) {
			t.Errorf("play output lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "\n> ") != len(sol) {
		t.Errorf("want %d steps in:\n%s", len(sol), out)
	}
}

func TestEnvPlayBudgetAndEOF(t *testing.T) {
	// Bandit takes one action; Countdown answers are free text.
	out := runPlay(t, "Phoenix || Dragon\n", "--env", "Bandit", "--seed", "0")
	if strings.Count(out, "\n> ") != 1 || !strings.Contains(out, "episode over") {
		t.Errorf("bandit play:\n%s", out)
	}
	out = runPlay(t, "", "--env", "FrozenLake", "--seed", "0")
	if !strings.Contains(out, "input ended after 0 actions") {
		t.Errorf("empty input:\n%s", out)
	}
	out = runPlay(t, "up||up||up||up||up\nup||up||up||up||up\nup\n", "--env", "SimpleSokoban", "--seed", "0")
	if !strings.Contains(out, "budget of 10 actions is spent") || strings.Count(out, "\n> ") != 10 {
		t.Errorf("budget not enforced:\n%s", out)
	}
	out = runPlay(t, "1 + 2\n", "--env", "Countdown", "--seed", "0")
	if !strings.Contains(out, "Your answer get 0 points.") || !strings.Contains(out, "episode over: success false") {
		t.Errorf("countdown play:\n%s", out)
	}
}

func TestEnvErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"env"}, "--env is required"},
		{[]string{"env", "--env", "Sokobann"}, `unknown environment tag "Sokobann"`},
		{[]string{"env", "--env", "Bandit", "--json", "--play"}, "cannot be combined"},
		{[]string{"env", "--env", "Bandit", "--max-actions", "-3"}, "--max-actions -3"},
		{[]string{"env", "--env", "Bandit", "extra"}, `unexpected argument "extra"`},
		{[]string{"env", "--env", "Bandit", "--seed", "x"}, "--seed"},
	} {
		var out, errb bytes.Buffer
		if code := runMain(tt.args, &out, &errb); code == 0 || !strings.Contains(errb.String(), tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want an error mentioning %q", tt.args, code, errb.String(), tt.want)
		}
	}
}

func TestEnvText(t *testing.T) {
	var out, errb bytes.Buffer
	if code := runMain([]string{"env", "--env", "SokobanDifferentGridVocab", "--seed", "1"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"SokobanDifferentGridVocab, seed 1", "You are solving the Sokoban puzzle.", "State:\nWWWWWW", "actions: Up, Down, Left, Right", "solution: "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func runPlay(t *testing.T, input string, flags ...string) string {
	t.Helper()
	old := envStdin
	envStdin = strings.NewReader(input)
	defer func() { envStdin = old }()
	var out, errb bytes.Buffer
	if code := runMain(append([]string{"env", "--play"}, flags...), &out, &errb); code != 0 {
		t.Fatalf("exit %d, stderr %s", code, errb.String())
	}
	return out.String()
}
