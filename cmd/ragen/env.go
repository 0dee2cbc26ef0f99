package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ragen-go/ragen/envs"
	"github.com/ragen-go/ragen/starpo/config"
)

func init() {
	register(command{name: "env", summary: "show an environment's first state, or play it in the terminal", run: runEnv})
}

// envStdin is where --play reads actions from; tests replace it.
var envStdin io.Reader = os.Stdin

// envMaxActionsPerTurn is RAGEN's agent_proxy.max_actions_per_turn.
const envMaxActionsPerTurn = 5

// envReport is what `ragen env --json` prints.
type envReport struct {
	Tag         string   `json:"tag"`
	Seed        int64    `json:"seed"`
	Observation string   `json:"observation"`
	Actions     []string `json:"actions"`            // empty for free-text environments
	Solution    []string `json:"solution,omitempty"` // expert actions where a solver exists
	// SuccessProb is the optimal policy's chance of success, for
	// environments (FrozenLake) whose solution is a policy's first action;
	// absent where the policy cannot tell (2048's heuristic).
	SuccessProb *float64 `json:"success_prob,omitempty"`
}

func runEnv(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("env", stderr)
	tag := fs.String("env", "", "environment tag, one of: "+strings.Join(envs.Tags(), ", "))
	seed := fs.Int64("seed", 0, "seed of the episode (the same seed gives the same episode)")
	asJSON := fs.Bool("json", false, "print the first state, the actions and a solution as one JSON object")
	play := fs.Bool("play", false, "play in the terminal: one line of actions per turn from stdin, several separated by ||")
	maxActions := fs.Int("max-actions", -1, "with --play, actions per episode; -1 uses the tag's budget, 0 means no limit")
	cfgPath := fs.String("config", "", "a training config whose custom_envs tags --env may name")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	if *cfgPath != "" {
		if _, err := config.Load(*cfgPath, nil); err != nil { // registers its custom_envs
			return fmt.Errorf("--config: %w", err)
		}
	}
	switch {
	case *tag == "":
		return fmt.Errorf("--env is required, one of: %s", strings.Join(envs.Tags(), ", "))
	case *asJSON && *play:
		return fmt.Errorf("--json and --play cannot be combined")
	case *maxActions < -1:
		return fmt.Errorf("--max-actions %d must be -1, 0 or positive", *maxActions)
	}
	spec, err := envs.Lookup(*tag)
	if err != nil {
		return fmt.Errorf("--env: %w", err)
	}
	e, err := envs.New(*tag)
	if err != nil {
		return fmt.Errorf("--env: %w", err)
	}
	obs, err := e.Reset(*seed)
	if err != nil {
		return fmt.Errorf("--env %s --seed %d: %w", *tag, *seed, err)
	}
	switch {
	case *asJSON:
		r := envReport{Tag: *tag, Seed: *seed, Observation: obs, Actions: e.Actions()}
		if r.Actions == nil {
			r.Actions = []string{}
		}
		r.Solution, r.SuccessProb = envSolution(e)
		return json.NewEncoder(stdout).Encode(r)
	case *play:
		budget := *maxActions
		if budget < 0 {
			budget = spec.MaxActionsPerTraj
		}
		return playEnv(e, obs, budget, envStdin, stdout)
	default:
		return describeEnv(spec, e, *seed, obs, stdout)
	}
}

// envSolution returns the expert's answer from the current state: a full
// solution from a Solver, or a Policy's next action and success chance.
func envSolution(e envs.Env) ([]string, *float64) {
	if s, ok := e.(envs.Solver); ok {
		if sol, ok := s.Solve(); ok {
			return sol, nil
		}
		return nil, nil
	}
	if p, ok := e.(envs.Policy); ok {
		if a, prob := p.PolicyAction(); a != "" {
			if prob < 0 {
				return []string{a}, nil // a heuristic's move: no probability to show
			}
			return []string{a}, &prob
		}
	}
	return nil, nil
}

// describeEnv prints the first prompt's parts for a person to read.
func describeEnv(spec envs.Spec, e envs.Env, seed int64, obs string, stdout io.Writer) error {
	w := &envWriter{w: stdout}
	w.printf("%s, seed %d\n\n", spec.Tag, seed)
	if p := envs.SpecPrefix(spec); p != "" {
		w.printf("%s\n\n", strings.TrimRight(p, "\n"))
	}
	w.printf("State:\n%s\n", strings.TrimRight(obs, "\n"))
	if a := e.Actions(); a != nil {
		w.printf("\nactions: %s\n", strings.Join(a, ", "))
	}
	if sol, prob := envSolution(e); sol != nil {
		w.printf("solution: %s", strings.Join(sol, " || "))
		if prob != nil {
			w.printf(" (the optimal policy's first action; it succeeds with probability %.3f)", *prob)
		}
		w.printf("\n")
	}
	return w.err
}

// playEnv runs one episode from stdin: each line is a turn, parsed as the
// model's answer would be (names ignore case, at most 5 actions a turn).
func playEnv(e envs.Env, obs string, budget int, in io.Reader, stdout io.Writer) error {
	w := &envWriter{w: stdout}
	w.printf("%s\n", obs)
	if a := e.Actions(); a != nil {
		w.printf("actions: %s (several per line with ||; end of input quits)\n", strings.Join(a, ", "))
	} else {
		w.printf("answer with free text on one line; end of input quits\n")
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	total, used := 0.0, 0
	for sc.Scan() && w.err == nil {
		p := envs.ParseResponse(sc.Text()+"</answer>", false, envMaxActionsPerTurn, e)
		switch {
		case len(p.Valid) == 0:
			w.printf("no valid action in %q (format penalty)\n", sc.Text())
		case len(p.Valid) < len(p.Actions):
			w.printf("ignored the unknown actions in %q (format penalty)\n", sc.Text())
		}
		for _, a := range p.Valid {
			obs, reward, done, info := e.Step(a)
			total += reward
			used++
			w.printf("> %s\n%s\nreward: %s  done: %v  success: %v\n", a, obs, envs.PyFloat(reward), done, info.Success)
			if done {
				w.printf("episode over: success %v, total reward %s in %d actions\n", info.Success, envs.PyFloat(total), used)
				return w.err
			}
			if budget > 0 && used >= budget {
				w.printf("episode over: the budget of %d actions is spent, total reward %s\n", budget, envs.PyFloat(total))
				return w.err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading actions from stdin: %w", err)
	}
	if w.err == nil {
		w.printf("input ended after %d actions, total reward %s\n", used, envs.PyFloat(total))
	}
	return w.err
}

// envWriter keeps the first write error, so printing code stays linear.
type envWriter struct {
	w   io.Writer
	err error
}

func (w *envWriter) printf(format string, args ...any) {
	if w.err == nil {
		_, w.err = fmt.Fprintf(w.w, format, args...)
	}
}
