// Package torchrt sets up the libtorch runtime that the rest of the project
// uses through gotch: the device, the thread counts, the seed, grad-mode
// guards, and a description of the build for `ragen version`.
//
// All libtorch work runs on one locked OS thread: grad mode and gotch's
// error slot are thread-local.
package torchrt
