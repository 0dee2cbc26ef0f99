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
		{"", []string{"actor=1", "actor.lr=1"}, "--set actor=1: actor is a section"},
		{"", []string{"actor.lr.x=1"}, "--set actor.lr.x=1: actor.lr is not a section"},
		{filepath.Join(t.TempDir(), "missing.yaml"), nil, "missing.yaml"},
	} {
		_, err := Load(tc.path, tc.sets)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Load(%q, %v) = %v, want an error containing %q", tc.path, tc.sets, err, tc.want)
		}
	}
}

// A --set value is held to its key's type, and every error about one is a
// sentence that names the argument as given: never a line of a merged YAML
// text, never a silent truncation or reset.
func TestSetStrict(t *testing.T) {
	for _, tc := range []struct {
		sets []string
		want string // the whole error
	}{
		{[]string{"steps=7.9"}, "--set steps=7.9: steps is an integer"},
		{[]string{"steps="}, "--set steps=: the value is empty; steps is an integer"},
		{[]string{"steps= "}, "--set steps= : the value is empty; steps is an integer"},
		{[]string{"steps=null"}, "--set steps=null: steps is an integer, not null"},
		{[]string{"steps=# a comment"}, "--set steps=# a comment: the value is empty; steps is an integer"},
		{[]string{"steps=~"}, "--set steps=~: steps is an integer, not null"},
		{[]string{"steps=abc"}, "--set steps=abc: steps is an integer"},
		{[]string{"steps=[1]"}, "--set steps=[1]: steps is an integer"},
		{[]string{"steps=[1"}, "--set steps=[1: the value is not valid YAML (line 1: did not find expected ',' or ']')"},
		{[]string{"actor.lr=fast"}, "--set actor.lr=fast: actor.lr is a number"},
		{[]string{"algorithm.use_kl_loss=maybe"}, "--set algorithm.use_kl_loss=maybe: algorithm.use_kl_loss is a boolean"},
		{[]string{"builtin_model.seed=-1"}, "--set builtin_model.seed=-1: builtin_model.seed is a non-negative integer"},
		{[]string{"algorithm.autocast="}, `--set algorithm.autocast=: the value is empty; ` +
			`algorithm.autocast is a string (an empty string is written algorithm.autocast="")`},
		{[]string{"name=a: b"}, "--set name=a: b: name is a string"},
		{[]string{"train.n_groups=-1"}, "--set train.n_groups=-1: train.n_groups is a list of integers"},
		{[]string{"train.n_groups=[1.5]"}, "--set train.n_groups=[1.5]: train.n_groups[0] is an integer, not 1.5"},
		{[]string{"train={tagz: [Bandit]}"}, `--set train={tagz: [Bandit]}: train has no key "tagz"`},
		{[]string{"nosuchkey=1"}, `--set nosuchkey=1: unknown key "nosuchkey"`},
		{[]string{"actor.lrr=1"}, `--set actor.lrr=1: actor has no key "lrr"`},
		// Validation errors name the --set argument that touched the key.
		{[]string{"train.tags=[Bandit, SimpleSokoban]", "train.n_groups=[-2, 10]"},
			"--set train.n_groups=[-2, 10]: train.n_groups[0] -2 (tag Bandit) must be ≥ 1"},
		{[]string{"train.n_groups=[3]"}, "--set train.n_groups=[3]: train.n_groups sum to 3, but train.env_groups is 8"},
		{[]string{"steps=-1"}, "--set steps=-1: steps -1 must be ≥ 0"},
		{[]string{"actor.lr=.nan"}, "--set actor.lr=.nan: actor.lr NaN must be a finite number ≥ 0"},
		{[]string{"critic.grad_clip=0"}, "--set critic.grad_clip=0: critic.grad_clip 0 must be a finite number > 0"},
		{[]string{"rollout.top_p=1.5"}, "--set rollout.top_p=1.5: rollout.top_p 1.5 must be in (0, 1]"},
		{[]string{"algorithm.clip_c=1"}, "--set algorithm.clip_c=1: algorithm.clip_c 1 must be a finite number > 1"},
		{[]string{"actor.warmup_steps=-2"},
			"--set actor.warmup_steps=-2: actor.warmup_steps -2 must be ≥ 0, or -1 to use warmup_ratio"},
		{[]string{"actor.lr=-1"}, "--set actor.lr=-1: actor.lr -1 must be a finite number ≥ 0"},
		{[]string{"critic.warmup_ratio=2"}, "--set critic.warmup_ratio=2: critic.warmup_ratio 2 must be in [0, 1]"},
		{[]string{"sft.lr=-1"}, "--set sft.lr=-1: sft.lr -1 must be a finite number ≥ 0"},
		// The reasoning keys.
		{[]string{"reasoning.consistency=-0.1"},
			"--set reasoning.consistency=-0.1: reasoning.consistency -0.1 must be a finite number ≥ 0"},
		{[]string{"reasoning.claims=.inf"}, "--set reasoning.claims=.inf: reasoning.claims +Inf must be a finite number ≥ 0"},
		{[]string{"reasoning.plan=-1"}, "--set reasoning.plan=-1: reasoning.plan -1 must be a finite number ≥ 0"},
		{[]string{"echo.baseline_steps=0"}, "--set echo.baseline_steps=0: echo.baseline_steps 0 must be ≥ 1"},
		{[]string{"echo.collapse_frac=1"}, "--set echo.collapse_frac=1: echo.collapse_frac 1 must be in (0, 1)"},
		{[]string{"echo.spike_factor=1"}, "--set echo.spike_factor=1: echo.spike_factor 1 must be a finite number > 1"},
		{[]string{"echo.think_collapse_frac=0"},
			"--set echo.think_collapse_frac=0: echo.think_collapse_frac 0 must be in (0, 1)"},
		{[]string{"echo.mi_collapse_frac=.nan"},
			"--set echo.mi_collapse_frac=.nan: echo.mi_collapse_frac NaN must be in (0, 1)"},
		{[]string{"collapse.every=-1"}, "--set collapse.every=-1: collapse.every -1 must be ≥ 0 (0 never measures)"},
		{[]string{"collapse.samples=1"}, "--set collapse.samples=1: collapse.samples 1 must be in [2, 256]: " +
			"the estimate compares samples with each other, at samples² scorings"},
		{[]string{"sft.think=long"}, `--set sft.think=long: sft.think "long" must be grounded or short`},
		// RAGEN-2's rollout filter and bi-level GAE.
		{[]string{"rollout_filter.strategy=top_q"}, `--set rollout_filter.strategy=top_q: rollout_filter.strategy ` +
			`"top_q" is not one of "" (StarPO-S: algorithm.filter_ratio), top_p, top_k, top_k_abs, min_p`},
		{[]string{"rollout_filter.type=biggest"},
			`--set rollout_filter.type=biggest: rollout_filter.type "biggest" is not largest or smallest`},
		{[]string{"rollout_filter.top_p_prob_mode=cubic"},
			`--set rollout_filter.top_p_prob_mode=cubic: rollout_filter.top_p_prob_mode "cubic" is not linear or softmax`},
		{[]string{"rollout_filter.metric=loss"}, `--set rollout_filter.metric=loss: rollout_filter.metric "loss" ` +
			`is not one of reward_variance, reward, reward_sum, entropy, entropy_variance, length`},
		{[]string{"rollout_filter.loss_scaling=log"},
			`--set rollout_filter.loss_scaling=log: rollout_filter.loss_scaling "log" is not one of none, linear, sqrt`},
		{[]string{"rollout_filter.selection_eps=-1"},
			"--set rollout_filter.selection_eps=-1: rollout_filter.selection_eps -1 must be a finite number ≥ 0"},
		{[]string{"rollout_filter.empty_stop_steps=-1"}, "--set rollout_filter.empty_stop_steps=-1: " +
			"rollout_filter.empty_stop_steps -1 must be ≥ 0 (0: never stop on steps that kept nothing)"},
		{[]string{"rollout_filter.metric=entropy"}, "--set rollout_filter.metric=entropy: rollout_filter.metric " +
			"entropy needs a rollout_filter.strategy: without one, StarPO-S's algorithm.filter_ratio and " +
			"filter_type choose the groups by reward std"},
		{[]string{"rollout_filter.include_zero=false"}, "--set rollout_filter.include_zero=false: " +
			"rollout_filter.include_zero false needs a rollout_filter.strategy: without one, StarPO-S's " +
			"algorithm.filter_ratio and filter_type choose the groups by reward std"},
		{[]string{"rollout_filter.strategy=top_p", "rollout_filter.value=0"},
			"--set rollout_filter.value=0: rollout_filter.value 0 must be in (0, 1] for strategy top_p"},
		{[]string{"rollout_filter.strategy=min_p", "rollout_filter.value=1.5"},
			"--set rollout_filter.value=1.5: rollout_filter.value 1.5 must be in (0, 1] for strategy min_p"},
		{[]string{"rollout_filter.strategy=top_k_abs", "rollout_filter.value=2.5"}, "--set rollout_filter.value=2.5: " +
			"rollout_filter.value 2.5 must be a whole number of groups ≥ 1 for strategy top_k_abs"},
		{[]string{"algorithm.high_level_gamma=1.5"},
			"--set algorithm.high_level_gamma=1.5: algorithm.high_level_gamma 1.5 must be in [0, 1]"},
		{[]string{"algorithm.adv_estimator=grpo", "algorithm.bi_level_gae=true"}, "--set algorithm.bi_level_gae=true: " +
			"algorithm.bi_level_gae needs algorithm.adv_estimator gae (the turn level bootstraps from the critic), not grpo"},
		{[]string{"algorithm.bi_level_gae=true", "algorithm.use_turn_scores=true"},
			"--set algorithm.use_turn_scores=true: algorithm.bi_level_gae does not go with algorithm.use_turn_scores " +
				"(RAGEN refuses the pair: its bi-level GAE does not support turn scores yet)"},
		// The lora keys.
		{[]string{"lora.rank=-1"}, "--set lora.rank=-1: lora.rank -1 must be ≥ 0 (0 trains every weight)"},
		{[]string{"lora.alpha=0"}, "--set lora.alpha=0: lora.alpha 0 must be a finite number > 0"},
		{[]string{"lora.alpha=.inf"}, "--set lora.alpha=.inf: lora.alpha +Inf must be a finite number > 0"},
		{[]string{"lora.targets=[]"}, "--set lora.targets=[]: lora.targets is empty; name projections from [q_proj k_proj v_proj o_proj gate_proj up_proj down_proj]"},
		{[]string{"lora.targets=[q_proj, lm_head]"}, `--set lora.targets=[q_proj, lm_head]: lora.targets[1] "lm_head" ` +
			"is not one of [q_proj k_proj v_proj o_proj gate_proj up_proj down_proj]"},
		{[]string{"lora.targets=[v_proj, v_proj]"}, "--set lora.targets=[v_proj, v_proj]: lora.targets[1] v_proj is listed twice"},
		{[]string{"lora.targets=q_proj"}, "--set lora.targets=q_proj: lora.targets is a list of strings"},
		{[]string{"lora.rank=8", "critic.train_layers=2"}, "--set critic.train_layers=2: lora.rank 8 trains adapters " +
			"on every layer; critic.train_layers 2 must be 0 with it"},
	} {
		_, err := Load("", tc.sets)
		if err == nil || err.Error() != tc.want {
			t.Errorf("Load(%q) = %v\nwant %s", tc.sets, err, tc.want)
		}
	}
	// Integral numbers are integers, whichever way they are written.
	c, err := Load("", []string{"steps=1e3", "val_every=7.0", "seed=0x10", "train={group_size: 4}",
		"algorithm.use_kl_loss=true"})
	if err != nil || c.Steps != 1000 || c.ValEvery != 7 || c.Seed != 16 || c.Train.GroupSize != 4 ||
		c.Train.EnvGroups != 8 || !c.Algorithm.UseKLLoss {
		t.Fatalf("Load = %+v, %v", c, err)
	}
}

// A preset is held to the same types, with its own line numbers.
func TestFileStrict(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ body, want string }{
		{"name: x\nsteps: 7.9\n", "line 2: steps is an integer, not 7.9"},
		{"train:\n  n_groups: [1, 2.5]\n", "line 2: train.n_groups[1] is an integer, not 2.5"},
		{"algorithm:\n  gamma: 1\n  fliter_ratio: 0.5\n", `line 3: algorithm has no key "fliter_ratio"`},
		{"stpes: 3\n", `line 1: unknown key "stpes"`},
		{"actor: 1\n", "line 1: actor is a section, not 1"},
		{"steps: [1\n", "line 1: did not find expected"},
		{"- 1\n", "line 1: a config is a mapping of keys, not a list"},
	} {
		path := filepath.Join(dir, "c.yaml")
		if err := os.WriteFile(path, []byte(tc.body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path, nil)
		if err == nil || !strings.HasPrefix(err.Error(), path+": ") || !strings.Contains(err.Error(), tc.want) ||
			strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v; want one line naming %s and saying %q", tc.body, err, path, tc.want)
		}
	}
}
