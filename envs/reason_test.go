package envs

import (
	"math"
	"slices"
	"testing"
)

func TestCommitments(t *testing.T) {
	bandit := []string{"Phoenix", "Dragon"}
	tests := []struct {
		think string
		names []string
		limit int
		want  []string
	}{
		{"", frozenLakeActions, 0, nil},
		{"The box is to my right.", frozenLakeActions, 0, nil},
		{"I will go left then down.", frozenLakeActions, 0, []string{"Left", "Down"}},
		{"To forbid the hole and go to the target, I should go left then go up.", frozenLakeActions, 0, []string{"Left", "Up"}},
		{"Plan: Right || Right -> Down", frozenLakeActions, 0, []string{"Right", "Right", "Down"}},
		{"I'll move UP, up and LEFT", frozenLakeActions, 0, []string{"Up", "Up", "Left"}},
		{"I'll go Left||Up", frozenLakeActions, 0, []string{"Left", "Up"}},
		{"I will go right because the hole is to my left.", frozenLakeActions, 0, []string{"Right"}},
		{"Go left, not right.", frozenLakeActions, 0, []string{"Left"}},
		{"Go left. I will go down.", frozenLakeActions, 0, []string{"Down"}},         // the last sentence
		{"I will go down. Then maybe left.", frozenLakeActions, 0, []string{"Down"}}, // no marker in the second
		{"I will go down. I'll check again.", frozenLakeActions, 0, []string{"Down"}},
		{"I will not go left.", frozenLakeActions, 0, nil},
		{"Plan:\nLeft\nDown", frozenLakeActions, 0, []string{"Left", "Down"}},
		{"Let's go leftwards and upwards", frozenLakeActions, 0, nil},
		{"Moving down is safe.", frozenLakeActions, 0, nil}, // "moving" is not a marker
		{"I choose dragon over phoenix.", bandit, 1, []string{"Dragon"}},
		{"Pull PHOENIX", bandit, 1, []string{"Phoenix"}},
		{"Dragon pays 0.25, so I choose dragon.", bandit, 1, []string{"Dragon"}},
		{"I pick red arm", []string{"Red", "Red Arm"}, 0, []string{"Red Arm"}}, // the longest name
	}
	for _, tt := range tests {
		if got := commitments(tt.think, tt.names, tt.limit); !slices.Equal(got, tt.want) || (got == nil) != (tt.want == nil) {
			t.Errorf("commitments(%q) = %#v, want %#v", tt.think, got, tt.want)
		}
	}
}

// reasonCase is one hand-written think and what Reason must find in it.
type reasonCase struct {
	name           string
	setup          []string // moves made before the think
	think          string
	commits        []string
	claims, truths int
	checked, legal bool
	progress       float64
}

func checkReason(t *testing.T, env Env, tt reasonCase) {
	t.Helper()
	got := Reason(env, tt.think)
	type counts struct {
		checked                bool
		claims, truths         int
		planChecked, planLegal bool
	}
	gc := counts{got.Checked, got.Claims, got.TrueClaims, got.PlanChecked, got.PlanLegal}
	wc := counts{true, tt.claims, tt.truths, tt.checked, tt.legal}
	if gc != wc || !slices.Equal(got.Commits, tt.commits) || (got.Commits == nil) != (tt.commits == nil) ||
		math.Abs(got.PlanProgress-tt.progress) > 1e-12 {
		t.Errorf("Reason(%q) = %+v, want commits %v, %+v, progress %v", tt.think, got, tt.commits, wc, tt.progress)
	}
}

