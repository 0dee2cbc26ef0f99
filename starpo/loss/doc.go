// Package loss holds StarPO's tensor-side losses: verl's agg_loss, the clipped
// PPO policy loss with dual clip, the clipped value loss, the entropy term and
// the KL estimators (docs/ragen.md#policy-loss, #value-loss). Names and
// conventions follow verl's core_algos.
//
// Every per-token input is a [B, T] tensor in response coordinates, with a
// response mask of the same shape: a position is trained where the mask is
// > 0 (masks hold 0 or 1). Each function first replaces what its inputs
// hold at untrained positions by 0 (torch.where, not a product), so garbage
// there, NaN and Inf included, changes neither the loss nor its gradient,
// which is exactly 0 at those positions. Inputs are fp32 (fp64 works too);
// reductions accumulate in fp32, or fp64 for fp64 inputs.
//
// Each loss comes back as a scalar tensor that holds the autograd graph (the
// caller backpropagates through it and drops it), together with its metrics as
// plain Go numbers under RAGEN's metric names (docs/ragen.md#metrics).
// Temporaries are dropped before returning. A libtorch failure comes back as
// an error; no function here exits the process. All calls belong on the one OS
// thread that runs libtorch work.
package loss
