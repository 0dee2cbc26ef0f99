// Package rollout runs StarPO's multi-turn rollouts: it holds a batch of
// environments in groups (RAGEN's EnvStateManager), builds each turn's
// prompt (the context manager), applies the policy's answers, and
// formulates the trajectories and metrics the update reads: RAGEN's
// behaviour in docs/ragen.md#prompts, #parsing, #rollout,
// #training-sequence and #metrics.
//
// Token layout, a design decision of this project. RAGEN re-tokenises the
// whole conversation for the update, with each answer replaced by its
// normalised text (docs/ragen.md#training-sequence), so what it trains on can
// differ from what was sampled. Here every environment keeps the token ids
// actually sampled, and trains on exactly those; a normalised response is
// never re-tokenised. Turn 1's prompt is the encoded RenderChat([system,
// user], true) plus the generation prefix; each later prompt is the previous
// prompt, the sampled ids, <|im_end|> if sampling stopped without it (context,
// not trained), and the encoded text
//
//	"\n<|im_start|>user\nReward:\n{r}\n\nTurn k:\n{state block}<|im_end|>\n<|im_start|>assistant\n<think>"
//
// The text of the sequence is exactly what RenderChat gives for the message
// list with the raw responses (the generation prefix plus the decoded
// generation) as assistant contents; only the tokenisation of the assistant
// parts is the sampler's. The prompt seen by the model, the normalised
// response RAGEN would put back, and Parsed.Raw are kept in the history for
// inspection. The loss mask is 1 exactly on sampled ids (the sampled
// <|im_end|> included), and the old log-probs are the sampler's.
//
// With MaxContextWindow k > 0 a prompt shows only the last k history
// entries, numbered from "Turn 1" again (docs/ragen.md#context-window).
// Contexts then differ from turn to turn, so each turn is its own training
// sequence: its windowed prompt, then its sampled ids, the only trained
// tokens. (RAGEN instead truncates the cached history in place and trains
// one sequence of the last k entries.)
//
// Seeds. Group g of a Reset(base) starts from seed base+g. Training resets
// with Config.TrainSeed(step), which advances by EnvGroups per step;
// validation resets with Config.Seed every time.
//
// The package is pure Go: environments step on their own goroutines and
// exchange plain values; the model side is behind Generator.
package rollout