func TestReasonFrozenLake(t *testing.T) {
	// P _ _ _
	// _ O _ O    the shortest path to G takes 6 moves
	// _ _ _ O
	// O _ _ G
	rows := []string{"SFFF", "FHFH", "FFFH", "HFFG"}
	tests := []reasonCase{
		{name: "true claims",
			think:  "There is ice to my right. The cell below me is ice; the goal is below me, and the goal is to my right. Above me is the edge.",
			claims: 5, truths: 5},
		{name: "false claims",
			think:  "There is a hole to my right. Below me is a hole, the goal is above me and the goal is to my left.",
			claims: 4},
		{name: "holes anywhere that way",
			think:  "The hole is below me, holes are to my left.",
			claims: 2, truths: 1},
		{name: "directly means adjacent",
			think:  "The goal is right below me, the hole is right of me.",
			claims: 2, truths: 1},
		{name: "valid plan",
			think:   "The goal is below me. I will go Down, Down, Right.",
			commits: []string{"Down", "Down", "Right"}, claims: 1, truths: 1,
			checked: true, legal: true, progress: 0.5}, // 6 moves left, then 3
		{name: "plan reaches the goal, later moves ignored",
			think:   "Plan: Right || Right || Down || Down || Down || Right || Up",
			commits: []string{"Right", "Right", "Down", "Down", "Down", "Right", "Up"},
			checked: true, legal: true, progress: 1},
		{name: "plan walks into a hole",
			think:   "So I will go Right, then Down.",
			commits: []string{"Right", "Down"}, checked: true},
		{name: "move into the edge is legal",
			think:   "I will move Up.",
			commits: []string{"Up"}, checked: true, legal: true},
		{name: "stop word ends the plan",
			think:   "I will go down because the hole is to my right.",
			commits: []string{"Down"}, claims: 1, truths: 1,
			checked: true, legal: true, progress: 1.0 / 6},
		{name: "negated claim is no claim",
			think:   "There is no hole to my right, so I go down.",
			commits: []string{"Down"}, checked: true, legal: true, progress: 1.0 / 6},
		{name: "plan away from the goal",
			setup: []string{"Down", "Down", "Right"}, think: "I will go Left.",
			commits: []string{"Left"}, checked: true, legal: true, progress: -1.0 / 3}, // 3 moves, then 4
		{name: "in a hole nothing is played",
			setup: []string{"Right", "Down"}, think: "The goal is below me. I will go Left.",
			commits: []string{"Left"}, claims: 1, truths: 1},
		{name: "unparsed", think: "Let me think about the lake carefully."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := loadLake(t, false, 0, rows...)
			for _, a := range tt.setup {
				f.Step(a)
			}
			checkReason(t, f, tt)
		})
	}
}

func TestReasonSokoban(t *testing.T) {
	level := []string{
		"######",
		"#O___#",
		"#__X_#",
		"#__P##",
		"######",
	}
	tests := []reasonCase{
		{name: "true claims",
			think: "There is a box above me. To my right is a wall, below me is a wall and to my left is empty floor. " +
				"The target is to my left; the target is above me, the box is above me.",
			claims: 7, truths: 7},
		{name: "false claims",
			think:  "There is a box to my left. The box is below me, the target is to my right and to my left is a wall.",
			claims: 4},
		{name: "adjacent forms",
			think:  "The box is directly above me, the cell above me has a box, the target is just to my left.",
			claims: 3, truths: 2},
		{name: "push toward the target",
			think:   "The box is above me, so I will push Up.",
			commits: []string{"Up"}, claims: 1, truths: 1,
			checked: true, legal: true, progress: 1.0 / 3}, // box 3 from the target, then 2
		{name: "solve, later moves ignored",
			think:   "Plan: Up, Right, Up, Left, Left, Down.",
			commits: []string{"Up", "Right", "Up", "Left", "Left", "Down"},
			checked: true, legal: true, progress: 1},
		{name: "push into a dead corner",
			think:   "I will go Left, Up, Right.",
			commits: []string{"Left", "Up", "Right"}, checked: true},
		{name: "walk into a wall",
			think:   "I will move Right.",
			commits: []string{"Right"}, checked: true},
		{name: "walking moves no box",
			think:   "I will go Left, Left.",
			commits: []string{"Left", "Left"}, checked: true, legal: true},
		{name: "unparsed", think: "This level looks tricky."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkReason(t, newTestSokoban(t, level...), tt)
		})
	}
}

