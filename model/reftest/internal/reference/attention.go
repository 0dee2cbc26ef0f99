package reference

import "math"

// attend is grouped-query scaled dot-product attention for one sequence.
// q[i] packs nH query heads of width hd, k[j] and v[j] pack nKV heads;
// query head h reads key/value head h / (nH/nKV), which is HF's repeat_kv
// (each KV head repeated for a contiguous group of query heads). Query i
// attends the keys j for which allowed(i, j) holds:
//
//	out_h[i] = Σ_j softmax_j(q_h[i]·k_g[j] / √hd) v_g[j]
//
// A query that may attend nothing (a left-padding position before the first
// real token) gets what HF's eager attention gives it: its mask row is
// finfo(float32).min everywhere, which swamps every score, so the softmax is
// uniform over all len(k) keys. (HF's SDPA path instead unmasks such rows;
// either way only padding positions see it, and their outputs are unused.)
func attend(q, k, v [][]float32, nH, nKV, hd int, allowed func(i, j int) bool) [][]float32 {
	group := nH / nKV
	scale := 1 / math.Sqrt(float64(hd))
	out := make([][]float32, len(q))
	for i := range q {
		out[i] = make([]float32, nH*hd)
		for h := range nH {
			g := h / group
			qh := q[i][h*hd : (h+1)*hd]
			var keys []int
			for j := range k {
				if allowed(i, j) {
					keys = append(keys, j)
				}
			}
			var p []float64
			if len(keys) == 0 {
				for j := range k {
					keys = append(keys, j)
					p = append(p, 1/float64(len(k)))
				}
			} else {
				for _, j := range keys {
					kh := k[j][g*hd : (g+1)*hd]
					var s float64
					for c := range hd {
						s += float64(qh[c]) * float64(kh[c])
					}
					p = append(p, s*scale)
				}
				softmax(p)
			}
			for c := range hd {
				var s float64
				for n, j := range keys {
					s += p[n] * float64(v[j][g*hd+c])
				}
				out[i][h*hd+c] = float32(s)
			}
		}
	}
	return out
}
