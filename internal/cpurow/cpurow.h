// One decoding step of a pre-norm Llama/Qwen2 decoder stack for one
// sequence, fp32, over the weights' own memory (cpurow.go explains why).
#ifndef RAGEN_CPUROW_H
#define RAGEN_CPUROW_H

#include <stdint.h>

// A linear map y = W·x + b: W [out, in] row-major, b [out] or NULL.
typedef struct {
	const float *w;
	const float *b;
} cpurow_proj;

// One decoder layer: its two RMSNorm weights [d], its seven projections,
// and its key and value caches [nKV, cap, hd], row-major.
typedef struct {
	const float *in_norm, *post_norm;
	cpurow_proj q, k, v, o, gate, up, down;
	float *kcache, *vcache;
} cpurow_layer;

// The stack's shape.
typedef struct {
	int64_t d, n_heads, n_kv_heads, head_dim, inter, cap;
	float eps;
} cpurow_shape;

// cpurow_init resolves cblas_sgemv in the BLAS that libtorch loaded; 0 when
// there is none to call.
int cpurow_init(void);

// cpurow_step runs the n layers on the hidden state x [d] in place, for the
// token at position pos: its keys and values go to column pos of each
// cache, and it attends over columns [0, pos] with the additive bias
// [pos+1]. cos and sin [hd] are its rotary angles. Returns 0, or -1 when
// scratch memory could not be allocated.
int cpurow_step(const cpurow_shape *sh, const cpurow_layer *layers, int n, float *x,
                const float *cos, const float *sin, const float *bias, int64_t pos);

#endif
