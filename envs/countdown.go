package envs

import (
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
)

// CountdownConfig sets how Countdown tasks are drawn. RAGEN reads them from
// the Countdown-Tasks-3to4 dataset and keeps those solvable with + and −
// alone; this package draws such tasks directly, with a known solution, so
// nothing needs downloading.
type CountdownConfig struct {
	MinNums, MaxNums     int     // how many numbers a task has (3 to 4)
	MinNumber, MaxNumber int     // the range each number is drawn from
	MinTarget, MaxTarget int     // the range the target must fall in
	Score                float64 // reward for a correct equation (1)
	FormatScore          float64 // reward for the right numbers but a wrong value (0.1)
}

// DefaultCountdownConfig returns 3 or 4 numbers in [1, 99] and a target in
// [1, 99], rewarded 1 and 0.1 as in RAGEN.
func DefaultCountdownConfig() CountdownConfig {
	return CountdownConfig{
		MinNums: 3, MaxNums: 4, MinNumber: 1, MaxNumber: 99, MinTarget: 1, MaxTarget: 99,
		Score: 1, FormatScore: 0.1,
	}
}

// Validate reports the first unusable field.
func (c CountdownConfig) Validate() error {
	switch {
	case c.MinNums < 1 || c.MaxNums < c.MinNums || c.MaxNums > 16:
		return fmt.Errorf("countdown: MinNums %d and MaxNums %d must satisfy 1 <= MinNums <= MaxNums <= 16", c.MinNums, c.MaxNums)
	case c.MinNumber < 1 || c.MaxNumber < c.MinNumber || c.MaxNumber > 1_000_000:
		return fmt.Errorf("countdown: MinNumber %d and MaxNumber %d must satisfy 1 <= MinNumber <= MaxNumber <= 1000000", c.MinNumber, c.MaxNumber)
	case c.MaxTarget < c.MinTarget || c.MaxTarget < 1 || c.MinTarget > c.MaxNums*c.MaxNumber:
		return fmt.Errorf("countdown: MinTarget %d and MaxTarget %d make an empty or unreachable target range",
			c.MinTarget, c.MaxTarget)
	case !finite(c.Score) || !finite(c.FormatScore):
		return fmt.Errorf("countdown: Score %v and FormatScore %v must be finite", c.Score, c.FormatScore)
	}
	return nil
}

// countdownMaxDraws bounds the tasks drawn for one seed before giving up;
// with the defaults about one draw in three has its target in range.
const countdownMaxDraws = 100000

// countdownTolerance is RAGEN's: an answer is correct within 1e-5.
var countdownTolerance = big.NewRat(1, 100000)

// Countdown is RAGEN's Countdown: combine the numbers, each exactly once,
// into an equation equal to the target. One answer per episode.
type Countdown struct {
	cfg      CountdownConfig
	rng      seededRand
	nums     []int
	target   int
	solution string
	obs      string
	answered bool
	ready    bool
}

// NewCountdown builds a Countdown environment; call Reset before Step.
func NewCountdown(cfg CountdownConfig) (*Countdown, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Countdown{cfg: cfg, rng: newSeededRand()}, nil
}

// Reset draws numbers and signs until the signed sum lands in the target
// range; that sum is the target and the signed sum the known solution.
func (c *Countdown) Reset(seed int64) (string, error) {
	c.rng.seed(seed)
	c.ready, c.answered = false, false
	cfg := c.cfg
	for range countdownMaxDraws {
		n := cfg.MinNums + c.rng.IntN(cfg.MaxNums-cfg.MinNums+1)
		c.nums = c.nums[:0]
		var plus, minus []string
		sum := 0
		for range n {
			x := cfg.MinNumber + c.rng.IntN(cfg.MaxNumber-cfg.MinNumber+1)
			c.nums = append(c.nums, x)
			if c.rng.IntN(2) == 0 {
				sum += x
				plus = append(plus, strconv.Itoa(x))
			} else {
				sum -= x
				minus = append(minus, strconv.Itoa(x))
			}
		}
		if sum < cfg.MinTarget || sum > cfg.MaxTarget || len(plus) == 0 {
			continue
		}
		// Positive terms first, so the solution never starts with a sign.
		c.solution = strings.Join(plus, " + ")
		if len(minus) > 0 {
			c.solution += " - " + strings.Join(minus, " - ")
		}
		c.target = sum
		c.obs = fmt.Sprintf("Target: %d, nums: %s", c.target, pyIntList(c.nums))
		c.ready = true
		return c.obs, nil
	}
	return "", fmt.Errorf("countdown: no task for seed %d in %d draws (targets [%d, %d])", seed, countdownMaxDraws, cfg.MinTarget, cfg.MaxTarget)
}