func TestReasonBandit(t *testing.T) {
	tests := []reasonCase{
		{think: "Dragon is better.", claims: 1, truths: 1},
		{think: "Phoenix is better.", claims: 1},
		{think: "Phoenix is worse and Dragon pays more.", claims: 2, truths: 2},
		{think: "The dragon arm has the higher expected reward, but phoenix has a lower average payout.", claims: 2, truths: 2},
		{think: "Dragon pays less.", claims: 1},
		{think: "Dragon is not better.", claims: 0},
		{think: "I choose phoenix.", commits: []string{"Phoenix"}},
		{think: "Dragon seems better, so I pull Dragon over Phoenix.", commits: []string{"Dragon"}, claims: 1, truths: 1},
		{think: "Names are symbolic."},
	}
	b := mustNew(t, "Bandit")
	mustReset(t, b, 0)
	for _, tt := range tests {
		checkReason(t, b, tt)
	}
	// With equal means neither arm is better nor worse.
	cfg := DefaultBanditConfig()
	cfg.LoArmScore = 0.25
	even, err := NewBandit(cfg)
	if err != nil {
		t.Fatal(err)
	}
	checkReason(t, even, reasonCase{think: "Dragon is better, dragon is worse.", claims: 2})
}

func TestReasonPlanAgainstAnswer(t *testing.T) {
	// The think plans Down; the answer says Left. Reason reads the think
	// only, so a caller can see the two disagree.
	f := loadLake(t, false, 0, "SFFF", "FHFH", "FFFH", "HFFG")
	p := ParseResponse("The goal is below me, so I will go Down.</think><answer>Left</answer>", true, 5, f)
	r := Reason(f, p.Think)
	if want := []string{"Down"}; !slices.Equal(r.Commits, want) || slices.Equal(r.Commits, p.Valid) {
		t.Errorf("Commits %v (answer %v), want %v", r.Commits, p.Valid, want)
	}
}

func TestReasonUncheckedEnvironment(t *testing.T) {
	c := mustNew(t, "Countdown")
	mustReset(t, c, 0)
	if r := Reason(c, "I will go left."); r.Checked || r.Commits != nil {
		t.Errorf("Countdown: %+v, want nothing checked", r)
	}
}

func TestReasonLeavesStateUnchanged(t *testing.T) {
	thinks := []string{
		"The goal is below me. I will go Down, Right, Right, Up, Left.",
		"There is a box above me. Plan: Up || Up || Left || Down || Right || Right.",
		"Dragon pays more, so I choose Dragon.",
		"I will pull Phoenix.",
	}
	for _, tag := range []string{"FrozenLake", "SimpleSokoban", "LargerSokoban", "Bandit"} {
		t.Run(tag, func(t *testing.T) {
			for seed := int64(0); seed < 20; seed++ {
				a, b := mustNew(t, tag), mustNew(t, tag)
				mustReset(t, a, seed)
				mustReset(t, b, seed)
				for i := range 10 {
					for s, th := range thinks {
						Reason(a, th)
						a.(ThinkWriter).GroundedThink(a.Actions(), s)
					}
					if ra, rb := a.Render(), b.Render(); ra != rb {
						t.Fatalf("seed %d step %d: render\n%s\nwant\n%s", seed, i, ra, rb)
					}
					act := a.Actions()[(i+int(seed))%len(a.Actions())]
					oa, ra, da, ia := a.Step(act)
					ob, rb, db, ib := b.Step(act)
					if oa != ob || ra != rb || da != db || ia != ib {
						t.Fatalf("seed %d step %d: Step(%s) differs after Reason", seed, i, act)
					}
				}
			}
		})
	}
}
