package envs

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Spec is the per-tag configuration of RAGEN's custom_envs entries
// (config/envs.yaml): what the environment manager and the prompt builder
// need to know about a tag, plus the environment's own typed configuration.
type Spec struct {
	Tag               string   // the registry key, set by Register
	EnvType           string   // RAGEN's env_type: sokoban, frozen_lake, bandit, countdown
	MaxActionsPerTraj int      // actions executed per episode, across all turns
	MaxTokens         int      // the "Max response length" hint in each turn's prompt
	Instruction       string   // env_instruction: the start of the first user message
	PromptSymbols     []Symbol // symbol legend the prefix lists; nil lists none
	PromptActions     []string // action names the prefix lists; nil lists none
	// Config is the environment's typed configuration, read by the factory:
	// SokobanConfig, FrozenLakeConfig, BanditConfig or CountdownConfig for
	// the built-in types, anything for an added environment.
	Config any
}

// Symbol is one entry of a grid legend, such as {"#", "wall"}.
type Symbol struct {
	Char    string
	Meaning string
}

// Factory builds a fresh environment for a tag from its Spec.
type Factory func(spec Spec) (Env, error)

type entry struct {
	spec    Spec
	factory Factory
}

var (
	registryMu sync.RWMutex
	registry   = map[string]entry{} // the tags Register added
	configured = map[string]entry{} // the configuration's tags (Configure), looked up first
)

// Register adds a tag. It checks the spec and builds one environment with the
// factory, so that a bad configuration fails here rather than mid-rollout.
func Register(tag string, spec Spec, factory Factory) error {
	if tag == "" || strings.ContainsAny(tag, " \t\n") {
		return fmt.Errorf("environment tag %q must be non-empty and without spaces", tag)
	}
	spec, err := checkSpec(tag, spec, factory)
	if err != nil {
		return err
	}
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[tag]; dup {
		return fmt.Errorf("environment tag %q is already registered", tag)
	}
	registry[tag] = entry{spec: spec, factory: factory}
	return nil
}

// checkSpec checks spec's limits and builds one environment with factory;
// it returns spec with its Tag set.
func checkSpec(tag string, spec Spec, factory Factory) (Spec, error) {
	if factory == nil {
		return spec, fmt.Errorf("environment tag %q: factory is nil", tag)
	}
	if spec.MaxActionsPerTraj < 1 {
		return spec, fmt.Errorf("environment tag %q: MaxActionsPerTraj %d must be at least 1", tag, spec.MaxActionsPerTraj)
	}
	if spec.MaxTokens < 1 {
		return spec, fmt.Errorf("environment tag %q: MaxTokens %d must be at least 1", tag, spec.MaxTokens)
	}
	spec.Tag = tag
	if _, err := factory(spec); err != nil {
		return spec, fmt.Errorf("environment tag %q: %w", tag, err)
	}
	return spec, nil
}

// ErrUnknownTag is wrapped by New and Lookup when a tag is not registered.
var ErrUnknownTag = errors.New("unknown environment tag")

// New builds a fresh environment for tag. Call Reset before Step.
func New(tag string) (Env, error) {
	e, err := lookup(tag)
	if err != nil {
		return nil, err
	}
	env, err := e.factory(e.spec)
	if err != nil {
		return nil, fmt.Errorf("environment tag %q: %w", tag, err)
	}
	return env, nil
}

// Lookup returns tag's spec: as the loaded configuration defines it
// (Configure), or as registered. The prompt slices are copies; Config is
// shared and must be treated as read-only.
func Lookup(tag string) (Spec, error) {
	e, err := lookup(tag)
	e.spec.PromptSymbols = slices.Clone(e.spec.PromptSymbols)
	e.spec.PromptActions = slices.Clone(e.spec.PromptActions)
	return e.spec, err
}

// Tags lists the registered tags, the configuration's included, in sorted
// order.
func Tags() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	tags := make([]string, 0, len(registry)+len(configured))
	for t := range registry {
		tags = append(tags, t)
	}
	for t := range configured {
		if _, ok := registry[t]; !ok {
			tags = append(tags, t)
		}
	}
	sort.Strings(tags)
	return tags
}

// lookup finds tag as the configuration defines it, or as registered.
func lookup(tag string) (entry, error) {
	registryMu.RLock()
	e, ok := configured[tag]
	if !ok {
		e, ok = registry[tag]
	}
	registryMu.RUnlock()
	if !ok {
		return entry{}, fmt.Errorf("%w %q (known: %s)", ErrUnknownTag, tag, strings.Join(Tags(), ", "))
	}
	return e, nil
}

// mustRegister registers a built-in tag; a failure is a bug in this package.
func mustRegister(tag string, spec Spec, factory Factory) {
	if err := Register(tag, spec, factory); err != nil {
		panic("envs: " + err.Error())
	}
}
