// shim.h: the C face of ragen's c10d shim (shim.cpp), which reaches
// libtorch's own distributed engine: a TCPStore for rendezvous and a
// ProcessGroupGloo (CPU) or ProcessGroupNCCL (CUDA builds) for collectives.
//
// Every function that can fail returns NULL on success or a malloc'd error
// message the caller frees. Tensors are gotch's handles (torch::Tensor*).
#ifndef RAGEN_C10D_SHIM_H
#define RAGEN_C10D_SHIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef void *rg_store;
typedef void *rg_group;

// rg_store_new connects to (or, with is_server, serves) the TCPStore at
// host:port that world processes meet at.
char *rg_store_new(const char *host, int port, int world, int is_server, int64_t timeout_ms, rg_store *out);
char *rg_store_set(rg_store s, const char *key, const void *data, size_t n);
// rg_store_get waits for key and returns a malloc'd copy of its value.
char *rg_store_get(rg_store s, const char *key, void **data, size_t *n);
void rg_store_free(rg_store s);

// rg_group_new builds the process group of rank in world over the store:
// backend 0 is Gloo, 1 is NCCL. Collectives fail after timeout_ms.
char *rg_group_new(rg_store s, int backend, int rank, int world, int64_t timeout_ms, rg_group *out);
void rg_group_free(rg_group g);
// rg_has_gloo and rg_has_nccl tell whether the shim was built with that
// process group.
int rg_has_gloo(void);
int rg_has_nccl(void);

// op: 0 sum, 1 max, 2 min, 3 product.
char *rg_allreduce(rg_group g, void *tensor, int op);
// rg_allreduce_grads sums the gradients of n parameters across ranks in
// place, bucketed into flat buffers of at most bucket_bytes; a parameter
// without a gradient contributes zeros (and gets a zero gradient), so every
// rank calls the same collectives.
char *rg_allreduce_grads(rg_group g, void **params, int n, int64_t bucket_bytes);
char *rg_broadcast(rg_group g, void **tensors, int n, int root);
// rg_allgather fills out, a contiguous tensor of shape [world, in...], with
// every rank's in.
char *rg_allgather(rg_group g, void *in, void *out);
char *rg_barrier(rg_group g);

#ifdef __cplusplus
}
#endif

#endif
