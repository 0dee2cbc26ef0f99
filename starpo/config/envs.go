package config

import (
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/ragen-go/ragen/envs"
)

// CustomEnv is one entry of custom_envs, RAGEN's per-tag environment
// settings (config/envs.yaml): a new tag, or changes to a registered one.
// A key left out keeps the registered tag's value, or for a new tag its
// type's (envs.TypeSpec: the type's instruction, 100 tokens, 10 actions for
// sokoban and frozen_lake, 1 for bandit and countdown, RAGEN's dataclass
// defaults for env_config).
type CustomEnv struct {
	// EnvType is sokoban, frozen_lake, bandit or countdown; required for a new tag.
	EnvType           string    `yaml:"env_type,omitempty"`
	MaxActionsPerTraj *int      `yaml:"max_actions_per_traj,omitempty"` // actions executed per episode, across turns
	MaxTokens         *int      `yaml:"max_tokens,omitempty"`           // the prompt's "max response length" hint
	Instruction       *string   `yaml:"env_instruction,omitempty"`      // the start of the first user message
	EnvConfig         EnvConfig `yaml:"env_config,omitempty"`           // the type's own parameters
}

// EnvConfig holds the parameters of every built-in type; an entry sets only
// its own type's (the env tag lists them). The fields are named as the
// envs package's configuration fields they set, which the tests check.
type EnvConfig struct {
	DimRoom     []int    `yaml:"dim_room,omitempty" env:"sokoban"`                  // [rows, columns]; or dim_x and dim_y
	DimX        *int     `yaml:"dim_x,omitempty" env:"sokoban"`                     // rows
	DimY        *int     `yaml:"dim_y,omitempty" env:"sokoban"`                     // columns
	NumBoxes    *int     `yaml:"num_boxes,omitempty" env:"sokoban"`                 // boxes, and as many targets
	MaxSteps    *int     `yaml:"max_steps,omitempty" env:"sokoban,sudoku"`          // steps before the level (or puzzle) gives up
	SearchDepth *int     `yaml:"search_depth,omitempty" env:"sokoban"`              // the generator's reverse-play depth
	Size        *int     `yaml:"size,omitempty" env:"frozen_lake,sudoku,game_2048"` // the map, grid or board is size × size
	P           *float64 `yaml:"p,omitempty" env:"frozen_lake"`                     // probability that a cell is ice
	Slippery    *bool    `yaml:"is_slippery,omitempty" env:"frozen_lake"`           // moves may slip sideways
	SuccessRate *float64 `yaml:"success_rate,omitempty" env:"frozen_lake"`          // chance a slippery move goes as meant
	// Observation is grid, coord or grid_coord.
	Observation *string `yaml:"observation_format,omitempty" env:"sokoban,frozen_lake"`

	LoArmName        *string  `yaml:"lo_arm_name,omitempty" env:"bandit"`         // the low-risk arm
	HiArmName        *string  `yaml:"hi_arm_name,omitempty" env:"bandit"`         // the high-risk arm
	LoArmScore       *float64 `yaml:"lo_arm_score,omitempty" env:"bandit"`        // what the low arm always pays
	HiArmLoScore     *float64 `yaml:"hi_arm_loscore,omitempty" env:"bandit"`      // what the high arm pays when it loses
	HiArmHiScore     *float64 `yaml:"hi_arm_hiscore,omitempty" env:"bandit"`      // what the high arm pays when it wins
	HiArmHiScoreProb *float64 `yaml:"hi_arm_hiscore_prob,omitempty" env:"bandit"` // how often the high arm wins

	MinNums     *int     `yaml:"min_nums,omitempty" env:"countdown"`     // fewest numbers in a task
	MaxNums     *int     `yaml:"max_nums,omitempty" env:"countdown"`     // most numbers in a task
	MinNumber   *int     `yaml:"min_number,omitempty" env:"countdown"`   // smallest number drawn
	MaxNumber   *int     `yaml:"max_number,omitempty" env:"countdown"`   // largest number drawn
	MinTarget   *int     `yaml:"min_target,omitempty" env:"countdown"`   // smallest target
	MaxTarget   *int     `yaml:"max_target,omitempty" env:"countdown"`   // largest target
	Score       *float64 `yaml:"score,omitempty" env:"countdown"`        // reward for a correct equation
	FormatScore *float64 `yaml:"format_score,omitempty" env:"countdown"` // reward for the right numbers, wrong value

	Clues *int `yaml:"clues,omitempty" env:"sudoku"` // givens the puzzle keeps (4 to 16 for size 4, 24 to 81 for 9)

	Target       *int     `yaml:"target,omitempty" env:"game_2048"`         // the tile that counts as success
	TwoProb      *float64 `yaml:"two_prob,omitempty" env:"game_2048"`       // chance a new tile is a 2 rather than a 4
	UseLogReward *bool    `yaml:"use_log_reward,omitempty" env:"game_2048"` // 0.1·log2(merged+1) instead of the merged sum
	StopAtTarget *bool    `yaml:"stop_at_target,omitempty" env:"game_2048"` // end the episode when the target tile appears
}

