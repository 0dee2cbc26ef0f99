package config

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"go.yaml.in/yaml/v3"
)

// FuzzLoad: no preset and --set override make Load panic, and a config it
// accepts is valid, and saves to a file that loads back equal.
func FuzzLoad(f *testing.F) {
	for _, p := range []string{"bandit.yaml", "smoke.yaml", "sokoban.yaml"} {
		data, err := os.ReadFile(filepath.Join("../../configs", p))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, "steps=3")
	}
	for _, s := range [][2]string{
		{"", "steps=7.9"}, {"", "steps="}, {"", "train.n_groups=[-1]"}, {"steps: 7.9\n", "name=x"},
		{"train: {tags: [Bandit], n_groups: [2], env_groups: 2}\n", "train={group_size: 3}"},
		{"actor: &a {lr: 1e-6}\ncritic: *a\n", "actor.lr=.nan"}, {"<<: {steps: 2}\n", "seed=0x10"},
		{"- 1\n", "x"}, {"steps: !!str 3\n", "algorithm.use_kl_loss=yes"}, {"{", "=1"},
		{"custom_envs: {}\n", "custom_envs.SimpleSokoban.max_tokens=7"},
		{"custom_envs:\n  L: {env_type: frozen_lake, env_config: {p: 0.5}}\n", "custom_envs.L.env_config.dim_room=[]"},
		{"custom_envs:\n  B: {env_type: sokoban, env_config: {dim_room: [5, 7]}}\n", "custom_envs.B=~"},
	} {
		f.Add([]byte(s[0]), s[1])
	}
	f.Fuzz(func(t *testing.T, file []byte, set string) {
		c, err := parse("c.yaml", file, []string{set})
		if err != nil {
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("Load accepted an invalid config: %v", err)
		}
		saved, err := yaml.Marshal(c) // what Save writes
		if err != nil {
			t.Fatalf("saving: %v", err)
		}
		back, err := parse("saved.yaml", saved, nil)
		if err != nil {
			t.Fatalf("the saved config does not load: %v", err)
		}
		if !reflect.DeepEqual(back, c) {
			t.Fatalf("the saved config loads as\n%+v\nnot\n%+v", back, c)
		}
	})
}