// Step scores the equation and ends the episode: Score if it uses exactly
// the given numbers and equals the target, FormatScore if it uses exactly
// the numbers but is wrong (or divides by zero), 0 otherwise — including
// every malformed equation, where RAGEN would still give FormatScore when
// the digits match.
func (c *Countdown) Step(action string) (string, float64, bool, Info) {
	if !c.ready {
		return "", 0, false, Info{}
	}
	reward := c.score(action)
	shown := "0" // RAGEN returns the integer 0 and prints it so
	switch reward {
	case c.cfg.Score:
		shown = pyNumber(c.cfg.Score)
	case c.cfg.FormatScore:
		shown = PyFloat(c.cfg.FormatScore)
	}
	c.obs = "Your answer get " + shown + " points."
	c.answered = true
	return c.obs, reward, true, Info{
		Success:           reward == c.cfg.Score,
		ActionIsValid:     true,
		ActionIsEffective: reward > 0,
	}
}

func (c *Countdown) score(equation string) float64 {
	// Compare the digit runs first, as RAGEN does: most wrong answers stop
	// here, before any parsing.
	if !sameInts(digitRuns(equation), c.nums) {
		return 0
	}
	v, _, err := EvalExpression(equation)
	switch {
	case errors.Is(err, ErrDivisionByZero):
		return c.cfg.FormatScore
	case err != nil:
		return 0
	}
	diff := new(big.Rat).Sub(v, new(big.Rat).SetInt64(int64(c.target)))
	if diff.Abs(diff).Cmp(countdownTolerance) < 0 {
		return c.cfg.Score
	}
	return c.cfg.FormatScore
}

// Render returns the task, or the verdict after the answer.
func (c *Countdown) Render() string { return c.obs }

// Actions returns nil: Countdown takes free text.
func (c *Countdown) Actions() []string { return nil }

// Solve returns the known solution equation.
func (c *Countdown) Solve() ([]string, bool) {
	if !c.ready {
		return nil, false
	}
	return []string{c.solution}, true
}

// Task returns the numbers and the target (for tests and demonstrations).
func (c *Countdown) Task() (nums []int, target int) { return slices.Clone(c.nums), c.target }

// digitRuns returns the integers formed by maximal runs of ASCII digits
// (RAGEN's re.findall(r'\d+')), or nil if a run is too long to be a number
// of the task.
func digitRuns(s string) []int {
	var out []int
	for i := 0; i < len(s); {
		if s[i] < '0' || s[i] > '9' {
			i++
			continue
		}
		j := i
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		n, err := strconv.Atoi(s[i:j])
		if err != nil {
			return []int{-1} // matches no task
		}
		out = append(out, n)
		i = j
	}
	return out
}

// sameInts reports whether a and b hold the same multiset.
func sameInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// pyIntList formats ints as Python prints a list: [3, 5, 2].
func pyIntList(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.Itoa(x)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// pyNumber prints a whole number as Python prints an int, otherwise as a float.
func pyNumber(x float64) string {
	if x == float64(int64(x)) && x > -1e15 && x < 1e15 {
		return strconv.FormatInt(int64(x), 10)
	}
	return PyFloat(x)
}
