// Package collapse measures RAGEN-2's "template collapse": whether the
// policy's reasoning still depends on its input, as the mutual information
// I(X; Z) between the prompt X and the reasoning Z under the batch's
// empirical prompt distribution (uniform over the distinct prompts seen).
// Low entropy H(Z|X) alone can mean a confident policy; I(X; Z) near 0
// means one template whatever the prompt.
//
// Samples. Sample i is a pair (x_i, z_i): x_i the prompt ids the policy saw,
// ending with its `<think>` generation prefix, z_i the reasoning ids it
// sampled between `<think>` and `</think>`, tags excluded. Samples with an
// empty z are dropped first. The distinct prompts (identical id sequences
// are one) are the columns j = 1..N; col(i) is the column of x_i.
//
// Estimator. With teacher forcing, L[i][j] = log p(z_i | x_j) =
// Σ_t log p(z_i,t | x_j, z_i,<t), and per token L̄[i][j] = L[i][j]/|z_i|.
// For each sample the matched score is L[i][col(i)], the marginal one
// log (1/N) Σ_j exp L[i][j], the log-probability of z_i under the mixture
// of all prompts. Averaged over samples:
//
//	mi_estimate              mean(matched − marginal) on L̄, ≤ log N
//	conditional_entropy_est  −mean(matched) on L̄, an estimate of H(Z|X)
//	reasoning_entropy_est    −mean(marginal) on L̄, an estimate of H(Z)
//
// and their _seq_ twins on L (nats per reasoning, not per token), so that
// mi = reasoning entropy − conditional entropy. mi_upper_bound is log N,
// reached when each reasoning is likely under its own prompt only.
// Retrieval asks the same question as a classifier: the share of samples
// whose own prompt maximises L[i][·]; a tie among k maximisers that
// includes the own prompt counts 1/k, so a matrix of equal columns scores
// exactly the chance level 1/N. A collapsed policy has mi near 0 and
// retrieval near chance.
//
// With fewer than two prompts nothing can be told apart: only the counts
// num_samples and num_prompts are reported.
//
// Stats computes the metrics from the matrix on plain slices; Measure
// fills the matrix with a model (M·N scoring sequences, see Measure);
// Pick chooses which samples to measure.
package collapse
