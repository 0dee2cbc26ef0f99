// Package optim is the trainer's optimiser: AdamW exactly as PyTorch's
// torch.optim.AdamW computes it, global gradient-norm clipping with the
// non-finite skip of verl's actor and critic, the learning-rate schedule of
// verl's "constant" warm-up style, and optimiser state checkpoints in
// safetensors.
//
// One optimiser step of the trainer, after the micro-batches' Backward calls
// have accumulated their gradients:
//
//	optim.ZeroGrad(params)                   // before the first micro-batch
//	for _, mb := range microBatches {
//		loss(mb).Backward()                  // gradients add up
//	}
//	opt.SetLR(sched.LR(update))
//	norm, stepped, err := optim.StepIfFinite(opt, 1.0)
//
// gotch's BackwardStep zeroes the gradients itself and so cannot accumulate
// micro-batches, and its ClipGradNorm walks a whole VarStore; this package
// works on the []model.Param a model lists instead.
//
// All tensor work runs on the parameters' device, on the caller's locked OS
// thread, under no-grad. Every gotch op goes through torchrt.Must/Check and
// each exported function recovers a libtorch failure into an error. In-place
// ops call libtch directly (see inplace): gotch's in-place wrappers replace
// the tensor's C handle with a new one and never free the old, which keeps
// the storage of a dropped temporary alive forever.
package optim
