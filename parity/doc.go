// Package parity checks ragen-go against its peers' own implementations,
// run from Python: verl's RL math (verl.trainer.ppo.core_algos and
// verl.utils.torch_functional: advantages, whitening, loss aggregation, the
// policy, value, entropy and KL losses, with their gradients) and
// HuggingFace's tokenizers on Qwen's vocabulary. The package has only tests.
//
// The tests generate deterministic random inputs in Go, hand them to a
// helper under scripts/parity/ as JSON on standard input, and compare its
// answers with this project's code (starpo/advantage, starpo/loss, model's
// training scorer, tokenizer/). The interpreter comes from
// RAGEN_PARITY_PYTHON, the pinned environment of scripts/parity-venv.sh
// (`make parity` sets it); without it every test skips.
//
// Each comparison states its tolerance. Where ragen-go differs from the
// installed verl on purpose, because it follows RAGEN's pinned verl
// (1e47e41, spec §0) or RAGEN's own code, the test says so and checks the
// documented relation between the two answers instead of equality, so the
// note goes stale loudly if either side changes.
package parity
