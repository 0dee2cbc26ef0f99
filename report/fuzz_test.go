package report

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// FuzzMetrics: no metrics.jsonl makes the report's reader panic, and
// metrics it accepts render as a run's page and, averaged with themselves
// (a study's seeds), as a comparison page.
func FuzzMetrics(f *testing.F) {
	f.Add([]byte(`{"step":0,"timing_s/testing":1.5,"val-env/Bandit/success":0.25,"val-env/Bandit/pass@1":0.25}
{"step":1,"actor/pg_loss":-0.01,"critic/vf_loss":0.3,"timing_s/step":2.1,"perf/max_memory_mb":812,"warn/echo_trap":1}
{"step":2,"actor/pg_loss":null,"rollout/in_group_std":0.5,"perf/gen_tokens_per_s":110}
{"step":2,"timing_s/testing":1.4,"val-env/Bandit/success":0.5}
`))
	f.Add([]byte("{\"step\":1,\"x\":1}\n{\"step\":2,\"x\""))                                                  // a line cut short by a kill
	f.Add([]byte("{\"step\":1}\nnot json\n{\"step\":2}\n"))                                                   // a malformed line
	f.Add([]byte(strings.Repeat(`{"step":1,"timing_s/testing":1,"val-env/Bandit/success":1.7e308}`+"\n", 2))) // a mean that overflows a sum
	f.Add([]byte("[1,2]\n\"s\"\n{\"no_step\":1}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := readMetrics("metrics.jsonl", bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, rows := range [][]Row{m.Train, m.Val} {
			for _, r := range rows {
				if _, ok := r["step"]; !ok {
					t.Fatalf("a row without a step: %v", r)
				}
			}
		}
		run := &Run{Dir: "runs/x", Name: "x", Config: "name: x\nsteps: 2\n", Metrics: m}
		if err := renderPage(io.Discard, "x", []*Run{run}, nil, &texts{}); err != nil {
			t.Fatalf("a run's page: %v", err)
		}
		mean := MeanRun("mean", []*Run{run, run})
		if err := renderPage(io.Discard, "mean", []*Run{mean, run}, nil, &texts{}); err != nil {
			t.Fatalf("a comparison page: %v", err)
		}
	})
}

// FuzzTrajectories: no trajectories/*.jsonl file makes the report's reader
// or its trajectory browser panic, and what it accepts renders.
func FuzzTrajectories(f *testing.F) {
	f.Add([]byte(`{"env_id":0,"group_id":0,"tag":"Bandit","seed":123,"messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"Pick an arm.\nTurn 1:\nState: two arms"},{"role":"assistant","content":"<think>phoenix</think><answer>phoenix</answer>"}],"turn_rewards":[1],"penalty":0,"shaping":0,"score":1,"success":true,"num_actions":1}
{"env_id":1,"group_id":0,"tag":"Bandit","seed":123,"messages":[{"role":"user","content":"Turn 1:\n"},{"role":"assistant","content":"no tags || at all"}],"turn_rewards":[],"penalty":-0.1,"score":-0.1,"success":false,"num_actions":0}
`))
	f.Add([]byte(`{"env_id":2,"group_id":-5,"messages":[{"role":"assistant","content":"<answer>a || b ||</answer>"},{"role":"assistant","content":"x"}],"turn_rewards":[0.5]}` + "\n{\"env_id\":"))
	f.Add([]byte("{\"messages\": 3}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ts, err := readTrajectories("train-step-000001.jsonl", bytes.NewReader(data))
		if err != nil {
			return
		}
		var tx texts
		files := []fileData{{Label: "train step 1", Kind: "train", Step: 1, Groups: groups(ts, 40, &tx)}}
		run := &Run{Dir: "runs/x", Name: "x"}
		if err := renderPage(io.Discard, "x", []*Run{run}, files, &tx); err != nil {
			t.Fatalf("the page: %v", err)
		}
	})
}
