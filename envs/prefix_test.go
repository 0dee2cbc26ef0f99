package envs

import "testing"

func TestPrefix(t *testing.T) {
	sokobanTail := "\nThe meaning of each symbol in the state is:\n" +
		"#: wall, _: empty, O: target, √: box on target, X: box, P: player, S: player on target\n" +
		"Your available actions are:\nUp, Down, Left, Right\n" +
		"You can make up to 10 actions, separated by the action separator \" || \"\n"
	tests := []struct {
		tag, want string
	}{
		{"SimpleSokoban", sokobanInstruction + sokobanTail},
		{"LargerSokoban", sokobanInstruction + sokobanTail},
		// RAGEN's quirk: the default legend, although the grid uses W . G C B A @.
		{"SokobanDifferentGridVocab", sokobanInstruction + sokobanTail},
		{"FrozenLake", "You are solving the FrozenLake puzzle. Forbid the whole and go to the target. " +
			"You may move to the unintended direction due to the slippery ice. " +
			"Example answer format: <think>To forbid the hole and go to the target, I should go left then go up.</think><answer>Left || Up</answer>" +
			"\nThe meaning of each symbol in the state is:\n" +
			"P: player, _: empty, O: hole, G: goal, X: player in hole, √: player on goal\n" +
			"Your available actions are:\nLeft, Down, Right, Up\n" +
			"You can make up to 10 actions, separated by the action separator \" || \"\n"},
		{"Bandit", ""},
		{"BanditTest", ""},
		{"Countdown", "You are solving the Countdown puzzle. You should use the num list to create an equation that equals the target. " +
			"Example answer format: <think> To find an equation using [3, 5, 2] to get 4. Let's check 2 + 5 = 7, 7 - 3 = 4. " +
			"So the answer is 2 + 5 - 3 = 4. </think><answer>2 + 5 - 3</answer>"},
	}
	for _, tt := range tests {
		got, err := Prefix(tt.tag)
		if err != nil || got != tt.want {
			t.Errorf("Prefix(%s) = %q, %v\nwant %q", tt.tag, got, err, tt.want)
		}
	}
	if _, err := Prefix("Nope"); err == nil {
		t.Error("Prefix(Nope) succeeded")
	}
}

func TestSpecPrefixWithOwnLegend(t *testing.T) {
	spec, _ := Lookup("SokobanDifferentGridVocab")
	spec.PromptSymbols = spec.Config.(SokobanConfig).GridVocab
	want := sokobanInstruction + "\nThe meaning of each symbol in the state is:\n" +
		"W: wall, .: empty, G: target, C: box on target, B: box, A: player, @: player on target\n" +
		"Your available actions are:\nUp, Down, Left, Right\n" +
		"You can make up to 10 actions, separated by the action separator \" || \"\n"
	if got := SpecPrefix(spec); got != want {
		t.Errorf("SpecPrefix = %q\nwant %q", got, want)
	}
}
