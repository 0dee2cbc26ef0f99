package envs

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestTags(t *testing.T) {
	want := []string{"Bandit", "BanditTest", "CoordFrozenLake", "CoordSokoban", "Countdown", "FrozenLake", "LargerSokoban", "SimpleSokoban",
		"SokobanDifferentGridVocab"}
	for _, tag := range want {
		if !slices.Contains(Tags(), tag) {
			t.Errorf("Tags() = %v lacks %s", Tags(), tag)
		}
	}
	if !slices.IsSorted(Tags()) {
		t.Errorf("Tags() = %v is not sorted", Tags())
	}
}

func TestSpecs(t *testing.T) {
	tests := []struct {
		tag        string
		envType    string
		maxActions int
		dims       [3]int // Sokoban rows, columns, boxes
	}{
		{"SimpleSokoban", "sokoban", 10, [3]int{6, 6, 1}},
		{"LargerSokoban", "sokoban", 10, [3]int{8, 8, 2}},
		{"SokobanDifferentGridVocab", "sokoban", 10, [3]int{6, 6, 1}},
		{"FrozenLake", "frozen_lake", 10, [3]int{}},
		{"Bandit", "bandit", 1, [3]int{}},
		{"BanditTest", "bandit", 1, [3]int{}},
		{"Countdown", "countdown", 1, [3]int{}},
	}
	for _, tt := range tests {
		s, err := Lookup(tt.tag)
		if err != nil {
			t.Fatal(err)
		}
		if s.Tag != tt.tag || s.EnvType != tt.envType || s.MaxActionsPerTraj != tt.maxActions || s.MaxTokens != 100 {
			t.Errorf("Lookup(%s) = %+v", tt.tag, s)
		}
		if c, ok := s.Config.(SokobanConfig); ok {
			if got := [3]int{c.DimX, c.DimY, c.NumBoxes}; got != tt.dims || c.MaxSteps != 100 {
				t.Errorf("%s: dims %v max steps %d, want %v 100", tt.tag, got, c.MaxSteps, tt.dims)
			}
		}
	}
	fl, _ := Lookup("FrozenLake")
	if c := fl.Config.(FrozenLakeConfig); c.Size != 4 || c.P != 0.8 || !c.Slippery {
		t.Errorf("FrozenLake config %+v", c)
	}
	for tag, names := range map[string][2]string{"Bandit": {"Phoenix", "Dragon"}, "BanditTest": {"Trader", "Librarian"}} {
		s, _ := Lookup(tag)
		if c := s.Config.(BanditConfig); c.LoArmName != names[0] || c.HiArmName != names[1] || c.LoArmScore != 0.1 {
			t.Errorf("%s config %+v", tag, c)
		}
	}
}

func TestUnknownTag(t *testing.T) {
	_, err := New("SimpleSokobn")
	if !errors.Is(err, ErrUnknownTag) || !strings.Contains(err.Error(), `"SimpleSokobn"`) || !strings.Contains(err.Error(), "SimpleSokoban") {
		t.Errorf("New(SimpleSokobn) error %v; want it to name the tag and list the known ones", err)
	}
	if _, err := Lookup(""); !errors.Is(err, ErrUnknownTag) {
		t.Errorf("Lookup(\"\") error %v", err)
	}
}

// counter is a minimal added environment: count to a target.
type counter struct{ n, target int }

func (c *counter) Reset(seed int64) (string, error) {
	c.n, c.target = 0, int(seed%5)+1
	return c.Render(), nil
}
func (c *counter) Render() string    { return strings.Repeat("*", c.n) }
func (c *counter) Actions() []string { return []string{"Inc"} }
func (c *counter) Step(a string) (string, float64, bool, Info) {
	if actionIndex(c.Actions(), a) < 0 {
		return c.Render(), 0, false, Info{}
	}
	c.n++
	done := c.n == c.target
	return c.Render(), map[bool]float64{true: 1}[done], done, Info{Success: done, ActionIsValid: true, ActionIsEffective: true}
}

