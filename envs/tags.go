package envs

import "fmt"

// RAGEN's env_instruction texts (config/envs.yaml), verbatim, typos included.
const (
	sokobanInstruction = "You are solving the Sokoban puzzle. You are the player and you need to push all boxes to targets. " +
		"When you are right next to a box, you can push it by moving in the same direction. " +
		"You cannot push a box through a wall, and you cannot pull a box. " +
		"The answer should be a sequence of actions, like <answer>Right || Right || Up</answer>"
	frozenLakeInstruction = "You are solving the FrozenLake puzzle. Forbid the whole and go to the target. " +
		"You may move to the unintended direction due to the slippery ice. " +
		"Example answer format: <think>To forbid the hole and go to the target, I should go left then go up.</think><answer>Left || Up</answer>"
	countdownInstruction = "You are solving the Countdown puzzle. You should use the num list to create an equation that equals the target. " +
		"Example answer format: <think> To find an equation using [3, 5, 2] to get 4. Let's check 2 + 5 = 7, 7 - 3 = 4. " +
		"So the answer is 2 + 5 - 3 = 4. </think><answer>2 + 5 - 3</answer>"
)

// The differently drawn Sokoban of SokobanDifferentGridVocab.
var (
	altSokobanGridLookup = [7]string{"W", ".", "G", "C", "B", "A", "@"}
	altSokobanGridVocab  = []Symbol{
		{"W", "wall"}, {".", "empty"}, {"G", "target"}, {"C", "box on target"},
		{"B", "box"}, {"A", "player"}, {"@", "player on target"},
	}
)

// RAGEN's custom_envs (docs/ragen.md#environments), except the image, dataset
// and web ones.
func init() {
	sokoban := func(dim, boxes, depth int) SokobanConfig {
		c := DefaultSokobanConfig()
		c.DimX, c.DimY, c.NumBoxes, c.MaxSteps, c.SearchDepth = dim, dim, boxes, 100, depth
		return c
	}
	sokobanSpec := func(cfg SokobanConfig) Spec {
		return Spec{
			EnvType: "sokoban", MaxActionsPerTraj: 10, MaxTokens: 100,
			Instruction: sokobanInstruction,
			// The legend is the default one even when cfg draws differently: see Prefix.
			PromptSymbols: sokobanGridVocab, PromptActions: sokobanActions,
			Config: cfg,
		}
	}
	mustRegister("SimpleSokoban", sokobanSpec(sokoban(6, 1, 300)), newSokobanEnv)
	mustRegister("LargerSokoban", sokobanSpec(sokoban(8, 2, 10)), newSokobanEnv)
	alt := sokoban(6, 1, 30)
	alt.GridLookup, alt.GridVocab = altSokobanGridLookup, altSokobanGridVocab
	mustRegister("SokobanDifferentGridVocab", sokobanSpec(alt), newSokobanEnv)
	// RAGEN's coordinate tags. Its prompt builder reads observation_format
	// from the entry's top level, where it never is, so their prompts list
	// the grid legend too (Prefix).
	coord := sokoban(6, 1, 300)
	coord.Observation = ObsGridCoord
	coordSokoban := sokobanSpec(coord)
	coordSokoban.Instruction, coordSokoban.MaxTokens = coordSokobanInstruction, 120
	mustRegister("CoordSokoban", coordSokoban, newSokobanEnv)

	mustRegister("FrozenLake", Spec{
		EnvType: "frozen_lake", MaxActionsPerTraj: 10, MaxTokens: 100,
		Instruction:   frozenLakeInstruction,
		PromptSymbols: frozenLakeGridVocab, PromptActions: frozenLakeActions,
		Config: func() FrozenLakeConfig {
			c := DefaultFrozenLakeConfig()
			c.PolicyHorizon = 10 // plan for the episode's action budget
			return c
		}(),
	}, newFrozenLakeEnv)
	mustRegister("CoordFrozenLake", Spec{
		EnvType: "frozen_lake", MaxActionsPerTraj: 10, MaxTokens: 120,
		Instruction:   coordFrozenLakeInstruction,
		PromptSymbols: frozenLakeGridVocab, PromptActions: frozenLakeActions,
		Config: func() FrozenLakeConfig {
			c := DefaultFrozenLakeConfig() // with RAGEN's current p and success_rate
			c.P, c.SuccessRate, c.Observation, c.PolicyHorizon = 0.9, 0.8, ObsGridCoord, 10
			return c
		}(),
	}, newFrozenLakeEnv)

	bandit := func(lo, hi string) Spec {
		c := DefaultBanditConfig()
		c.LoArmName, c.HiArmName = lo, hi
		return Spec{EnvType: "bandit", MaxActionsPerTraj: 1, MaxTokens: 100, Config: c}
	}
	mustRegister("Bandit", bandit("Phoenix", "Dragon"), newBanditEnv)
	mustRegister("BanditTest", bandit("Trader", "Librarian"), newBanditEnv)

	mustRegister("Countdown", Spec{
		EnvType: "countdown", MaxActionsPerTraj: 1, MaxTokens: 100,
		Instruction: countdownInstruction, Config: DefaultCountdownConfig(),
	}, newCountdownEnv)

	// RAGEN's Sudoku tags (9×9, easy and medium, 20 and 30 actions, never
	// enough to fill their 32 and 40 empty cells), a 4×4 one a small model
	// can finish in its budget, and RAGEN's 2048.
	mustRegister("SimpleSudoku", sudokuSpec(9, "easy", 20), newSudokuEnv)
	mustRegister("MediumSudoku", sudokuSpec(9, "medium", 30), newSudokuEnv)
	mustRegister("Sudoku4x4", sudokuSpec(4, "easy", 10), newSudokuEnv)
	mustRegister("game_2048", game2048Spec(), newGame2048Env)
}

// The factories of the built-in environment types.

func newSokobanEnv(spec Spec) (Env, error) {
	cfg, ok := spec.Config.(SokobanConfig)
	if !ok {
		return nil, configTypeError(spec, "SokobanConfig")
	}
	e, err := NewSokoban(cfg)
	if err != nil {
		return nil, err
	}
	return e, nil
}

func newFrozenLakeEnv(spec Spec) (Env, error) {
	cfg, ok := spec.Config.(FrozenLakeConfig)
	if !ok {
		return nil, configTypeError(spec, "FrozenLakeConfig")
	}
	e, err := NewFrozenLake(cfg)
	if err != nil {
		return nil, err
	}
	return e, nil
}

func newBanditEnv(spec Spec) (Env, error) {
	cfg, ok := spec.Config.(BanditConfig)
	if !ok {
		return nil, configTypeError(spec, "BanditConfig")
	}
	e, err := NewBandit(cfg)
	if err != nil {
		return nil, err
	}
	return e, nil
}

func newCountdownEnv(spec Spec) (Env, error) {
	cfg, ok := spec.Config.(CountdownConfig)
	if !ok {
		return nil, configTypeError(spec, "CountdownConfig")
	}
	e, err := NewCountdown(cfg)
	if err != nil {
		return nil, err
	}
	return e, nil
}

func configTypeError(spec Spec, want string) error {
	return fmt.Errorf("spec config is %T, want envs.%s", spec.Config, want)
}
