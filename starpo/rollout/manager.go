package rollout

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/ragen-go/ragen/envs"
	"github.com/ragen-go/ragen/tokenizer"
)

// Manager holds a batch of environments and their episodes: RAGEN's
// EnvStateManager together with the context manager's prompt building
// (docs/ragen.md#prompts, #rollout). Environment i has env id i and group id i
// / GroupSize; groups are numbered across tags in Config order. With a Shard
// the manager holds only its share, under the same global ids; the methods'
// indices are positions in that share.
//
// The methods are not safe for concurrent use; Reset and Step run the
// environments on their own goroutines internally.
type Manager struct {
	cfg   Config
	tok   *tokenizer.Tokenizer
	envs  []*envState
	reset bool // Reset has run since construction or the last Run
}

// envState is one environment and its episode so far.
type envState struct {
	id, group int
	tag       string
	spec      envs.Spec
	prefix    string // the tag's first user message
	env       envs.Env
	seed      int64
	status    Status
	history   []Entry // the last entry is the current, unanswered state
}

// Status is an environment's episode status (RAGEN's EnvStatus plus the
// rollout cache's penalty).
type Status struct {
	Terminated bool            // the episode is over; the env is not prompted again
	Truncated  bool            // it ended without success
	NumActions int             // actions executed so far
	Rewards    []float64       // env reward of each answered turn
	Penalty    float64         // accumulated format penalty
	Shaping    float64         // accumulated reasoning/format shaping reward (Config.Shaping)
	Terms      TermTurns       // turns each reward term applied to
	Turns      []TurnThink     // each answered turn's think (thinking enabled)
	Reasoning  ReasoningReward // accumulated reasoning reward (Config.Reasoning), part of Shaping
}

// TermTurns counts the answered turns each reward term applied to: RAGEN's
// format penalty and the three shaping terms.
type TermTurns struct {
	Penalty, ThinkBonus, EmptyThink, LongThink int
}

// Success is RAGEN's outcome: terminated and not truncated.
func (s Status) Success() bool { return s.Terminated && !s.Truncated }

// Entry is one history entry: a state shown to the model and, once
// answered, what the model said and what the environment did.
type Entry struct {
	State       string // the observation text
	ActionsLeft int    // max_actions_per_traj − actions executed before this state
	Answered    bool   // the fields below are set
	Actions     []string
	Reward      float64   // sum of the executed steps' rewards
	Info        envs.Info // the last executed step's info; zero when no action ran
	Response    string    // the normalised response (Parsed.Response)
	RawResponse string    // the generation prefix and the decoded generation (Parsed.Raw)
	IDs         []int     // the sampled token ids, as generated
	LogProbs    []float32 // their log-probabilities under the sampling policy
	prompt      []int     // the ids the turn was generated from (set by Run)
}

// NewManager builds every environment of cfg. tok must be the policy's
// tokenizer, with a chat template that extends a conversation's prompt as
// turns are added (checkTemplate).
func NewManager(cfg Config, tok *tokenizer.Tokenizer) (*Manager, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if tok == nil {
		return nil, errors.New("rollout: tokenizer is nil")
	}
	m := &Manager{cfg: cfg, tok: tok}
	if err := m.checkTemplate(); err != nil {
		return nil, err
	}
	first := 0 // the tag's first global group
	for ti, tag := range cfg.Tags {
		spec, err := envs.Lookup(tag)
		if err != nil {
			return nil, fmt.Errorf("rollout config: Tags[%d]: %w", ti, err)
		}
		prefix := envs.SpecPrefix(spec)
		lo, hi := cfg.Shard.groups(cfg.NGroups[ti])
		for g := first + lo; g < first+hi; g++ {
			for k := range cfg.GroupSize {
				env, err := envs.New(tag)
				if err != nil {
					return nil, fmt.Errorf("rollout: building env %d: %w", g*cfg.GroupSize+k, err)
				}
				m.envs = append(m.envs, &envState{
					id: g*cfg.GroupSize + k, group: g, tag: tag, spec: spec, prefix: prefix, env: env,
				})
			}
		}
		first += cfg.NGroups[ti]
	}
	return m, nil
}

// Config returns the manager's configuration.
func (m *Manager) Config() Config { return m.cfg }

// Env returns environment i and its tag's spec, for experts that read the
// state (demonstrations); stepping it directly bypasses the manager.
func (m *Manager) Env(i int) (envs.Env, envs.Spec) { return m.envs[i].env, m.envs[i].spec }

// Len is the number of environments.
func (m *Manager) Len() int { return len(m.envs) }

// Reset starts a new episode in every environment: group g starts from seed
// seedBase+g, shared by all its members, so they see the same initial state.
// Training passes Config.TrainSeed(step), validation Config.Seed.
func (m *Manager) Reset(seedBase int64) error {
	err := parallel(len(m.envs), func(i int) error {
		e := m.envs[i]
		e.seed = seedBase + int64(e.group)
		obs, err := e.env.Reset(e.seed)
		if err != nil {
			return fmt.Errorf("rollout: resetting env %d (tag %s) with seed %d: %w", e.id, e.tag, e.seed, err)
		}
		e.status = Status{}
		e.history = []Entry{{State: obs, ActionsLeft: e.spec.MaxActionsPerTraj}}
		return nil
	})
	m.reset = err == nil
	return err
}

// Active lists the environments still to be prompted, in env-id order.
func (m *Manager) Active() []int {
	var idx []int
	for i, e := range m.envs {
		if e.history != nil && !e.status.Terminated {
			idx = append(idx, i)
		}
	}
	return idx
}

// Status returns environment i's episode status.
func (m *Manager) Status(i int) Status {
	s := m.envs[i].status
	s.Rewards = slices.Clone(s.Rewards)
	return s
}

// History returns environment i's history entries, the current state last.
// The entries share their slices with the manager: treat them as read-only.
func (m *Manager) History(i int) []Entry { return slices.Clone(m.envs[i].history) }

// Seed returns the seed environment i was last reset with.
func (m *Manager) Seed(i int) int64 { return m.envs[i].seed }

// parallel runs f(0..n-1) on n goroutines and joins their errors.
func parallel(n int, f func(i int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = f(i) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// checkIndex reports an env index outside the batch.
func (m *Manager) checkIndex(i int) error {
	if i < 0 || i >= len(m.envs) {
		return fmt.Errorf("rollout: env index %d outside [0, %d)", i, len(m.envs))
	}
	if m.envs[i].history == nil {
		return fmt.Errorf("rollout: env %d has not been reset", i)
	}
	return nil
}