func TestRegisterNewEnvironment(t *testing.T) {
	spec := Spec{EnvType: "counter", MaxActionsPerTraj: 5, MaxTokens: 50, Instruction: "Count.", PromptActions: []string{"Inc"}}
	factory := func(Spec) (Env, error) { return &counter{}, nil }
	if err := Register("TestCounter", spec, factory); err != nil {
		t.Fatal(err)
	}
	if err := Register("TestCounter", spec, factory); err == nil {
		t.Error("registering a tag twice succeeded")
	}
	e := mustNew(t, "TestCounter")
	mustReset(t, e, 2)
	p := ParseResponse("ok</think><answer>inc || inc || inc</answer>", true, 5, e)
	var done bool
	for _, a := range p.Valid {
		_, _, done, _ = e.Step(a)
	}
	if !done {
		t.Error("three Inc from seed 2 did not finish")
	}
	if got, _ := Prefix("TestCounter"); !strings.HasPrefix(got, "Count.\nYour available actions are:\nInc\nYou can make up to 5 actions") {
		t.Errorf("Prefix = %q", got)
	}
}

func TestRegisterRejects(t *testing.T) {
	ok := Spec{MaxActionsPerTraj: 1, MaxTokens: 1}
	factory := func(Spec) (Env, error) { return &counter{}, nil }
	bad := func(Spec) (Env, error) { return nil, errors.New("broken config") }
	tests := []struct {
		name    string
		tag     string
		spec    Spec
		factory Factory
		want    string
	}{
		{"empty tag", "", ok, factory, "non-empty"},
		{"space in tag", "A B", ok, factory, "without spaces"},
		{"nil factory", "T1", ok, nil, "factory is nil"},
		{"no actions", "T2", Spec{MaxTokens: 1}, factory, "MaxActionsPerTraj 0"},
		{"no tokens", "T3", Spec{MaxActionsPerTraj: 1}, factory, "MaxTokens 0"},
		{"factory fails", "T4", ok, bad, "broken config"},
		{"wrong config type", "T5", Spec{MaxActionsPerTraj: 1, MaxTokens: 1, Config: 3}, newSokobanEnv, "want envs.SokobanConfig"},
		{"bad sokoban", "T6", Spec{MaxActionsPerTraj: 1, MaxTokens: 1, Config: SokobanConfig{DimX: 2, DimY: 6}}, newSokobanEnv, "DimX 2"},
	}
	for _, tt := range tests {
		err := Register(tt.tag, tt.spec, tt.factory)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Register error %v, want it to mention %q", tt.name, err, tt.want)
		}
	}
}

func TestEnvironmentsInParallelMatchSequential(t *testing.T) {
	// Each goroutine owns its environments; results must not depend on
	// scheduling (run with -race to check for shared state).
	run := func(tag string, seed int64) string {
		e := mustNew(t, tag)
		var b strings.Builder
		b.WriteString(mustReset(t, e, seed))
		acts := e.Actions()
		if acts == nil {
			acts = []string{"1 + 2 + 3"}
		}
		for i := range 10 {
			obs, r, done, _ := e.Step(acts[(i*7+int(seed))%len(acts)])
			b.WriteString(obs + PyFloat(r))
			if done {
				break
			}
		}
		return b.String()
	}
	tags := []string{"SimpleSokoban", "LargerSokoban", "FrozenLake", "Bandit", "Countdown"}
	want := map[string]string{}
	for _, tag := range tags {
		for seed := range int64(16) {
			want[tag+PyFloat(float64(seed))] = run(tag, seed)
		}
	}
	got := make(chan [2]string)
	for _, tag := range tags {
		for seed := range int64(16) {
			go func() { got <- [2]string{tag + PyFloat(float64(seed)), run(tag, seed)} }()
		}
	}
	for range len(want) {
		r := <-got
		if want[r[0]] != r[1] {
			t.Errorf("%s: parallel run differs from the sequential one", r[0])
		}
	}
}
