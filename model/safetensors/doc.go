// Package safetensors reads and writes HuggingFace safetensors files and
// sharded checkpoints, without libtorch.
//
// A safetensors file is an 8-byte little-endian header length N, N bytes of
// JSON header mapping each tensor name to its dtype, shape and byte range
// [begin, end) in the data buffer that follows (plus an optional
// "__metadata__" object of strings), then the data buffer itself. The ranges
// must tile the buffer exactly: no gaps, no overlaps, nothing left over.
//
// Reading maps the file read-only, so a tensor's bytes are a view of the
// mapping and a multi-gigabyte checkpoint is never held twice in memory: the
// caller copies each tensor once, into its own storage. Writing streams one
// tensor at a time, so an exporter need never hold all the weights in Go
// memory either.
package safetensors
