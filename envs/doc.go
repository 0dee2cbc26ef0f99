// Package envs holds the text environments RAGEN trains LLM agents on
// (Bandit, Sokoban, FrozenLake, Countdown, Sudoku, 2048) behind one small
// interface, the registry of RAGEN's environment tags, the first-prompt
// prefix text, and the parser that turns a model's decoded response into
// environment actions.
//
// Rules, rewards, symbols and instruction texts follow RAGEN
// (docs/ragen.md#environments, #prompts, #parsing). Where this package
// differs, on purpose:
//
//   - Random numbers. Every environment owns a math/rand/v2 PCG generator
//     seeded by Reset, so a seed always gives the same episode here, but not
//     the episode Python RAGEN gives for that seed: RAGEN draws from Python's
//     Mersenne Twister, NumPy's legacy global generator and gymnasium's
//     PCG64, which this package does not replay. The generators' procedures
//     and so the distributions of levels match; individual levels do not.
//   - Retries. Where RAGEN retries a failed Sokoban generation with a
//     process-randomised string hash of the seed, the retry seed here comes
//     from a fixed mixing function, so retries are reproducible too, and
//     they are bounded.
//   - Countdown tasks are drawn procedurally (3 or 4 numbers, a target
//     reachable with + and −, as RAGEN's filtered dataset) instead of being
//     read from a downloaded dataset, and answers are evaluated by a small
//     exact parser instead of Python's eval. An answer that does not parse
//     scores 0, where RAGEN gives the 0.1 format score whenever the digits
//     match.
//   - Sudoku puzzles have a unique solution: a clue is blanked only while
//     the solution stays unique, where RAGEN blanks a fixed share of cells
//     unchecked. Placement digits are ASCII, where Python's \d takes any
//     script's digits.
//   - Step never panics: an unknown action (RAGEN asserts) leaves the state
//     unchanged and reports Info.ActionIsValid false.
//
// The package imports only the standard library, so it builds and tests
// without libtorch. An Env is not safe for concurrent use; separate
// environments can be stepped from separate goroutines.
package envs
