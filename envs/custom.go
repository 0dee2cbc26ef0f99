package envs

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
)

// Tags a training configuration defines (RAGEN's custom_envs, read by
// starpo/config) live in a layer over the registered ones: Lookup, New and
// Tags see the layer first. The layer is scoped to one configuration at a
// time: Configure replaces it whole, so loading the same configuration
// twice is idempotent, and loading another one drops the tags and the
// redefinitions of the first instead of mixing the two. The registered
// specs are never changed, so a redefinition always starts from them.

// typeSpecs are the environment types a configuration can define new tags
// of, each with the spec a new tag starts from: the type's instruction,
// legend and actions, RAGEN's dataclass defaults for its configuration, and
// the token hint and budget of RAGEN's tags of that type (SimpleSudoku's
// for sudoku: 9×9, easy, 20 actions).
var typeSpecs = map[string]struct {
	spec    func() Spec
	factory Factory
}{
	"sokoban": {func() Spec {
		return Spec{EnvType: "sokoban", MaxActionsPerTraj: 10, MaxTokens: 100, Instruction: sokobanInstruction,
			PromptSymbols: sokobanGridVocab, PromptActions: sokobanActions, Config: DefaultSokobanConfig()}
	}, newSokobanEnv},
	"frozen_lake": {func() Spec {
		return Spec{EnvType: "frozen_lake", MaxActionsPerTraj: 10, MaxTokens: 100, Instruction: frozenLakeInstruction,
			PromptSymbols: frozenLakeGridVocab, PromptActions: frozenLakeActions, Config: DefaultFrozenLakeConfig()}
	}, newFrozenLakeEnv},
	"bandit": {func() Spec {
		return Spec{EnvType: "bandit", MaxActionsPerTraj: 1, MaxTokens: 100, Config: DefaultBanditConfig()}
	}, newBanditEnv},
	"countdown": {func() Spec {
		return Spec{EnvType: "countdown", MaxActionsPerTraj: 1, MaxTokens: 100, Instruction: countdownInstruction,
			Config: DefaultCountdownConfig()}
	}, newCountdownEnv},
	"sudoku":    {func() Spec { return sudokuSpec(9, "easy", 20) }, newSudokuEnv},
	"game_2048": {game2048Spec, newGame2048Env},
}

// SudokuInstruction is the instruction of a size×size Sudoku tag (RAGEN's
// text with that size's box and digits): a configured tag that changes
// the size without giving its own instruction gets this one.
func SudokuInstruction(size int) string { return sudokuInstruction(size) }

// EnvTypes lists, sorted, the environment types TypeSpec knows.
func EnvTypes() []string { return slices.Sorted(maps.Keys(typeSpecs)) }

// TypeSpec returns the spec a new tag of envType starts from. Its Config is
// the type's default configuration (SokobanConfig, FrozenLakeConfig,
// BanditConfig or CountdownConfig), a fresh value.
func TypeSpec(envType string) (Spec, error) {
	t, ok := typeSpecs[envType]
	if !ok {
		return Spec{}, fmt.Errorf("environment type %q is not one of %v", envType, EnvTypes())
	}
	return t.spec(), nil
}

// Registered returns the spec Register gave tag, whatever the
// configuration redefines: what a redefinition starts from.
func Registered(tag string) (Spec, error) {
	registryMu.RLock()
	e, ok := registry[tag]
	registryMu.RUnlock()
	if !ok {
		return Spec{}, fmt.Errorf("%w %q", ErrUnknownTag, tag)
	}
	e.spec.PromptSymbols = slices.Clone(e.spec.PromptSymbols)
	e.spec.PromptActions = slices.Clone(e.spec.PromptActions)
	return e.spec, nil
}

// configTag is what a configuration's tag may be called: it names run
// folders (ragen study) and metric keys, and is a part of dotted --set keys,
// so no separators, dots or spaces.
var configTag = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)

// Check reports whether Configure would accept spec for tag, without
// changing anything: a redefined tag keeps its type and factory, a new
// tag's EnvType must be one of EnvTypes, and one environment is built.
func Check(tag string, spec Spec) error {
	_, err := checkConfigured(tag, spec)
	return err
}

func checkConfigured(tag string, spec Spec) (entry, error) {
	if !configTag.MatchString(tag) {
		return entry{}, fmt.Errorf("environment tag %q must start with a letter or digit and hold only letters, "+
			"digits, '_' and '-'", tag)
	}
	var factory Factory
	registryMu.RLock()
	base, ok := registry[tag]
	registryMu.RUnlock()
	switch {
	case ok && spec.EnvType != base.spec.EnvType:
		return entry{}, fmt.Errorf("environment tag %q is registered as %s, not %s", tag, base.spec.EnvType, spec.EnvType)
	case ok:
		factory = base.factory
	default:
		t, known := typeSpecs[spec.EnvType]
		if !known {
			return entry{}, fmt.Errorf("environment tag %q: type %q is not one of %v", tag, spec.EnvType, EnvTypes())
		}
		factory = t.factory
	}
	spec, err := checkSpec(tag, spec, factory)
	return entry{spec: spec, factory: factory}, err
}

// Configure makes specs the configuration's tags, replacing the previous
// configuration's (nil or empty leaves only the registered tags). Each is
// checked as Check does; on an error nothing changes.
func Configure(specs map[string]Spec) error {
	layer := make(map[string]entry, len(specs))
	tags := slices.Collect(maps.Keys(specs))
	sort.Strings(tags)
	for _, tag := range tags {
		e, err := checkConfigured(tag, specs[tag])
		if err != nil {
			return err
		}
		layer[tag] = e
	}
	registryMu.Lock()
	configured = layer
	registryMu.Unlock()
	return nil
}
