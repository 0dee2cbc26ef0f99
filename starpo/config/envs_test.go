package config

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ragen-go/ragen/envs"
)

// loadText loads a preset written out from body, clearing the registered
// custom_envs when the test ends.
func loadText(t *testing.T, body string, sets ...string) (Config, error) {
	t.Helper()
	t.Cleanup(func() { envs.Configure(nil) })
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return Load(path, sets)
}

func lookup(t *testing.T, tag string) envs.Spec {
	t.Helper()
	s, err := envs.Lookup(tag)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const customEnvsPreset = `
custom_envs:
  MyLake:
    env_type: frozen_lake
    max_actions_per_traj: 6
    env_config: {size: 5, p: 0.7, is_slippery: true, success_rate: 0.8, observation_format: grid_coord}
  WideBox:
    env_type: sokoban
    max_tokens: 80
    env_instruction: "Push the boxes."
    env_config: {dim_room: [7, 9], num_boxes: 2, search_depth: 50, max_steps: 40}
  TallBox:
    env_type: sokoban
    env_config: {dim_x: 8, dim_y: 6, num_boxes: 1}
  BanditRev:
    env_type: bandit
    env_config: {lo_arm_name: Librarian, hi_arm_name: Trader, lo_arm_score: 0.15, hi_arm_hiscore_prob: 0.3}
  Small:
    env_type: countdown
    env_config: {min_nums: 2, max_nums: 3, max_number: 20, max_target: 40}
  SimpleSokoban:
    max_actions_per_traj: 15
  FrozenLake:
    env_config: {success_rate: 1}
train: {tags: [MyLake, WideBox], n_groups: [1, 1], env_groups: 2}
val: {tags: [BanditRev, SimpleSokoban], n_groups: [1, 1], env_groups: 2}
`

func TestCustomEnvsDefineTags(t *testing.T) {
	c, err := loadText(t, customEnvsPreset)
	if err != nil {
		t.Fatal(err)
	}
	lake := lookup(t, "MyLake")
	want := envs.DefaultFrozenLakeConfig()
	want.Size, want.P, want.SuccessRate, want.Observation, want.PolicyHorizon = 5, 0.7, 0.8, envs.ObsGridCoord, 6
	if lake.EnvType != "frozen_lake" || lake.MaxActionsPerTraj != 6 || lake.MaxTokens != 100 ||
		!reflect.DeepEqual(lake.Config, want) ||
		!strings.HasPrefix(lake.Instruction, "You are solving the FrozenLake puzzle.") {
		t.Errorf("MyLake = %+v", lake)
	}
	wide := lookup(t, "WideBox").Config.(envs.SokobanConfig)
	if s := lookup(t, "WideBox"); s.MaxTokens != 80 || s.Instruction != "Push the boxes." || s.MaxActionsPerTraj != 10 ||
		wide.DimX != 7 || wide.DimY != 9 || wide.NumBoxes != 2 || wide.SearchDepth != 50 || wide.MaxSteps != 40 {
		t.Errorf("WideBox = %+v", s)
	}
	if tall := lookup(t, "TallBox").Config.(envs.SokobanConfig); tall.DimX != 8 || tall.DimY != 6 || tall.NumBoxes != 1 ||
		tall.SearchDepth != 300 {
		t.Errorf("TallBox = %+v", tall)
	}
	bandit := lookup(t, "BanditRev").Config.(envs.BanditConfig)
	if bandit != (envs.BanditConfig{LoArmName: "Librarian", HiArmName: "Trader", LoArmScore: 0.15, HiArmLoScore: 0,
		HiArmHiScore: 1, HiArmHiScoreProb: 0.3}) || lookup(t, "BanditRev").MaxActionsPerTraj != 1 {
		t.Errorf("BanditRev = %+v", bandit)
	}
	if cd := lookup(t, "Small").Config.(envs.CountdownConfig); cd.MinNums != 2 || cd.MaxNums != 3 || cd.MaxNumber != 20 ||
		cd.MaxTarget != 40 || cd.MinNumber != 1 {
		t.Errorf("Small = %+v", cd)
	}
	// Redefinitions keep every other value of the registered tag.
	if s := lookup(t, "SimpleSokoban"); s.MaxActionsPerTraj != 15 || s.MaxTokens != 100 ||
		s.Config.(envs.SokobanConfig).NumBoxes != 1 {
		t.Errorf("SimpleSokoban = %+v", s)
	}
	if s := lookup(t, "FrozenLake"); s.Config.(envs.FrozenLakeConfig).SuccessRate != 1 ||
		s.Config.(envs.FrozenLakeConfig).P != 0.8 || s.MaxActionsPerTraj != 10 {
		t.Errorf("FrozenLake = %+v", s)
	}
	// The tags play: MyLake draws its 5×5 map with coordinates.
	e, err := envs.New("MyLake")
	if err != nil {
		t.Fatal(err)
	}
	if obs, err := e.Reset(3); err != nil || !strings.HasPrefix(obs, "Coordinates: \nBoard size: 5 rows x 5 cols") {
		t.Errorf("MyLake Reset = %q, %v", obs, err)
	}

	// Loading the same config again is the same; saving and loading it too.
	if _, err := loadText(t, customEnvsPreset); err != nil {
		t.Fatalf("loading the config twice: %v", err)
	}
	saved := filepath.Join(t.TempDir(), "config.yaml")
	if err := c.Save(saved); err != nil {
		t.Fatal(err)
	}
	back, err := Load(saved, nil)
	if err != nil || !reflect.DeepEqual(back, c) {
		t.Fatalf("the saved config loads as %+v, %v", back.CustomEnvs, err)
	}
	if s := lookup(t, "MyLake"); s.MaxActionsPerTraj != 6 {
		t.Errorf("after reloading, MyLake = %+v", s)
	}

	// Another config replaces these tags: none of them is left behind.
	if _, err := Load("", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := envs.Lookup("MyLake"); err == nil {
		t.Error("MyLake outlived its config")
	}
	if s := lookup(t, "SimpleSokoban"); s.MaxActionsPerTraj != 10 {
		t.Errorf("SimpleSokoban kept the other config's budget: %d", s.MaxActionsPerTraj)
	}
	// A config cannot use a tag another config defined.
	if _, err := Load(saved, nil); err != nil {
		t.Fatal(err)
	}
	_, err = loadText(t, "train: {tags: [MyLake], n_groups: [8], env_groups: 8}\n")
	if err == nil || !strings.Contains(err.Error(), `train.tags: unknown environment tag "MyLake"`) {
		t.Errorf("a tag of another config: %v", err)
	}
}

func TestCustomEnvsSet(t *testing.T) {
	preset := "custom_envs:\n  MyLake: {env_type: frozen_lake, env_config: {size: 6, p: 0.7}}\n"
	c, err := loadText(t, preset, "custom_envs.MyLake.env_config.p=0.9",
		"custom_envs.SimpleSokoban.max_actions_per_traj=15",
		"custom_envs.NewBox={env_type: sokoban, env_config: {num_boxes: 1}}", "custom_envs.NewBox.max_tokens=50")
	if err != nil {
		t.Fatal(err)
	}
	if p := c.CustomEnvs["MyLake"].EnvConfig; *p.P != 0.9 || *p.Size != 6 {
		t.Errorf("--set on one key of an entry: size %d p %v, want 6 0.9", *p.Size, *p.P)
	}
	if s := lookup(t, "SimpleSokoban"); s.MaxActionsPerTraj != 15 {
		t.Errorf("SimpleSokoban budget %d", s.MaxActionsPerTraj)
	}
	if s := lookup(t, "NewBox"); s.MaxTokens != 50 || s.Config.(envs.SokobanConfig).NumBoxes != 1 {
		t.Errorf("NewBox = %+v", s)
	}
	// The preset's own entries are kept: --set changes only what it names.
	if s := lookup(t, "MyLake"); s.Config.(envs.FrozenLakeConfig).Size != 6 {
		t.Errorf("MyLake = %+v", s)
	}
}

// Every bad entry is refused with one sentence that names its key.
func TestCustomEnvsErrors(t *testing.T) {
	lake := func(cfg string) string {
		return "custom_envs:\n  MyLake: {env_type: frozen_lake, env_config: {" + cfg + "}}\n"
	}
	box := func(cfg string) string {
		return "custom_envs:\n  Box: {env_type: sokoban, env_config: {" + cfg + "}}\n"
	}
	for _, tc := range []struct {
		body string
		sets []string
		want string // the error, after the file's name where it names it; … ends a prefix
	}{
		{lake("p: 1.5"), nil, "custom_envs.MyLake.env_config.p 1.5 must be in (0, 1]"},
		{lake("p: .nan"), nil, "custom_envs.MyLake.env_config.p NaN must be in (0, 1]"},
		{lake("size: 1"), nil, "custom_envs.MyLake.env_config.size 1 must be in [2, 64]"},
		{lake("success_rate: 0"), nil, "custom_envs.MyLake.env_config.success_rate 0 must be in (0, 1]"},
		{lake("is_slippery: maybe"), nil, `line 2: custom_envs.MyLake.env_config.is_slippery is a boolean, not "maybe"`},
		{lake("slippery: true"), nil, `line 2: custom_envs.MyLake.env_config has no key "slippery"`},
		{lake("num_boxes: 2"), nil, "custom_envs.MyLake.env_config.num_boxes is not a key of frozen_lake " +
			"(size, p, is_slippery, success_rate, observation_format)"},
		{lake("observation_format: image"), nil,
			`custom_envs.MyLake.env_config.observation_format "image" must be grid, coord or grid_coord`},
		{box("dim_room: [6]"), nil,
			"custom_envs.Box.env_config.dim_room [6] must be [rows, columns], and without dim_x or dim_y"},
		{box("dim_room: [6, 6], dim_x: 7"), nil,
			"custom_envs.Box.env_config.dim_room [6 6] must be [rows, columns], and without dim_x or dim_y"},
		{box("dim_room: [2, 6]"), nil, "custom_envs.Box.env_config.dim_room[0] 2 and dim_room[1] 6 must both be at least 3"},
		{box("dim_x: 2"), nil, "custom_envs.Box.env_config.dim_x 2 and dim_y 6 must both be at least 3"},
		{box("num_boxes: 9"), nil, "custom_envs.Box.env_config.num_boxes 9 must be in [1, 7]"},
		{box("max_steps: 0"), nil, "custom_envs.Box.env_config.max_steps 0 must be at least 1"},
		{box("num_boxes: 1.5"), nil, "line 2: custom_envs.Box.env_config.num_boxes is an integer, not 1.5"},
		{"custom_envs:\n  B: {env_type: bandit, env_config: {lo_arm_name: A, hi_arm_name: a}}\n", nil,
			`custom_envs.B.env_config.lo_arm_name "A" and hi_arm_name "a" must differ ignoring case`},
		{"custom_envs:\n  B: {env_type: bandit, env_config: {hi_arm_hiscore_prob: 2}}\n", nil,
			"custom_envs.B.env_config.hi_arm_hiscore_prob 2 must be in [0, 1]"},
		{"custom_envs:\n  B: {env_type: bandit, env_config: {lo_arm_score: .inf}}\n", nil,
			"custom_envs.B.env_config.lo_arm_score +Inf, hi_arm_loscore 0 and hi_arm_hiscore 1 must be finite"},
		{"custom_envs:\n  C: {env_type: countdown, env_config: {min_target: 50, max_target: 10}}\n", nil,
			"custom_envs.C.env_config.min_target 50 and max_target 10 make an empty or unreachable target range"},
		{"custom_envs:\n  C: {env_type: countdown, env_config: {size: 4}}\n", nil,
			"custom_envs.C.env_config.size is not a key of countdown (min_nums, max_nums, min_number, max_number, " +
				"min_target, max_target, score, format_score)"},
		{"custom_envs:\n  MyLake: {env_config: {size: 5}}\n", nil,
			"custom_envs.MyLake.env_type is required for a new tag: one of bandit, countdown, frozen_lake, game_2048, sokoban, sudoku"},
		{"custom_envs:\n  MyLake: {env_type: lava}\n", nil,
			`custom_envs.MyLake.env_type "lava" is not one of bandit, countdown, frozen_lake, game_2048, sokoban, sudoku`},
		{"custom_envs:\n  SimpleSokoban: {env_type: frozen_lake}\n", nil,
			"custom_envs.SimpleSokoban.env_type frozen_lake differs from the registered tag's sokoban"},
		{"custom_envs:\n  MyLake: {env_type: frozen_lake, max_actions_per_traj: 0}\n", nil,
			"custom_envs.MyLake.max_actions_per_traj 0 must be ≥ 1"},
		{"custom_envs:\n  MyLake: {env_type: frozen_lake, max_tokens: -5}\n", nil,
			"custom_envs.MyLake.max_tokens -5 must be ≥ 1"},
		{"custom_envs:\n  MyLake: {env_type: frozen_lake, budget: 3}\n", nil,
			`line 2: custom_envs.MyLake has no key "budget"`},
		{"custom_envs:\n  My/Lake: {env_type: frozen_lake}\n", nil, `custom_envs.My/Lake: environment tag "My/Lake" ` +
			"must start with a letter or digit and hold only letters, digits, '_' and '-'"},
		{"custom_envs: [MyLake]\n", nil, "line 1: custom_envs is a section, not a list"},
		{"custom_envs:\n  MyLake: {env_type: frozen_lake}\ntrain: {tags: [MyLak], n_groups: [8], env_groups: 8}\n", nil,
			`train.tags: unknown environment tag "MyLak" (known: Bandit, BanditTest, …`},
		// --set: the argument is named as given.
		{lake("size: 5"), []string{"custom_envs.MyLake.env_config.p=1.5"},
			"--set custom_envs.MyLake.env_config.p=1.5: custom_envs.MyLake.env_config.p 1.5 must be in (0, 1]"},
		{lake("size: 5"), []string{"custom_envs.MyLake.env_config.p=high"},
			"--set custom_envs.MyLake.env_config.p=high: custom_envs.MyLake.env_config.p is a number"},
		{"", []string{"custom_envs.SimpleSokoban.max_actions_per_traj=0"}, "--set custom_envs.SimpleSokoban." +
			"max_actions_per_traj=0: custom_envs.SimpleSokoban.max_actions_per_traj 0 must be ≥ 1"},
		{"", []string{"custom_envs.SimpleSokoban.max_action=3"},
			`--set custom_envs.SimpleSokoban.max_action=3: custom_envs.SimpleSokoban has no key "max_action"`},
		{"", []string{"custom_envs.SimpleSokoban.env_config.p.x=3"},
			"--set custom_envs.SimpleSokoban.env_config.p.x=3: custom_envs.SimpleSokoban.env_config.p is not a section"},
		{"", []string{"custom_envs.FrozenLake.env_config.success_rate=null"}, "--set custom_envs.FrozenLake.env_config." +
			"success_rate=null: custom_envs.FrozenLake.env_config.success_rate is a number, not null"},
	} {
		_, err := loadText(t, tc.body, tc.sets...)
		got := ""
		if err != nil {
			got = err.Error()
			if _, after, ok := strings.Cut(got, "c.yaml: "); ok { // a decoding error names the file
				got = after
			}
		}
		if prefix, ok := strings.CutSuffix(tc.want, "…"); got != tc.want && !(ok && strings.HasPrefix(got, prefix)) {
			t.Errorf("%q %v:\n got %s\nwant %s", tc.body, tc.sets, got, tc.want)
		}
	}
}

// EnvConfig's fields are named and typed as the envs configuration fields
// they set (apply copies by name), for every type their env tag lists.
func TestEnvConfigFieldsMatchEnvs(t *testing.T) {
	for _, f := range reflect.VisibleFields(reflect.TypeOf(EnvConfig{})) {
		types := strings.Split(f.Tag.Get("env"), ",")
		if f.Name == "DimRoom" {
			continue // sets DimX and DimY
		}
		if f.Type.Kind() != reflect.Pointer || !strings.HasSuffix(f.Tag.Get("yaml"), ",omitempty") {
			t.Errorf("%s: %s with tag %q, want a pointer with omitempty", f.Name, f.Type, f.Tag.Get("yaml"))
		}
		for _, typ := range types {
			s, err := envs.TypeSpec(typ)
			if err != nil {
				t.Fatalf("%s: %v", f.Name, err)
			}
			g, ok := reflect.TypeOf(s.Config).FieldByName(f.Name)
			if !ok || g.Type != f.Type.Elem() {
				t.Errorf("%s (%s) has no field %s %s in %T", f.Name, typ, f.Name, f.Type.Elem(), s.Config)
			}
		}
	}
	if !slices.Equal(EnvConfig{}.keys("sokoban"), []string{"dim_room", "dim_x", "dim_y", "num_boxes", "max_steps",
		"search_depth", "observation_format"}) {
		t.Errorf("sokoban keys %v", EnvConfig{}.keys("sokoban"))
	}
}

// Sudoku and 2048 tags from a config: a 4×4 Sudoku with its own clues,
// budget and the instruction of its size, a 2048 that stops at 512; bad
// values are refused in the config's terms.
func TestCustomEnvsPuzzles(t *testing.T) {
	_, err := loadText(t, `
custom_envs:
  TinySudoku:
    env_type: sudoku
    max_actions_per_traj: 12
    env_config: {size: 4, clues: 8, max_steps: 16}
  Short2048:
    env_type: game_2048
    env_config: {target: 512, stop_at_target: true, two_prob: 0.8}
train: {tags: [TinySudoku, Short2048], n_groups: [1, 1], env_groups: 2}
`)
	if err != nil {
		t.Fatal(err)
	}
	s := lookup(t, "TinySudoku")
	sc := s.Config.(envs.SudokuConfig)
	if sc.Size != 4 || sc.Clues != 8 || sc.MaxSteps != 16 || s.MaxActionsPerTraj != 12 ||
		s.Instruction != envs.SudokuInstruction(4) {
		t.Fatalf("TinySudoku: %+v", s)
	}
	g := lookup(t, "Short2048").Config.(envs.Game2048Config)
	if g.Target != 512 || !g.StopAtTarget || g.TwoProb != 0.8 || !g.UseLogReward {
		t.Fatalf("Short2048: %+v", g)
	}
	for _, tc := range []struct{ cfg, want string }{
		{"{env_type: sudoku, env_config: {size: 4}}",
			"custom_envs.X.env_config.clues 49 must be in [4, 16] for size 4"},
		{"{env_type: sudoku, env_config: {size: 5, clues: 10}}", "custom_envs.X.env_config.size 5 must be 4, 9 or 16"},
		{"{env_type: game_2048, env_config: {target: 100}}",
			"custom_envs.X.env_config.target 100 must be a power of two of at least 4"},
		{"{env_type: game_2048, env_config: {clues: 3}}", "custom_envs.X.env_config.clues is not a key of game_2048 " +
			"(size, target, two_prob, use_log_reward, stop_at_target)"},
	} {
		if _, err := loadText(t, "custom_envs:\n  X: "+tc.cfg+"\n"); err == nil || !strings.HasSuffix(err.Error(), tc.want) {
			t.Errorf("%s: %v\nwant …%s", tc.cfg, err, tc.want)
		}
	}
}
