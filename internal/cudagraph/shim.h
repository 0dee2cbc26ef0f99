// shim.h: the C face of ragen's CUDA-graph shim (shim.cpp) over libtorch's
// at::cuda::CUDAGraph: record the kernels of a fixed-shape step once and
// launch them again with one call.
//
// Every function that can fail returns NULL on success or a malloc'd error
// message the caller frees. Built without RAGEN_CUDA_GRAPHS (a CPU-only
// libtorch, or no CUDA headers), each returns the reason instead.
#ifndef RAGEN_CUDAGRAPH_SHIM_H
#define RAGEN_CUDAGRAPH_SHIM_H

#ifdef __cplusplus
extern "C" {
#endif

typedef void *rg_graph;

// rg_graph_compiled tells whether this build has CUDA graphs.
int rg_graph_compiled(void);
// rg_graph_new makes an empty graph for CUDA device `device`, with a side
// stream from libtorch's pool to capture on (capture cannot use the
// default stream).
char *rg_graph_new(int device, rg_graph *out);
// rg_graph_enter waits for the device, then makes the side stream current
// on this thread; rg_graph_leave waits for it and restores the previous
// stream. Warm-up runs and the capture happen between the two.
char *rg_graph_enter(rg_graph g);
char *rg_graph_leave(rg_graph g);
char *rg_graph_capture_begin(rg_graph g);
char *rg_graph_capture_end(rg_graph g);
// rg_graph_replay launches the captured graph on the current stream.
char *rg_graph_replay(rg_graph g);
// rg_graph_reset frees the captured graph and its memory pool.
char *rg_graph_reset(rg_graph g);
void rg_graph_free(rg_graph g);

#ifdef __cplusplus
}
#endif

#endif
