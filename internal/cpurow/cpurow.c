#include "cpurow.h"

#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

// CBLAS's enums, by value (no cblas.h is needed to build).
enum { ROW_MAJOR = 101, NO_TRANS = 111, TRANS = 112 };

typedef void (*sgemv_fn)(int order, int trans, int m, int n, float alpha, const float *a, int lda,
                         const float *x, int incx, float beta, float *y, int incy);
typedef void (*sgemm_fn)(int order, int transa, int transb, int m, int n, int k, float alpha,
                         const float *a, int lda, const float *b, int ldb, float beta, float *c,
                         int ldc);
static sgemv_fn sgemv;
static sgemm_fn sgemm;

int cpurow_init(void) {
	sgemv = (sgemv_fn)dlsym(RTLD_DEFAULT, "cblas_sgemv");
	sgemm = (sgemm_fn)dlsym(RTLD_DEFAULT, "cblas_sgemm");
	return sgemv && sgemm;
}

// Y [rows, out] = X [rows, in] · Wᵀ + b: a matrix-vector product for one
// row, which reads W once without repacking it, else a matrix product.
static void project(const cpurow_proj *p, int64_t rows, int64_t out, int64_t in, const float *x,
                    float *y) {
	float beta = 0;
	if (p->b) {
		for (int64_t r = 0; r < rows; r++) memcpy(y + r * out, p->b, out * sizeof(float));
		beta = 1;
	}
	if (rows == 1)
		sgemv(ROW_MAJOR, NO_TRANS, (int)out, (int)in, 1.0f, p->w, (int)in, x, 1, beta, y, 1);
	else
		sgemm(ROW_MAJOR, NO_TRANS, TRANS, (int)rows, (int)out, (int)in, 1.0f, x, (int)in, p->w,
		      (int)in, beta, y, (int)out);
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

// attend writes softmax(q·Kᵀ/√hd + bias)·V for each query head of one
// sequence's q [nH, hd] into out [nH, hd] over the first s columns of its
// caches [nKV, cap, hd]. The rep = nH/nKV query heads of a kv head are
// consecutive rows of q, so each kv head is two small matrix products.
// scores is scratch [rep, s].
static void attend(const cpurow_shape *sh, const float *q, const float *kc, const float *vc,
                   const float *bias, int64_t s, float *scores, float *out) {
	int64_t hd = sh->head_dim, rep = sh->n_heads / sh->n_kv_heads;
	float scale = 1.0f / sqrtf((float)hd);
	for (int64_t g = 0; g < sh->n_kv_heads; g++) {
		const float *k = kc + g * sh->cap * hd, *v = vc + g * sh->cap * hd;
		const float *qg = q + g * rep * hd;
		// scores [rep, s] = scale · qg [rep, hd] · k [s, hd]ᵀ
		sgemm(ROW_MAJOR, NO_TRANS, TRANS, (int)rep, (int)s, (int)hd, scale, qg, (int)hd, k,
		      (int)hd, 0.0f, scores, (int)s);
		for (int64_t j = 0; j < rep; j++) {
			float *sc = scores + j * s, m = -INFINITY, sum = 0;
			for (int64_t t = 0; t < s; t++) {
				sc[t] += bias[t];
				if (sc[t] > m) m = sc[t];
			}
			for (int64_t t = 0; t < s; t++) {
				sc[t] = expf(sc[t] - m);
				sum += sc[t];
			}
			for (int64_t t = 0; t < s; t++) sc[t] /= sum;
		}
		// out [rep, hd] = scores [rep, s] · v [s, hd]
		sgemm(ROW_MAJOR, NO_TRANS, NO_TRANS, (int)rep, (int)hd, (int)s, 1.0f, scores, (int)s, v,
		      (int)hd, 0.0f, out + g * rep * hd, (int)hd);
	}
}

static float silu(float x) { return x / (1.0f + expf(-x)); }

int cpurow_step(const cpurow_shape *sh, const cpurow_layer *layers, int n, int64_t rows,
                float *x, const float *cos, const float *sin, const float *bias, int64_t pos) {
	int64_t d = sh->d, hd = sh->head_dim, nq = sh->n_heads * hd, nkv = sh->n_kv_heads * hd;
	int64_t inter = sh->inter, s = pos + 1, rep = sh->n_heads / sh->n_kv_heads;
	int64_t big = d > inter ? d : inter, B = rows;
	int64_t seq = sh->n_kv_heads * sh->cap * hd; // one sequence's cache
	float *buf = malloc(sizeof(float) * (B * (d + 2 * nq + 2 * nkv + 2 * big) + rep * s));
	if (!buf) return -1;
	float *xn = buf, *q = xn + B * d, *att = q + B * nq, *k = att + B * nq, *v = k + B * nkv;
	float *g = v + B * nkv, *u = g + B * big, *scores = u + B * big;
	for (int l = 0; l < n; l++) {
		const cpurow_layer *L = &layers[l];
		// h = x + o(attn(norm₁(x)))
		for (int64_t r = 0; r < B; r++) rmsnorm(d, x + r * d, L->in_norm, sh->eps, xn + r * d);
		project(&L->q, B, nq, d, xn, q);
		project(&L->k, B, nkv, d, xn, k);
		project(&L->v, B, nkv, d, xn, v);
		for (int64_t r = 0; r < B; r++) {
			rope(sh->n_heads, hd, q + r * nq, cos + r * hd, sin + r * hd);
			rope(sh->n_kv_heads, hd, k + r * nkv, cos + r * hd, sin + r * hd);
			float *kc = L->kcache + r * seq, *vc = L->vcache + r * seq;
			for (int64_t j = 0; j < sh->n_kv_heads; j++) {
				memcpy(kc + (j * sh->cap + pos) * hd, k + r * nkv + j * hd, hd * sizeof(float));
				memcpy(vc + (j * sh->cap + pos) * hd, v + r * nkv + j * hd, hd * sizeof(float));
			}
			attend(sh, q + r * nq, kc, vc, bias + r * s, s, scores, att + r * nq);
		}
		project(&L->o, B, d, nq, att, g);
		for (int64_t i = 0; i < B * d; i++) x[i] += g[i];
		// out = h + down(silu(gate(norm₂(h))) ⊙ up(norm₂(h)))
		for (int64_t r = 0; r < B; r++) rmsnorm(d, x + r * d, L->post_norm, sh->eps, xn + r * d);
		project(&L->gate, B, inter, d, xn, g);
		project(&L->up, B, inter, d, xn, u);
		for (int64_t i = 0; i < B * inter; i++) g[i] = silu(g[i]) * u[i];
		project(&L->down, B, d, inter, g, u);
		for (int64_t i = 0; i < B * d; i++) x[i] += u[i];
	}
	free(buf);
	return 0;
}