// envSpecs builds the specs of custom_envs, each checked as envs.Configure
// will check it; an error is one sentence naming the key.
func (c Config) envSpecs() (map[string]envs.Spec, error) {
	if len(c.CustomEnvs) == 0 {
		return nil, nil
	}
	specs := make(map[string]envs.Spec, len(c.CustomEnvs))
	for _, tag := range slices.Sorted(maps.Keys(c.CustomEnvs)) {
		s, err := c.CustomEnvs[tag].spec(tag)
		if err != nil {
			return nil, err
		}
		specs[tag] = s
	}
	return specs, nil
}

// RegisterEnvs makes custom_envs the environment tags of this process
// (envs.Configure): Load calls it. The tags are scoped to one config: this
// replaces whatever another config registered, and registering the same
// config again changes nothing. A process that loads several configs (ragen
// study checks every run's) calls it again before using one's tags.
func (c Config) RegisterEnvs() error {
	specs, err := c.envSpecs()
	if err != nil {
		return err
	}
	return envs.Configure(specs)
}

// useEnvs registers custom_envs (RegisterEnvs) for Load; an empty section is
// no section, as a saved config writes it.
func (c *Config) useEnvs() error {
	if len(c.CustomEnvs) == 0 {
		c.CustomEnvs = nil
	}
	return c.RegisterEnvs()
}

// knownTag says whether tag is registered or defined by custom_envs, without
// looking at what another config registered.
func (c Config) knownTag(tag string) error {
	if _, ok := c.CustomEnvs[tag]; ok {
		return nil
	}
	if _, err := envs.Registered(tag); err != nil {
		return fmt.Errorf("%w (known: %s)", err, strings.Join(c.tags(), ", "))
	}
	return nil
}

