#include "cpurow.h"

#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

// CBLAS's enums, by value (no cblas.h is needed to build).
enum { ROW_MAJOR = 101, NO_TRANS = 111, TRANS = 112 };

typedef void (*sgemv_fn)(int order, int trans, int m, int n, float alpha, const float *a, int lda,
                         const float *x, int incx, float beta, float *y, int incy);
static sgemv_fn sgemv;

int cpurow_init(void) {
	sgemv = (sgemv_fn)dlsym(RTLD_DEFAULT, "cblas_sgemv");
	return sgemv != 0;
}

// y [out] = W [out, in] · x [in] + b.
static void project(const cpurow_proj *p, int64_t out, int64_t in, const float *x, float *y) {
	float beta = 0;
	if (p->b) {
		memcpy(y, p->b, out * sizeof(float));
		beta = 1;
	}
	sgemv(ROW_MAJOR, NO_TRANS, (int)out, (int)in, 1.0f, p->w, (int)in, x, 1, beta, y, 1);
}

// y = x · rsqrt(mean(x²) + eps) · w, the mean accumulated in double.
static void rmsnorm(int64_t d, const float *x, const float *w, float eps, float *y) {
	double ss = 0;
	for (int64_t i = 0; i < d; i++) ss += (double)x[i] * x[i];
	float inv = 1.0f / sqrtf((float)(ss / d) + eps);
	for (int64_t i = 0; i < d; i++) y[i] = (x[i] * inv) * w[i];
}

// rope rotates the n heads of x [n, hd] in place: x·cos + rotate_half(x)·sin,
// rotate_half(x) = (−x₂, x₁) for the halves x₁, x₂ of each head.
static void rope(int64_t n, int64_t hd, float *x, const float *cos, const float *sin) {
	int64_t h = hd / 2;
	for (int64_t j = 0; j < n; j++) {
		float *v = x + j * hd;
		for (int64_t i = 0; i < h; i++) {
			float a = v[i], b = v[i + h];
			v[i] = a * cos[i] - b * sin[i];
			v[i + h] = b * cos[i + h] + a * sin[i + h];
		}
	}
}

// attend writes softmax(q·Kᵀ/√hd + bias)·V for each query head of q
// [nH, hd] into out [nH, hd], query head j reading kv head j / (nH/nKV)
// over the first s columns of the caches. scores is scratch [s].
static void attend(const cpurow_shape *sh, const float *q, const float *kc, const float *vc,
                   const float *bias, int64_t s, float *scores, float *qs, float *out) {
	int64_t hd = sh->head_dim, rep = sh->n_heads / sh->n_kv_heads;
	float scale = 1.0f / sqrtf((float)hd);
	for (int64_t j = 0; j < sh->n_heads; j++) {
		const float *k = kc + (j / rep) * sh->cap * hd, *v = vc + (j / rep) * sh->cap * hd;
		for (int64_t i = 0; i < hd; i++) qs[i] = q[j * hd + i] * scale;
		sgemv(ROW_MAJOR, NO_TRANS, (int)s, (int)hd, 1.0f, k, (int)hd, qs, 1, 0.0f, scores, 1);
		float m = -INFINITY;
		for (int64_t t = 0; t < s; t++) {
			scores[t] += bias[t];
			if (scores[t] > m) m = scores[t];
		}
		float sum = 0;
		for (int64_t t = 0; t < s; t++) {
			scores[t] = expf(scores[t] - m);
			sum += scores[t];
		}
		for (int64_t t = 0; t < s; t++) scores[t] /= sum;
		sgemv(ROW_MAJOR, TRANS, (int)s, (int)hd, 1.0f, v, (int)hd, scores, 1, 0.0f, out + j * hd, 1);
	}
}

static float silu(float x) { return x / (1.0f + expf(-x)); }

int cpurow_step(const cpurow_shape *sh, const cpurow_layer *layers, int n, float *x,
                const float *cos, const float *sin, const float *bias, int64_t pos) {
	int64_t d = sh->d, hd = sh->head_dim, nq = sh->n_heads * hd, nkv = sh->n_kv_heads * hd;
	int64_t inter = sh->inter, s = pos + 1;
	int64_t big = d > inter ? d : inter;
	float *buf = malloc(sizeof(float) * (d + 2 * nq + 2 * nkv + 2 * big + s + hd));
	if (!buf) return -1;
	float *xn = buf, *q = xn + d, *att = q + nq, *k = att + nq, *v = k + nkv;
	float *g = v + nkv, *u = g + big, *scores = u + big, *qs = scores + s;
	for (int l = 0; l < n; l++) {
		const cpurow_layer *L = &layers[l];
		// h = x + o(attn(norm₁(x)))
		rmsnorm(d, x, L->in_norm, sh->eps, xn);
		project(&L->q, nq, d, xn, q);
		project(&L->k, nkv, d, xn, k);
		project(&L->v, nkv, d, xn, v);
		rope(sh->n_heads, hd, q, cos, sin);
		rope(sh->n_kv_heads, hd, k, cos, sin);
		for (int64_t j = 0; j < sh->n_kv_heads; j++) {
			memcpy(L->kcache + (j * sh->cap + pos) * hd, k + j * hd, hd * sizeof(float));
			memcpy(L->vcache + (j * sh->cap + pos) * hd, v + j * hd, hd * sizeof(float));
		}
		attend(sh, q, L->kcache, L->vcache, bias, s, scores, qs, att);
		project(&L->o, d, nq, att, g);
		for (int64_t i = 0; i < d; i++) x[i] += g[i];
		// out = h + down(silu(gate(norm₂(h))) ⊙ up(norm₂(h)))
		rmsnorm(d, x, L->post_norm, sh->eps, xn);
		project(&L->gate, inter, d, xn, g);
		project(&L->up, inter, d, xn, u);
		for (int64_t i = 0; i < inter; i++) g[i] = silu(g[i]) * u[i];
		project(&L->down, d, inter, g, u);
		for (int64_t i = 0; i < d; i++) x[i] += u[i];
	}
	free(buf);
	return 0;
}
