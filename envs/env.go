package envs

// Env is one environment instance. It owns its random generator, which Reset
// reseeds, so the same seed always gives the same episode for the same
// actions.
type Env interface {
	// Reset starts a new episode from seed and returns the first observation.
	Reset(seed int64) (string, error)
	// Step applies one action, named as in Actions (matched without regard
	// to case) or, for free-text environments, the answer text. An action the
	// environment does not know leaves the state unchanged and returns
	// Info.ActionIsValid false; Step never panics on its input.
	Step(action string) (obs string, reward float64, done bool, info Info)
	// Render returns the current text observation.
	Render() string
	// Actions lists the action names in RAGEN's order, or nil for
	// free-text environments such as Countdown. For Bandit the order is the
	// arm order drawn at Reset.
	Actions() []string
}

// Info is the per-step information RAGEN's environment manager reads: success
// decides the episode outcome, the other two are averaged into metrics.
type Info struct {
	Success           bool // the episode's goal is reached
	ActionIsValid     bool // the action was one the environment accepts
	ActionIsEffective bool // the action changed the state (RAGEN's definition per env)
}

// Solver is implemented by environments that can give an expert answer from
// their current state: Sokoban (a shortest push solution), Bandit (the high
// arm), Countdown (the known equation) and Sudoku (the placements left).
// Expert demonstrations use it.
type Solver interface {
	// Solve returns the actions that reach the goal from the current state,
	// or ok false when there is none (or the search gave up).
	Solve() (actions []string, ok bool)
}

// Policy is implemented by stochastic environments whose best play is a
// policy rather than a fixed sequence: FrozenLake, where slips make any
// precomputed action list wrong after the first step, and 2048, where a
// random tile follows every move.
type Policy interface {
	// PolicyAction returns the optimal action for the current state and the
	// probability of reaching the goal when following the policy from here,
	// or -1 where the policy is a heuristic that cannot tell (2048).
	// The action is empty when the episode is already over.
	PolicyAction() (action string, successProb float64)
	// PolicyPlan returns up to n actions to write in one answer: the
	// optimal action, then the optimal action from the cell it aims at
	// (as if nothing slipped), and so on, stopping at a hole or the goal.
	// Its first action is PolicyAction's. Empty when the episode is over.
	PolicyPlan(n int) []string
}
