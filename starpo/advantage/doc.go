// Package advantage holds StarPO's per-trajectory RL math on plain Go slices:
// reward placement on tokens, group reward normalisation, the StarPO-S rollout
// filter and RAGEN-2's (Filter, of which StarPO-S is one setting), GAE and
// bi-level GAE with masked whitening, and the GRPO outcome advantage
// (docs/ragen.md#rewards, #filter, #advantages; docs/training.md). Names follow verl's
// core_algos.
//
// Layout. A batch is [B][T] in response coordinates: position j of a row
// gates the log-probability of token j+1 given tokens ≤ j, so the mask is
// the one-token-shifted loss mask of
// docs/ragen.md#training-sequence. Masks hold 0 or 1;
// a position is trained when its mask entry is not 0.
//
// Masked positions. The masked reductions here select positions instead of
// multiplying by the mask, so a NaN or Inf left in an untrained position
// cannot leak into a trained one (verl multiplies, which holds only for
// finite garbage). Where verl's semantics read untrained positions (GAE's
// rewards) the doc comment says so.
//
// The package imports only the standard library: it builds and tests
// without libtorch.
package advantage
