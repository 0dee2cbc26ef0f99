// One decoding step of a pre-norm Llama/Qwen2 decoder stack, one token
// per sequence, fp32, over the weights' own memory (cpurow.go explains why).
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

// cpurow_init resolves cblas_sgemv and cblas_sgemm in the BLAS that libtorch loaded; 0 when
// there is none to call.
int cpurow_init(void);

// cpurow_step runs the n layers on the hidden states x [rows, d] in
// place, one new token per sequence (row), all at position pos of the
// caches, whose rows are the sequences [rows, nKV, cap, hd]: the keys and
// values go to column pos, and each row attends over columns [0, pos]
// with its additive bias, bias [rows, pos+1]. cos and sin [rows, hd] are
// the tokens' rotary angles. Returns 0, or -1 when scratch memory could
// not be allocated.
int cpurow_step(const cpurow_shape *sh, const cpurow_layer *layers, int n, int64_t rows,
                float *x, const float *cos, const float *sin, const float *bias, int64_t pos);

#endif
