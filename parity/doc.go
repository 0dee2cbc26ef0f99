// Package parity checks ragen-go against its peers' own implementations,
// run from Python: verl's RL math (verl.trainer.ppo.core_algos and
// verl.utils.torch_functional: advantages, whitening, loss aggregation, the
// policy, value, entropy and KL losses, with their gradients),
// HuggingFace's tokenizers on Qwen's, Llama 3.2's and SmolLM2's
// vocabularies, llama.cpp's tokenizer on SmolLM2's GGUF file, gguf-py's
// GGUF reading and writing, and transformers' chat templates. The package
// has only tests; the model-level checks against transformers and
// llama.cpp are pytest files under scripts/parity/.
//
// The tests generate deterministic random inputs in Go, hand them to a
// helper under scripts/parity/ as JSON on standard input, and compare its
// answers with this project's code (starpo/advantage, starpo/loss, model's
// training scorer, tokenizer/, tokenizer/jinja, gguf/). The interpreter comes from
// RAGEN_PARITY_PYTHON, the pinned environment of scripts/parity-venv.sh
// (`make parity` sets it); without it every test skips.
//
// Each comparison states its tolerance. Where ragen-go differs from the
// installed verl on purpose, because it follows RAGEN's pinned verl (1e47e41,
// docs/ragen.md#sources) or RAGEN's own code, the test says so and checks the
// documented relation between the two answers instead of equality, so the note
// goes stale loudly if either side changes.
package parity
