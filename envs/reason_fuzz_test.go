package envs

import "testing"

// FuzzReason checks that Reason and GroundedThink never panic, keep their
// counts consistent, and leave the environment as they found it, on any
// think, in any state a few moves reach (over ones included).
func FuzzReason(f *testing.F) {
	tags := []string{"FrozenLake", "SimpleSokoban", "Bandit"}
	envs := make([]Env, len(tags))
	for i, tag := range tags {
		e, err := New(tag)
		if err != nil {
			f.Fatal(err)
		}
		envs[i] = e
	}
	for i, think := range []string{
		"", "The goal is below me. I will go Down, Right.", "there is a box right above me; plan: up || left",
		"Dragon pays more, so I choose dragon.", "i'll go \xff left.. 0.5; not right", "the cell to the left of me is empty floor",
	} {
		f.Add(uint8(i), int64(i), uint8(i), think)
	}
	f.Fuzz(func(t *testing.T, which uint8, seed int64, moves uint8, think string) {
		env := envs[int(which)%len(envs)]
		if _, err := env.Reset(seed); err != nil {
			t.Skip(err)
		}
		names := env.Actions()
		for i := range int(moves % 8) {
			env.Step(names[(int(moves)+i)%len(names)])
		}
		before := env.Render()
		r := Reason(env, think)
		if !r.Checked || r.TrueClaims < 0 || r.TrueClaims > r.Claims || r.PlanProgress < -1 || r.PlanProgress > 1 ||
			(!r.PlanLegal && r.PlanProgress != 0) || (r.PlanChecked && len(r.Commits) == 0) {
			t.Fatalf("Reason(%q) = %+v", think, r)
		}
		env.(ThinkWriter).GroundedThink(r.Commits, int(moves))
		if after := env.Render(); after != before {
			t.Fatalf("Reason(%q) changed the state from\n%s\nto\n%s", think, before, after)
		}
	})
}