// tags lists the registered tags and custom_envs', sorted.
func (c Config) tags() []string {
	var out []string
	for _, t := range envs.Tags() {
		if _, err := envs.Registered(t); err == nil {
			out = append(out, t)
		}
	}
	for t := range c.CustomEnvs {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
}

// spec is the entry's environment: the registered tag's spec or the new
// tag's type's, with the entry's keys applied.
func (e CustomEnv) spec(tag string) (envs.Spec, error) {
	key := "custom_envs." + tag
	s, err := envs.Registered(tag)
	switch {
	case err == nil && e.EnvType != "" && e.EnvType != s.EnvType:
		return s, fmt.Errorf("%s.env_type %s differs from the registered tag's %s", key, e.EnvType, s.EnvType)
	case err != nil && e.EnvType == "":
		return s, fmt.Errorf("%s.env_type is required for a new tag: one of %s", key, strings.Join(envs.EnvTypes(), ", "))
	case err != nil:
		if s, err = envs.TypeSpec(e.EnvType); err != nil {
			return s, fmt.Errorf("%s.env_type %q is not one of %s", key, e.EnvType, strings.Join(envs.EnvTypes(), ", "))
		}
	}
	if e.MaxActionsPerTraj != nil {
		if *e.MaxActionsPerTraj < 1 {
			return s, fmt.Errorf("%s.max_actions_per_traj %d must be ≥ 1", key, *e.MaxActionsPerTraj)
		}
		s.MaxActionsPerTraj = *e.MaxActionsPerTraj
	}
	if e.MaxTokens != nil {
		if *e.MaxTokens < 1 {
			return s, fmt.Errorf("%s.max_tokens %d must be ≥ 1", key, *e.MaxTokens)
		}
		s.MaxTokens = *e.MaxTokens
	}
	if e.Instruction != nil {
		s.Instruction = *e.Instruction
	}
	if s.Config, err = e.EnvConfig.apply(key+".env_config", s.EnvType, s.Config); err != nil {
		return s, err
	}
	if lake, ok := s.Config.(envs.FrozenLakeConfig); ok {
		lake.PolicyHorizon = s.MaxActionsPerTraj // the expert plans for the episode's budget
		s.Config = lake
	}
	if sudoku, ok := s.Config.(envs.SudokuConfig); ok && e.Instruction == nil {
		s.Instruction = envs.SudokuInstruction(sudoku.Size) // the box and digits of its size
	}
	if err := envs.Check(tag, s); err != nil {
		return s, fmt.Errorf("%s: %w", key, err)
	}
	return s, nil
}

// apply sets the keys given in p on cfg, a copy of an envs configuration of
// type envType, and validates the result (the type's Validate, its sentence
// restated with the YAML keys). key is env_config's dotted key.
func (p EnvConfig) apply(key, envType string, cfg any) (any, error) {
	pv, pt := reflect.ValueOf(p), reflect.TypeOf(p)
	allowed := p.keys(envType)
	for i := range pt.NumField() {
		name, _, _ := strings.Cut(pt.Field(i).Tag.Get("yaml"), ",")
		switch {
		case pv.Field(i).IsZero() || slices.Contains(allowed, name):
		case len(allowed) == 0:
			return nil, fmt.Errorf("%s.%s: %s tags take no env_config keys", key, name, envType)
		default:
			return nil, fmt.Errorf("%s.%s is not a key of %s (%s)", key, name, envType, strings.Join(allowed, ", "))
		}
	}
	if len(allowed) == 0 {
		return cfg, nil
	}
	out := reflect.New(reflect.TypeOf(cfg)).Elem()
	out.Set(reflect.ValueOf(cfg))
	rename := map[string]string{}
	if p.DimRoom != nil {
		if len(p.DimRoom) != 2 || p.DimX != nil || p.DimY != nil {
			return nil, fmt.Errorf("%s.dim_room %v must be [rows, columns], and without dim_x or dim_y", key, p.DimRoom)
		}
		out.FieldByName("DimX").SetInt(int64(p.DimRoom[0]))
		out.FieldByName("DimY").SetInt(int64(p.DimRoom[1]))
		rename["DimX"], rename["DimY"] = "dim_room[0]", "dim_room[1]"
	}
	for i := range pt.NumField() {
		if f := pv.Field(i); f.Kind() == reflect.Pointer && !f.IsNil() {
			out.FieldByName(pt.Field(i).Name).Set(f.Elem())
		}
	}
	cfg = out.Interface()
	if err := cfg.(interface{ Validate() error }).Validate(); err != nil {
		return nil, restate(key, err, rename)
	}
	return cfg, nil
}

// keys lists env_config's keys for envType.
func (EnvConfig) keys(envType string) []string {
	var out []string
	for _, f := range reflect.VisibleFields(reflect.TypeOf(EnvConfig{})) {
		if slices.Contains(strings.Split(f.Tag.Get("env"), ","), envType) {
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			out = append(out, name)
		}
	}
	return out
}

// goName matches a field name of an envs configuration in a Validate
// sentence ("frozen_lake: P 1.5 must be in (0, 1]").
var goName = regexp.MustCompile(`\b[A-Z][A-Za-z]*\b`)

// restate turns an envs configuration's Validate error into a sentence in
// the config's terms: "frozen_lake: P 1.5 must be in (0, 1]" under
// custom_envs.MyLake.env_config is "custom_envs.MyLake.env_config.p 1.5
// must be in (0, 1]". rename overrides the YAML name of some fields.
func restate(key string, err error, rename map[string]string) error {
	_, msg, _ := strings.Cut(err.Error(), ": ")
	first := ""
	msg = goName.ReplaceAllStringFunc(msg, func(name string) string {
		yamlName, ok := rename[name]
		if !ok {
			f, found := reflect.TypeOf(EnvConfig{}).FieldByName(name)
			if !found {
				return name
			}
			yamlName, _, _ = strings.Cut(f.Tag.Get("yaml"), ",")
		}
		if first == "" {
			first = yamlName
		}
		return yamlName
	})
	if first != "" && strings.HasPrefix(msg, first) {
		return fmt.Errorf("%s.%s", key, msg)
	}
	return fmt.Errorf("%s: %s", key, msg)
}
