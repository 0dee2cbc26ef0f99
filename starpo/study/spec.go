// Package study is `ragen study`'s logic: a grid of training runs (arms ×
// environments × seeds) from one shared warm start, and the comparison of
// their validation curves — success at the end and at the peak, mean ±
// standard error over seeds, and when the Echo Trap's collapse signals
// fired. The runs themselves are ordinary `ragen train` run folders.
package study

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ragen-go/ragen/envs"
	"github.com/ragen-go/ragen/starpo/config"
)

// Spec is a study file (configs/study/study.yaml).
type Spec struct {
	Name        string   `yaml:"name"`         // run folder runs/<name> by default
	Base        string   `yaml:"base"`         // the training config every run starts from, relative to the study file
	Seeds       int      `yaml:"seeds"`        // runs per arm and environment
	Envs        []string `yaml:"envs"`         // environment tags; each run trains and validates on one
	TrainGroups int      `yaml:"train_groups"` // groups per training step (× the base's group_size members)
	ValSeeds    int      `yaml:"val_seeds"`    // fixed validation episodes per run
	Arms        []Arm    `yaml:"arms"`

	dir string // folder of the study file, for Base
}

// Arm is one training recipe: config overrides on top of the base.
type Arm struct {
	Name  string   `yaml:"name"`  // folder name
	Label string   `yaml:"label"` // for tables and legends
	Envs  []string `yaml:"envs"`  // the environments it runs on; empty = all of the study's
	Set   []string `yaml:"set"`   // key=value overrides, as `ragen train --set`
}

// Cell is one run of the grid.
type Cell struct {
	Arm  Arm
	Env  string
	Seed int // 1..Seeds
}

// Dir is the cell's run folder under the study folder.
func (c Cell) Dir(root string) string {
	return filepath.Join(root, "runs", c.Env, c.Arm.Name, "seed"+strconv.Itoa(c.Seed))
}

// String names the cell in progress lines.
func (c Cell) String() string { return fmt.Sprintf("%s %s seed %d", c.Env, c.Arm.Name, c.Seed) }

