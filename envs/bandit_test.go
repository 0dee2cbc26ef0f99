package envs

import (
	"math"
	"testing"
)

func TestBanditPrompt(t *testing.T) {
	b := mustNew(t, "Bandit").(*Bandit)
	obs := mustReset(t, b, 0)
	first, second := b.Actions()[0], b.Actions()[1]
	want := "You are playing a bandit game. Goal: Maximize your total reward by choosing which arm to pull. \n" +
		"Game Rules: \n" +
		"1. There are 2 arms, named " + first + " and " + second + "\n" +
		"2. Each arm has its own reward distribution, related to their names. \n" +
		"3. Analyze the symbolic meaning of each arm's name to guess how their reward distribution might behave.\n" +
		"4. Based on the symbolic meaning of their names, which arm do you think is more likely to give higher rewards on average? " +
		"Choose between " + first + " and " + second + ", and output like <answer> " + first + " </answer> or <answer> " + second + " </answer>.\n"
	if obs != want {
		t.Errorf("prompt\n%q\nwant\n%q", obs, want)
	}
}

func TestBanditArmOrderIsRandomPerSeed(t *testing.T) {
	for _, tag := range []string{"Bandit", "BanditTest"} {
		b := mustNew(t, tag).(*Bandit)
		loFirst := 0
		const n = 4000
		for seed := int64(0); seed < n; seed++ {
			mustReset(t, b, seed)
			if b.Actions()[0] == b.cfg.LoArmName {
				loFirst++
			}
			again := mustNew(t, tag)
			mustReset(t, again, seed)
			if again.Actions()[0] != b.Actions()[0] {
				t.Fatalf("%s seed %d: order differs between instances", tag, seed)
			}
		}
		if share := float64(loFirst) / n; math.Abs(share-0.5) > 0.03 {
			t.Errorf("%s: low arm first in %.3f of seeds, want about 0.5", tag, share)
		}
	}
}

func TestBanditPayouts(t *testing.T) {
	tests := []struct {
		tag, arm string
		success  bool
		mean     float64
		values   map[float64]string // every payout and how the observation prints it
	}{
		{"Bandit", "Phoenix", false, 0.1, map[float64]string{0.1: "Phoenix: 0.1 points"}},
		{"Bandit", "dragon", true, 0.25, map[float64]string{1: "Dragon: 1.0 points", 0: "Dragon: 0.0 points"}},
		{"BanditTest", "TRADER", false, 0.1, map[float64]string{0.1: "Trader: 0.1 points"}},
		{"BanditTest", "Librarian", true, 0.25, map[float64]string{1: "Librarian: 1.0 points", 0: "Librarian: 0.0 points"}},
	}
	for _, tt := range tests {
		t.Run(tt.tag+"/"+tt.arm, func(t *testing.T) {
			b := mustNew(t, tt.tag)
			const n = 8000
			sum := 0.0
			for seed := int64(0); seed < n; seed++ {
				mustReset(t, b, seed)
				obs, r, done, info := b.Step(tt.arm)
				if want, ok := tt.values[r]; !ok || obs != want {
					t.Fatalf("seed %d: payout %v, observation %q", seed, r, obs)
				}
				if !done || info.Success != tt.success || !info.ActionIsValid || !info.ActionIsEffective {
					t.Fatalf("seed %d: done %v info %+v", seed, done, info)
				}
				sum += r
			}
			if mean := sum / n; math.Abs(mean-tt.mean) > 0.02 {
				t.Errorf("mean payout %.4f, want %.2f", mean, tt.mean)
			}
		})
	}
}

func TestBanditSharedSeedSharesOutcome(t *testing.T) {
	// RAGEN gives a group one seed, so its members see one high-arm outcome.
	for seed := int64(0); seed < 200; seed++ {
		a, b := mustNew(t, "Bandit"), mustNew(t, "Bandit")
		mustReset(t, a, seed)
		mustReset(t, b, seed)
		_, ra, _, _ := a.Step("Dragon")
		_, rb, _, _ := b.Step("Dragon")
		if ra != rb {
			t.Fatalf("seed %d: payouts %v and %v differ", seed, ra, rb)
		}
	}
}

func TestBanditInvalidArm(t *testing.T) {
	b := mustNew(t, "Bandit")
	prompt := mustReset(t, b, 3)
	for _, a := range []string{"", "Griffin", " Dragon", "Dragon || Phoenix", "1"} {
		if obs, r, done, info := b.Step(a); obs != prompt || r != 0 || done || info.ActionIsValid {
			t.Errorf("Step(%q) = %q %v %v %+v, want no pull", a, obs, r, done, info)
		}
	}
	if got, ok := b.(Solver).Solve(); !ok || len(got) != 1 || got[0] != "Dragon" {
		t.Errorf("Solve = %v, %v; want [Dragon]", got, ok)
	}
}

func TestBanditConfigErrors(t *testing.T) {
	for _, c := range []BanditConfig{
		{LoArmName: "", HiArmName: "x"},
		{LoArmName: " a", HiArmName: "b"},
		{LoArmName: "Same", HiArmName: "same"},
		{LoArmName: "a||b", HiArmName: "c"},
		{LoArmName: "a", HiArmName: "b", HiArmHiScoreProb: 2},
		{LoArmName: "a", HiArmName: "b", HiArmHiScore: math.Inf(1)},
		{LoArmName: "a", HiArmName: "b", LoArmScore: math.NaN()},
	} {
		if _, err := NewBandit(c); err == nil {
			t.Errorf("NewBandit(%+v) accepted", c)
		}
	}
}
