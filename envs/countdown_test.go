package envs

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestCountdownTasks(t *testing.T) {
	c := mustNew(t, "Countdown").(*Countdown)
	cfg := DefaultCountdownConfig()
	sizes := map[int]int{}
	for seed := int64(0); seed < 1000; seed++ {
		obs := mustReset(t, c, seed)
		nums, target := c.Task()
		sizes[len(nums)]++
		if want := fmt.Sprintf("Target: %d, nums: %s", target, pyIntList(nums)); obs != want {
			t.Fatalf("seed %d: observation %q, want %q", seed, obs, want)
		}
		if target < cfg.MinTarget || target > cfg.MaxTarget {
			t.Fatalf("seed %d: target %d out of range", seed, target)
		}
		for _, x := range nums {
			if x < cfg.MinNumber || x > cfg.MaxNumber {
				t.Fatalf("seed %d: number %d out of range", seed, x)
			}
		}
		sol, ok := c.Solve()
		if !ok || len(sol) != 1 || strings.HasPrefix(sol[0], "-") || strings.ContainsAny(sol[0], "*/") {
			t.Fatalf("seed %d: solution %v, %v", seed, sol, ok)
		}
		_, r, done, info := c.Step(sol[0])
		if r != 1 || !done || !info.Success || !info.ActionIsEffective {
			t.Fatalf("seed %d: the known solution %q of %s scores %v, %+v", seed, sol[0], obs, r, info)
		}
	}
	if sizes[3] < 300 || sizes[4] < 300 || len(sizes) != 2 {
		t.Errorf("task sizes %v, want 3 and 4 numbers about equally", sizes)
	}
}

func TestCountdownRewards(t *testing.T) {
	c := mustNew(t, "Countdown").(*Countdown)
	mustReset(t, c, 0)
	// Fix the task so the table reads by hand: [3, 5, 2] → 4.
	c.nums, c.target = []int{3, 5, 2}, 4
	tests := []struct {
		answer string
		reward float64
		obs    string
	}{
		{"2 + 5 - 3", 1, "Your answer get 1 points."},
		{"5 - 3 + 2", 1, "Your answer get 1 points."},
		{"(5 + 3) / 2", 1, "Your answer get 1 points."},
		{"5*2-3*2", 0, "Your answer get 0 points."}, // 2 used twice
		{"5 + 3 + 2", 0.1, "Your answer get 0.1 points."},
		{"5 / (3 - 3) + 2", 0, "Your answer get 0 points."}, // 3 used twice
		{"2 / (5 - 5) + 3", 0, "Your answer get 0 points."},
		{"3 / (5 - 5)", 0, "Your answer get 0 points."},
		{"2 + 5 - 3 = 4", 0, "Your answer get 0 points."}, // 4 is an extra number
		{"2 5 3", 0, "Your answer get 0 points."},         // RAGEN: 0.1; malformed here
		{"2 ** 5 - 3", 0, "Your answer get 0 points."},
		{"", 0, "Your answer get 0 points."},
		{"five minus three plus two", 0, "Your answer get 0 points."},
		{"２ + 5 - 3", 0, "Your answer get 0 points."},
		{strings.Repeat("9", 10000), 0, "Your answer get 0 points."},
	}
	for _, tt := range tests {
		obs, r, done, info := c.Step(tt.answer)
		if r != tt.reward || obs != tt.obs || !done || !info.ActionIsValid || info.Success != (r == 1) || info.ActionIsEffective != (r > 0) {
			t.Errorf("Step(%.30q) = %q, %v, %v, %+v; want %q, %v", tt.answer, obs, r, done, info, tt.obs, tt.reward)
		}
	}
	// Division by zero with exactly the right numbers: a wrong value, 0.1.
	c.nums, c.target = []int{3, 5, 5}, 4
	if _, r, _, _ := c.Step("3 / (5 - 5)"); r != 0.1 {
		t.Errorf("division by zero with the right numbers scores %v, want 0.1", r)
	}
}

func TestCountdownSameSeedSameTask(t *testing.T) {
	a, b := mustNew(t, "Countdown"), mustNew(t, "Countdown")
	distinct := map[string]bool{}
	for seed := int64(0); seed < 200; seed++ {
		oa, ob := mustReset(t, a, seed), mustReset(t, b, seed)
		if oa != ob {
			t.Fatalf("seed %d: %q vs %q", seed, oa, ob)
		}
		distinct[oa] = true
	}
	if len(distinct) < 195 {
		t.Errorf("only %d distinct tasks in 200 seeds", len(distinct))
	}
}

func TestCountdownConfigErrors(t *testing.T) {
	for _, bad := range []func(*CountdownConfig){
		func(c *CountdownConfig) { c.MinNums, c.MaxNums = 3, 2 },
		func(c *CountdownConfig) { c.MaxNumber = 0 },
		func(c *CountdownConfig) { c.MinTarget, c.MaxTarget = 10, 5 },
		func(c *CountdownConfig) { c.Score = math.Inf(1) },
		func(c *CountdownConfig) { c.FormatScore = math.NaN() },
	} {
		c := DefaultCountdownConfig()
		bad(&c)
		if _, err := NewCountdown(c); err == nil {
			t.Errorf("NewCountdown(%+v) accepted", c)
		}
	}
}
