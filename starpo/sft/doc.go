// Package sft is the supervised warm start: demonstrations by the
// environments' solvers (an expert, imperfect on purpose), rendered exactly
// like rollouts, and token-mean negative log-likelihood training of the
// policy on their trained tokens, the same loss mask the RL update uses.
// Run is `ragen sft`'s stage; Decisions scores how well a policy predicts
// the expert's choices on held-out demonstrations.
package sft