// LoadSpec reads and checks a study file; errors name the file and the key.
func LoadSpec(path string) (Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Spec{}, fmt.Errorf("reading the study file: %w", err)
	}
	var s Spec
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil {
		return Spec{}, fmt.Errorf("%s: %w", path, err)
	}
	s.dir = filepath.Dir(path)
	if err := s.validate(); err != nil {
		return Spec{}, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

func (s Spec) validate() error {
	switch {
	case s.Name == "":
		return errors.New("name is required")
	case s.Base == "":
		return errors.New("base (the training config the runs start from) is required")
	case s.Seeds < 1 || s.Seeds > maxSeeds:
		return fmt.Errorf("seeds is %d; give 1 to %d", s.Seeds, maxSeeds)
	case len(s.Envs) == 0:
		return errors.New("envs is empty; list the environment tags to study")
	case s.TrainGroups < 1:
		return fmt.Errorf("train_groups is %d; give at least 1", s.TrainGroups)
	case s.ValSeeds < 1:
		return fmt.Errorf("val_seeds is %d; give at least 1", s.ValSeeds)
	case len(s.Arms) == 0:
		return errors.New("arms is empty; give at least one training recipe")
	}
	known := envs.Tags()
	for i, e := range s.Envs {
		if !slices.Contains(known, e) {
			return fmt.Errorf("envs: unknown environment tag %q (known: %v)", e, known)
		}
		if slices.Contains(s.Envs[:i], e) {
			return fmt.Errorf("envs: %s is listed twice", e)
		}
	}
	names := map[string]bool{}
	for i, a := range s.Arms {
		switch {
		case a.Name == "":
			return fmt.Errorf("arms[%d]: name is required", i)
		case names[a.Name]:
			return fmt.Errorf("arms[%d]: name %q is used twice", i, a.Name)
		case filepath.Base(a.Name) != a.Name || a.Name == "." || a.Name == "..":
			return fmt.Errorf("arms[%d]: name %q must be a plain folder name", i, a.Name)
		}
		names[a.Name] = true
		for _, e := range a.Envs {
			if !slices.Contains(s.Envs, e) {
				return fmt.Errorf("arms[%d] (%s): environment %q is not in the study's envs %v", i, a.Name, e, s.Envs)
			}
		}
	}
	if n := s.cellCount(); n > maxCells {
		return fmt.Errorf("the grid has %d runs (seeds × environments × arms); a study takes at most %d", n, maxCells)
	}
	return nil
}

// A study's grid is bounded, so that a mistyped seeds: 1000000 (or a
// damaged study.json) is an error, not hours of listing cells.
const (
	maxSeeds = 1000
	maxCells = 10000
)

// cellCount is len(s.Cells()) without building them.
func (s Spec) cellCount() int {
	n := 0
	for _, env := range s.Envs {
		for _, a := range s.Arms {
			if a.RunsOn(env) {
				n++
			}
		}
	}
	return n * s.Seeds
}

// BasePath is the base config's path.
func (s Spec) BasePath() string {
	if filepath.IsAbs(s.Base) {
		return s.Base
	}
	return filepath.Join(s.dir, s.Base)
}

// ArmLabel is the arm's label, or its name.
func (a Arm) ArmLabel() string {
	if a.Label != "" {
		return a.Label
	}
	return a.Name
}

// RunsOn tells whether the arm runs on env.
func (a Arm) RunsOn(env string) bool { return len(a.Envs) == 0 || slices.Contains(a.Envs, env) }

// Cells is the grid in run order: seed-major, so that a study stopped part
// way has every arm at the same number of seeds.
func (s Spec) Cells() []Cell {
	var out []Cell
	for seed := 1; seed <= s.Seeds; seed++ {
		for _, env := range s.Envs {
			for _, a := range s.Arms {
				if a.RunsOn(env) {
					out = append(out, Cell{Arm: a, Env: env, Seed: seed})
				}
			}
		}
	}
	return out
}

// seedStride separates the training seeds of a study's seeds: seed k trains
// on environment seeds from base.seed + k·seedStride (and seeds its sampler
// and critic from there), far from the validation seeds.
const seedStride = 100_000

// WarmStartConfig is the base config with every study environment in
// training (groups split evenly) and in validation: the shared warm start's
// demonstrations cover all of them. sets are the user's overrides.
func (s Spec) WarmStartConfig(sets []string) (config.Config, error) {
	groups := make([]int, len(s.Envs))
	for i := range groups {
		groups[i] = 1
	}
	val := make([]int, len(s.Envs))
	for i := range val {
		val[i] = s.ValSeeds
	}
	return s.load(append(append(envSets("train", s.Envs, groups), envSets("val", s.Envs, val)...), sets...))
}

// RunConfig is the config of one cell: the base, the cell's environment in
// training (TrainGroups groups) and validation (ValSeeds episodes), the
// arm's overrides, the seed, then the user's overrides.
func (s Spec) RunConfig(c Cell, sets []string) (config.Config, error) {
	base, err := config.Load(s.BasePath(), nil)
	if err != nil {
		return config.Config{}, err
	}
	all := envSets("train", []string{c.Env}, []int{s.TrainGroups})
	all = append(all, envSets("val", []string{c.Env}, []int{s.ValSeeds})...)
	all = append(all, c.Arm.Set...)
	all = append(all,
		"name="+s.Name+"-"+c.Env+"-"+c.Arm.Name+"-seed"+strconv.Itoa(c.Seed),
		"seed="+strconv.FormatInt(base.Seed+int64(c.Seed)*seedStride, 10))
	cfg, err := s.load(append(all, sets...))
	if err != nil {
		return cfg, fmt.Errorf("arm %s on %s: %w", c.Arm.Name, c.Env, err)
	}
	return cfg, nil
}

func (s Spec) load(sets []string) (config.Config, error) { return config.Load(s.BasePath(), sets) }

// envSets are the overrides that put tags with these group counts in a
// config's train or val section (group_size 1 for validation).
func envSets(section string, tags []string, groups []int) []string {
	total := 0
	for _, g := range groups {
		total += g
	}
	out := []string{
		section + ".tags=" + yamlList(tags),
		section + ".n_groups=" + yamlList(groups),
		section + ".env_groups=" + strconv.Itoa(total),
	}
	if section == "val" {
		out = append(out, "val.group_size=1")
	}
	return out
}

// yamlList writes values as a YAML flow list, e.g. [FrozenLake, Bandit].
func yamlList[T any](xs []T) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprint(x)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
