package envs

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// configure sets the configuration layer for one test and clears it after.
func configure(t *testing.T, specs map[string]Spec) {
	t.Helper()
	t.Cleanup(func() {
		if err := Configure(nil); err != nil {
			t.Fatal(err)
		}
	})
	if err := Configure(specs); err != nil {
		t.Fatal(err)
	}
}

func TestTypeSpecs(t *testing.T) {
	if got := EnvTypes(); !slices.Equal(got, []string{"bandit", "countdown", "frozen_lake", "game_2048", "sokoban", "sudoku"}) {
		t.Errorf("EnvTypes() = %v", got)
	}
	for _, typ := range EnvTypes() {
		s, err := TypeSpec(typ)
		if err != nil || s.EnvType != typ || s.MaxTokens < 100 {
			t.Fatalf("TypeSpec(%s) = %+v, %v", typ, s, err)
		}
		if err := Check("New"+typ, s); err != nil {
			t.Errorf("a new %s tag from its TypeSpec: %v", typ, err)
		}
	}
	if _, err := TypeSpec("webshop"); err == nil || !strings.Contains(err.Error(), "sokoban") {
		t.Errorf("TypeSpec(webshop) error %v; want the known types listed", err)
	}
	// A fresh configuration each time: changing one does not change the next.
	a, _ := TypeSpec("sokoban")
	cfg := a.Config.(SokobanConfig)
	cfg.NumBoxes = 5
	if b, _ := TypeSpec("sokoban"); b.Config.(SokobanConfig).NumBoxes != 3 {
		t.Error("TypeSpec shares its configuration")
	}
}

func TestConfigureDefinesAndRedefines(t *testing.T) {
	lake, _ := TypeSpec("frozen_lake")
	cfg := lake.Config.(FrozenLakeConfig)
	cfg.Size = 6
	lake.Config, lake.MaxActionsPerTraj = cfg, 7
	sokoban, _ := Registered("SimpleSokoban")
	sokoban.MaxActionsPerTraj = 15
	configure(t, map[string]Spec{"TestLake6": lake, "SimpleSokoban": sokoban})

	if !slices.Contains(Tags(), "TestLake6") || !slices.IsSorted(Tags()) {
		t.Errorf("Tags() = %v", Tags())
	}
	if s, err := Lookup("TestLake6"); err != nil || s.Tag != "TestLake6" || s.MaxActionsPerTraj != 7 {
		t.Errorf("Lookup(TestLake6) = %+v, %v", s, err)
	}
	if obs := mustReset(t, mustNew(t, "TestLake6"), 1); strings.Count(obs, "\n") != 5 {
		t.Errorf("TestLake6 draws\n%s\nnot a 6×6 map", obs)
	}
	if p, _ := Prefix("SimpleSokoban"); !strings.Contains(p, "up to 15 actions") {
		t.Errorf("redefined SimpleSokoban's prefix %q", p)
	}
	if s, _ := Registered("SimpleSokoban"); s.MaxActionsPerTraj != 10 {
		t.Errorf("Registered(SimpleSokoban) budget %d, want the registered 10", s.MaxActionsPerTraj)
	}
	if _, err := Registered("TestLake6"); !errors.Is(err, ErrUnknownTag) {
		t.Errorf("Registered(TestLake6) error %v: a configured tag is not registered", err)
	}

	// The next configuration replaces this one whole; loading it twice is
	// the same as loading it once.
	for range 2 {
		if err := Configure(map[string]Spec{"TestLake6b": lake}); err != nil {
			t.Fatal(err)
		}
		if _, err := Lookup("TestLake6"); !errors.Is(err, ErrUnknownTag) {
			t.Errorf("TestLake6 outlived its configuration: %v", err)
		}
		if s, _ := Lookup("SimpleSokoban"); s.MaxActionsPerTraj != 10 {
			t.Errorf("SimpleSokoban's redefinition outlived its configuration: budget %d", s.MaxActionsPerTraj)
		}
	}
}

func TestConfigureRefuses(t *testing.T) {
	good, _ := TypeSpec("bandit")
	configure(t, map[string]Spec{"TestKept": good})
	badSokoban, _ := TypeSpec("sokoban")
	cfg := badSokoban.Config.(SokobanConfig)
	cfg.DimX = 2
	badSokoban.Config = cfg
	lake, _ := TypeSpec("frozen_lake")
	noBudget := good
	noBudget.MaxActionsPerTraj = 0
	unknownType := good
	unknownType.EnvType = "webshop"
	for _, tt := range []struct {
		tag  string
		spec Spec
		want string
	}{
		{"../evil", good, "must start with a letter or digit"},
		{"a/b", good, "must start with a letter or digit"},
		{"Two words", good, "must start with a letter or digit"},
		{"a.b", good, "must start with a letter or digit"},
		{"TestBadSokoban", badSokoban, "DimX 2"},
		{"SimpleSokoban", lake, "registered as sokoban, not frozen_lake"},
		{"TestNoBudget", noBudget, "MaxActionsPerTraj 0"},
		{"TestWeb", unknownType, `type "webshop" is not one of`},
	} {
		err := Check(tt.tag, tt.spec)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Check(%q) error %v, want it to mention %q", tt.tag, err, tt.want)
		}
		if err := Configure(map[string]Spec{"TestOther": good, tt.tag: tt.spec}); err == nil {
			t.Errorf("Configure with %q accepted", tt.tag)
		}
		if _, err := Lookup("TestKept"); err != nil {
			t.Errorf("a refused Configure changed the layer: %v", err)
		}
	}
}

func TestConfigureRedefinesAnAddedType(t *testing.T) {
	spec := Spec{EnvType: "counter", MaxActionsPerTraj: 5, MaxTokens: 50, Instruction: "Count."}
	if err := Register("TestCounter2", spec, func(Spec) (Env, error) { return &counter{}, nil }); err != nil {
		t.Fatal(err)
	}
	spec.MaxActionsPerTraj = 2
	configure(t, map[string]Spec{"TestCounter2": spec})
	if s, _ := Lookup("TestCounter2"); s.MaxActionsPerTraj != 2 {
		t.Errorf("budget %d, want 2", s.MaxActionsPerTraj)
	}
	if _, ok := mustNew(t, "TestCounter2").(*counter); !ok {
		t.Error("the redefinition lost the registered factory")
	}
}
