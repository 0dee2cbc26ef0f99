package envs

import (
	"slices"
	"strings"
	"testing"
)

// checkGrounded asserts that every style of the expert's think for plan
// reads back as written: some claims, all true, and the plan itself.
func checkGrounded(t *testing.T, env Env, plan []string) {
	t.Helper()
	for style := -1; style <= ThinkStyles; style++ {
		think := env.(ThinkWriter).GroundedThink(plan, style)
		r := Reason(env, think)
		if r.Claims < 1 || r.TrueClaims != r.Claims || !slices.Equal(r.Commits, plan) {
			t.Fatalf("style %d, plan %v on\n%s\nthink %q reads %+v", style, plan, env.Render(), think, r)
		}
		if n := len(strings.Fields(think)); n > 40 {
			t.Fatalf("think %q has %d words", think, n)
		}
	}
}

func TestGroundedThinkFrozenLake(t *testing.T) {
	f := mustNew(t, "FrozenLake").(*FrozenLake)
	for seed := int64(0); seed < 200; seed++ {
		mustReset(t, f, seed)
		for step := 0; step < 10 && !f.terminal(); step++ {
			plan := f.PolicyPlan(1 + int(seed+int64(step))%4)
			checkGrounded(t, f, plan)
			f.Step(plan[0])
		}
	}
}

func TestGroundedThinkSokoban(t *testing.T) {
	for _, tag := range []string{"SimpleSokoban", "LargerSokoban"} {
		s := mustNew(t, tag).(*Sokoban)
		for seed := int64(0); seed < 50; seed++ {
			mustReset(t, s, seed)
			solution, ok := s.Solve()
			if !ok {
				t.Fatalf("%s seed %d: no solution", tag, seed)
			}
			for i := 0; len(solution) > 0; i++ {
				plan := solution[:min(len(solution), 1+(int(seed)+i)%5)]
				checkGrounded(t, s, plan)
				// A shortest solution never wastes a move or corners a box.
				r := Reason(s, s.GroundedThink(plan, i))
				if !r.PlanLegal || (len(plan) == len(solution) && r.PlanProgress != 1) {
					t.Fatalf("%s seed %d: expert plan %v of %v reads %+v", tag, seed, plan, solution, r)
				}
				for _, a := range plan {
					s.Step(a)
				}
				solution = solution[len(plan):]
			}
		}
	}
}

func TestGroundedThinkBandit(t *testing.T) {
	for _, tag := range []string{"Bandit", "BanditTest"} {
		b := mustNew(t, tag).(*Bandit)
		for seed := int64(0); seed < 20; seed++ {
			mustReset(t, b, seed)
			for _, arm := range b.Actions() { // the worse arm too: its claim says so
				checkGrounded(t, b, []string{arm})
			}
		}
	}
}
