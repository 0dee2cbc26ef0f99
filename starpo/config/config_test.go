package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPresetsLoad(t *testing.T) {
	files, _ := filepath.Glob("../../configs/*.yaml")
	if len(files) < 5 {
		t.Fatalf("found %d presets", len(files))
	}
	for _, f := range files {
		if _, err := Load(f, nil); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	c, err := Load("../../configs/bandit.yaml", []string{"algorithm.filter_ratio=1", "actor.lr=2e-6",
		"val.tags=[Bandit, BanditTest]", "algorithm.filter_per_tag=true"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Algorithm.FilterRatio != 1 || c.Actor.LR != 2e-6 || c.Rollout.ResponseLength != 500 ||
		c.Val.EnvGroups != 512 || c.Critic.LR != 1e-5 || !c.Algorithm.FilterPerTag {
		t.Fatalf("bandit preset with overrides: %+v", c)
	}
	out := filepath.Join(t.TempDir(), "effective.yaml")
	if err := c.Save(out); err != nil {
		t.Fatal(err)
	}
	back, err := Load(out, nil)
	if err != nil || back.Algorithm.FilterRatio != 1 || back.Actor.LR != 2e-6 || !back.Algorithm.FilterPerTag {
		t.Fatalf("saved config reloads as %+v, %v", back, err)
	}
}

func TestConfigErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("algorithm: {fliter_ratio: 0.5}\n"), 0o644)
	for _, tc := range []struct {
		path string
		sets []string
		want string
	}{
		{bad, nil, "fliter_ratio"},
		{"", []string{"actor.lrr=1"}, "lrr"},
		{"", []string{"nosuchkey=1"}, "nosuchkey"},
		{"", []string{"train.tags=[Nope]"}, `unknown environment tag "Nope"`},
		{"", []string{"train.n_groups=[3]"}, "n_groups sum to 3"},
		{"", []string{"algorithm.adv_estimator=reinforce"}, `adv_estimator "reinforce"`},
		{"", []string{"steps"}, "not key=value"},
		{"", []string{"sft.heldout=-1"}, "sft.heldout -1"},
		{"", []string{"agent.max_context_window=0"}, "agent.max_context_window 0 must be -1"},
		{"", []string{"builtin_model.rope_theta=0"}, "builtin_model.rope_theta 0 must be positive"},
		{"", []string{"rollout.reuse=0"}, "rollout.reuse 0 must be ≥ 1"},
		{"", []string{"actor=1", "actor.lr=1"}, "actor is not a section"},
		{filepath.Join(t.TempDir(), "missing.yaml"), nil, "missing.yaml"},
	} {
		_, err := Load(tc.path, tc.sets)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Load(%q, %v) = %v, want an error containing %q", tc.path, tc.sets, err, tc.want)
		}
	}
}
