package parity

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"

	"github.com/ragen-go/ragen/starpo/loss"
)

// The tensor losses run in fp32 (training) and fp64 on both sides, each at
// its tolerance; gradients come from autograd on both sides.

var aggModes = []loss.AggMode{loss.TokenMean, loss.SeqMeanTokenSum, loss.SeqMeanTokenMean, loss.SeqMeanTokenSumNorm}

// aggScale is ragen-go's aggregate over verl 0.9.1's for a mask, a documented
// difference for the seq-mean modes (loss/agg.go). ragen-go follows RAGEN's
// pinned verl (docs/ragen.md#sources, #policy-loss), whose agg_loss averages
// the per-sequence terms over all B rows (torch.mean) and divides
// seq-mean-token-sum-norm's total by the horizon T only, and whose token-mean
// is masked_mean, Σ/(N + 1e-8). verl 0.9.1 averages over the rows that have a
// trained token, divides sum-norm by that count times T, and divides
// token-mean by N exactly. So with B rows, n of them non-empty, and N trained
// tokens:
//
//	token-mean                      N/(N + 1e-8)
//	seq-mean-token-sum, -token-mean n/B   (1 without empty rows)
//	seq-mean-token-sum-norm         n
//
// RAGEN's default is token-mean (docs/ragen.md#defaults), where the two agree
// to 1e-8/N.
func aggScale(mode loss.AggMode, mask [][]float64) float64 {
	n := float64(nonEmptyRows(mask))
	switch mode {
	case loss.SeqMeanTokenSum, loss.SeqMeanTokenMean:
		return n / float64(len(mask))
	case loss.SeqMeanTokenSumNorm:
		return n
	}
	N := float64(trained(mask))
	return N / (N + 1e-8)
}

// lossMasks: each shape with rows of every layout (empty rows included
// where B > 1), and one without empty rows.
func lossMasks(family uint64) (names []string, ms [][][]float64) {
	for i, sh := range shapes {
		r := newRand(family, uint64(i))
		B, T := sh[0], sh[1]
		names = append(names, fmt.Sprintf("%dx%d/all-layouts", B, T))
		ms = append(ms, masks(r, B, T, allLayouts...))
		names = append(names, fmt.Sprintf("%dx%d/no-empty-row", B, T))
		ms = append(ms, masks(r, B, T, rowFull, rowRightPad, rowLeftPad, rowMultiTurn))
	}
	return names, ms
}

var dt = map[string]gotch.DType{"float32": gotch.Float, "float64": gotch.Double}

// tensor makes a [B, T] tensor of rows in dtype, dropped with the test.
func tensor(t *testing.T, rows [][]float64, dtype string) *ts.Tensor {
	t.Helper()
	var flat []float64
	for _, r := range rows {
		flat = append(flat, r...)
	}
	x, err := ts.OfSlice(flat)
	if err != nil {
		t.Fatal(err)
	}
	x, err = x.View([]int64{int64(len(rows)), int64(len(rows[0]))}, true)
	if err != nil {
		t.Fatal(err)
	}
	x, err = x.Totype(dt[dtype], true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.MustDrop() })
	return x
}

// leaf is tensor with requires_grad.
func leaf(t *testing.T, rows [][]float64, dtype string) *ts.Tensor {
	t.Helper()
	x := tensor(t, rows, dtype)
	if err := x.RequiresGrad_(true); err != nil {
		t.Fatal(err)
	}
	return x
}

// rowsOf reads a tensor back as [B][T] float64 (shape from like).
func rowsOf(t *testing.T, x *ts.Tensor, like [][]float64) [][]float64 {
	t.Helper()
	c, err := x.Totype(gotch.Double, false)
	if err != nil {
		t.Fatal(err)
	}
	defer c.MustDrop()
	flat := make([]float64, c.Numel())
	if err := c.CopyData(flat, uint(len(flat))); err != nil {
		t.Fatal(err)
	}
	out := make([][]float64, len(like))
	for b := range like {
		out[b], flat = flat[:len(like[b])], flat[len(like[b]):]
	}
	return out
}

func scalarOf(t *testing.T, x *ts.Tensor) float64 {
	t.Helper()
	v, err := x.Float64Value([]int64{})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// backward runs l's backward and returns x's gradient as [B][T].
func backward(t *testing.T, l, x *ts.Tensor, like [][]float64) [][]float64 {
	t.Helper()
	if err := l.Backward(); err != nil {
		t.Fatal(err)
	}
	g, err := x.Grad(false)
	if err != nil {
		t.Fatal(err)
	}
	defer g.MustDrop()
	return rowsOf(t, g, like)
}

type aggCase struct {
	name          string
	lossMat, mask [][]float64
	mode          loss.AggMode
}

func aggCases() []aggCase {
	var cs []aggCase
	names, ms := lossMasks(4)
	for i, mask := range ms {
		r := newRand(4, 100+uint64(i))
		lm := matrix(r, len(mask), len(mask[0]), normal(2))
		for _, mode := range aggModes {
			cs = append(cs, aggCase{name: fmt.Sprintf("agg/%s/%s", names[i], mode), lossMat: lm, mask: mask, mode: mode})
		}
	}
	return cs
}

func aggRequests() []request {
	var rs []request
	for _, c := range aggCases() {
		for _, d := range dtypes {
			rs = append(rs, request{"name": c.name + "/" + d, "fn": "agg", "dtype": d, "loss_mat": c.lossMat, "mask": c.mask, "mode": string(c.mode)})
		}
	}
	rs = append(rs, request{"name": "agg/all-masked", "fn": "agg", "dtype": "float32",
		"loss_mat": [][]float64{{1, 2}, {3, 4}}, "mask": [][]float64{{0, 0}, {0, 0}}, "mode": string(loss.TokenMean)})
	return rs
}

// TestAggregate compares loss.Aggregate with verl's agg_loss, value and
// gradient, for every loss_agg_mode, up to aggScale's documented factor.
func TestAggregate(t *testing.T) {
	for _, d := range dtypes {
		for _, mode := range aggModes {
			md := &maxDiff{t: t, what: fmt.Sprintf("Aggregate %s %s", mode, d), tol: tolerance[d]}
			for _, c := range aggCases() {
				if c.mode != mode {
					continue
				}
				var v struct {
					Loss num
					Grad [][]num
				}
				verlAnswer(t, c.name+"/"+d, &v)
				x := leaf(t, c.lossMat, d)
				l, err := loss.Aggregate(x, tensor(t, c.mask, d), c.mode)
				if err != nil {
					t.Fatal(err)
				}
				k := aggScale(c.mode, c.mask)
				md.scalar(c.name+" loss", scalarOf(t, l), float64(v.Loss)*k)
				md.matrix(c.name+" grad", backward(t, l, x, c.lossMat), scaled(nums(v.Grad), k), nil)
				l.MustDrop()
			}
			md.report()
		}
	}
}

// TestAggregateAllMasked: with no trained token at all, verl 0.9.1's
// token-mean is 0/0 = NaN; ragen-go's is 0, as RAGEN's pinned verl, whose
// token-mean is masked_mean, Σ/(n + 1e-8).
func TestAggregateAllMasked(t *testing.T) {
	var v struct{ Loss num }
	verlAnswer(t, "agg/all-masked", &v)
	l, err := loss.Aggregate(tensor(t, [][]float64{{1, 2}, {3, 4}}, "float32"), tensor(t, [][]float64{{0, 0}, {0, 0}}, "float32"), loss.TokenMean)
	if err != nil {
		t.Fatal(err)
	}
	defer l.MustDrop()
	if got := scalarOf(t, l); got != 0 || !math.IsNaN(float64(v.Loss)) {
		t.Errorf("all-masked token-mean: ours %v (want 0), verl %v (want NaN)", got, v.Loss)
	}
}

type policyCase struct {
	name                     string
	logp, old, adv, mask     [][]float64
	clipLow, clipHigh, clipC float64
	mode                     loss.AggMode
}

// policyCases: RAGEN's bounds (clip_ratio_low 0.2, clip_ratio_high 0.28,
// clip_ratio_c 3, docs/ragen.md#defaults) and symmetric (0.1, 0.1, 2);
// log-ratios of spread 0.4 so every branch is taken (clipped above and below,
// dual clip on negative advantages), a few beyond ±20 to hit verl's clamp,
// every mode.
func policyCases() []policyCase {
	var cs []policyCase
	names, ms := lossMasks(5)
	for i, mask := range ms {
		r := newRand(5, 100+uint64(i))
		B, T := len(mask), len(mask[0])
		logp := matrix(r, B, T, func(r *rand.Rand) float64 { return -3 * r.Float64() })
		old := matrix(r, B, T, func(r *rand.Rand) float64 { return 0 })
		for b := range logp {
			for j := range logp[b] {
				lr := 0.4 * r.NormFloat64()
				if r.IntN(50) == 0 {
					lr = 25 * float64(1-2*r.IntN(2))
				}
				old[b][j] = f32(logp[b][j] - lr)
			}
		}
		adv := matrix(r, B, T, normal(1))
		for _, clip := range [][3]float64{{0.2, 0.28, 3}, {0.1, 0.1, 2}} {
			for _, mode := range aggModes {
				cs = append(cs, policyCase{name: fmt.Sprintf("policy/%s/clip=%v/%s", names[i], clip, mode),
					logp: logp, old: old, adv: adv, mask: mask, clipLow: clip[0], clipHigh: clip[1], clipC: clip[2], mode: mode})
			}
		}
	}
	return cs
}

func policyRequests() []request {
	var rs []request
	for _, c := range policyCases() {
		for _, d := range dtypes {
			rs = append(rs, request{"name": c.name + "/" + d, "fn": "policy", "dtype": d,
				"log_prob": c.logp, "old_log_prob": c.old, "advantages": c.adv, "mask": c.mask,
				"clip_low": c.clipLow, "clip_high": c.clipHigh, "clip_c": c.clipC, "mode": string(c.mode)})
		}
	}
	return rs
}

// TestPolicyLoss compares loss.PolicyLoss with verl's
// compute_policy_loss_vanilla (an ActorConfig with the case's clip ratios):
// the loss and its gradient with respect to the log-probabilities (up to
// aggScale), and the metrics pg_clipfrac, ppo_kl and pg_clipfrac_lower,
// which are token means on both sides.
func TestPolicyLoss(t *testing.T) {
	clipped, dual := 0, 0 // cases where verl saw each clip branch bind
	for _, d := range dtypes {
		ld := &maxDiff{t: t, what: "PolicyLoss loss+grad " + d, tol: tolerance[d]}
		md := &maxDiff{t: t, what: "PolicyLoss metrics " + d, tol: tolerance[d]}
		for _, c := range policyCases() {
			var v struct {
				Loss, Clipfrac num
				PPOKL          num `json:"ppo_kl"`
				ClipfracLower  num `json:"clipfrac_lower"`
				Grad           [][]num
			}
			verlAnswer(t, c.name+"/"+d, &v)
			x := leaf(t, c.logp, d)
			l, pm, err := loss.PolicyLoss(x, tensor(t, c.old, d), tensor(t, c.adv, d), tensor(t, c.mask, d), loss.PolicyOptions{ClipLow: c.clipLow, ClipHigh: c.clipHigh, ClipC: c.clipC, Agg: c.mode})
			if err != nil {
				t.Fatal(err)
			}
			k := aggScale(c.mode, c.mask)
			ld.scalar(c.name+" loss", pm.PGLoss, float64(v.Loss)*k)
			ld.matrix(c.name+" grad", backward(t, l, x, c.logp), scaled(nums(v.Grad), k), nil)
			md.scalar(c.name+" pg_clipfrac", pm.PGClipFrac, float64(v.Clipfrac))
			md.scalar(c.name+" ppo_kl", pm.PPOKL, float64(v.PPOKL))
			md.scalar(c.name+" pg_clipfrac_lower", pm.PGClipFracLower, float64(v.ClipfracLower))
			l.MustDrop()
			if v.Clipfrac > 0 {
				clipped++
			}
			if v.ClipfracLower > 0 {
				dual++
			}
		}
		ld.report()
		md.report()
	}
	if clipped == 0 || dual == 0 {
		t.Errorf("the inputs never clip (%d cases) or never dual-clip (%d cases): widen the log-ratios", clipped, dual)
	}
}

type valueCase struct {
	name                       string
	vpreds, old, returns, mask [][]float64
	clip                       float64
	mode                       loss.AggMode
}

// valueCases: predictions within ±1 of the rollout's values, so both clip
// sides are taken at RAGEN's cliprange_value 0.5 (docs/ragen.md#defaults) and
// at 0.2.
func valueCases() []valueCase {
	var cs []valueCase
	names, ms := lossMasks(6)
	for i, mask := range ms {
		r := newRand(6, 100+uint64(i))
		B, T := len(mask), len(mask[0])
		old := matrix(r, B, T, normal(1))
		vp := matrix(r, B, T, func(r *rand.Rand) float64 { return 0 })
		for b := range vp {
			for j := range vp[b] {
				vp[b][j] = f32(old[b][j] + 2*r.Float64() - 1)
			}
		}
		ret := matrix(r, B, T, normal(1))
		for _, clip := range []float64{0.5, 0.2} {
			for _, mode := range aggModes {
				cs = append(cs, valueCase{name: fmt.Sprintf("value/%s/clip=%v/%s", names[i], clip, mode),
					vpreds: vp, old: old, returns: ret, mask: mask, clip: clip, mode: mode})
			}
		}
	}
	return cs
}

func valueRequests() []request {
	var rs []request
	for _, c := range valueCases() {
		for _, d := range dtypes {
			rs = append(rs, request{"name": c.name + "/" + d, "fn": "value", "dtype": d,
				"vpreds": c.vpreds, "values": c.old, "returns": c.returns, "mask": c.mask, "clip": c.clip, "mode": string(c.mode)})
		}
	}
	return rs
}

// TestValueLoss compares loss.ValueLoss with verl's compute_value_loss: the
// loss (½ included) and its gradient with respect to the predictions (up to
// aggScale), and vf_clipfrac.
func TestValueLoss(t *testing.T) {
	clipped := 0
	for _, d := range dtypes {
		ld := &maxDiff{t: t, what: "ValueLoss loss+grad " + d, tol: tolerance[d]}
		md := &maxDiff{t: t, what: "ValueLoss vf_clipfrac " + d, tol: tolerance[d]}
		for _, c := range valueCases() {
			var v struct {
				Loss, Clipfrac num
				Grad           [][]num
			}
			verlAnswer(t, c.name+"/"+d, &v)
			x := leaf(t, c.vpreds, d)
			l, vm, err := loss.ValueLoss(x, tensor(t, c.old, d), tensor(t, c.returns, d), tensor(t, c.mask, d), loss.ValueOptions{Clip: c.clip, Agg: c.mode})
			if err != nil {
				t.Fatal(err)
			}
			k := aggScale(c.mode, c.mask)
			ld.scalar(c.name+" loss", vm.VFLoss, float64(v.Loss)*k)
			ld.matrix(c.name+" grad", backward(t, l, x, c.vpreds), scaled(nums(v.Grad), k), nil)
			md.scalar(c.name+" vf_clipfrac", vm.VFClipFrac, float64(v.Clipfrac))
			l.MustDrop()
			if v.Clipfrac > 0 {
				clipped++
			}
		}
		ld.report()
		md.report()
	}
	if clipped == 0 {
		t.Error("the inputs never clip the value")
	}
}

// klKinds are every kl_penalty name ragen-go accepts.
var klKinds = []loss.KLType{loss.KLK1, "k1", loss.KLAbs, loss.KLMSE, "k2", loss.KLLowVar, "k3"}

type klCase struct {
	name            string
	logp, ref, mask [][]float64
	kind            loss.KLType
	mode            loss.AggMode
}

// klCases: log-prob differences of spread 1, and a few of ±30 that hit
// low_var_kl's clamps (exponent ±20, value ±10).
func klCases() []klCase {
	var cs []klCase
	names, ms := lossMasks(7)
	for i, mask := range ms {
		r := newRand(7, 100+uint64(i))
		B, T := len(mask), len(mask[0])
		logp := matrix(r, B, T, func(r *rand.Rand) float64 { return -3 * r.Float64() })
		ref := matrix(r, B, T, func(r *rand.Rand) float64 { return 0 })
		for b := range ref {
			for j := range ref[b] {
				d := r.NormFloat64()
				if r.IntN(30) == 0 {
					d = 30 * float64(1-2*r.IntN(2))
				}
				ref[b][j] = f32(logp[b][j] + d)
			}
		}
		for _, kind := range klKinds {
			for _, mode := range []loss.AggMode{loss.TokenMean, loss.SeqMeanTokenMean} {
				cs = append(cs, klCase{name: fmt.Sprintf("kl/%s/%s/%s", names[i], kind, mode), logp: logp, ref: ref, mask: mask, kind: kind, mode: mode})
			}
		}
	}
	return cs
}

func klRequests() []request {
	var rs []request
	for _, c := range klCases() {
		for _, d := range dtypes {
			rs = append(rs, request{"name": c.name + "/" + d, "fn": "kl", "dtype": d,
				"log_prob": c.logp, "ref_log_prob": c.ref, "mask": c.mask, "kind": c.kind, "mode": string(c.mode)})
		}
	}
	for _, kind := range []string{"full", "k3+"} {
		rs = append(rs, request{"name": "kl/unsupported/" + kind, "fn": "kl", "dtype": "float32",
			"log_prob": [][]float64{{-1, -2}}, "ref_log_prob": [][]float64{{-1.5, -1}}, "mask": [][]float64{{1, 1}}, "kind": kind, "mode": "token-mean"})
	}
	return rs
}

// TestKL compares loss.KL (per token, every position) and loss.KLLoss
// (value and gradient with respect to logp, up to aggScale) with verl's
// kl_penalty, aggregated by agg_loss, for every estimator name.
func TestKL(t *testing.T) {
	clamped := false // low_var_kl at its ±10 bound somewhere
	for _, d := range dtypes {
		for _, kind := range klKinds {
			md := &maxDiff{t: t, what: fmt.Sprintf("KL %s %s", kind, d), tol: tolerance[d]}
			for _, c := range klCases() {
				if c.kind != kind {
					continue
				}
				var v struct {
					KL   [][]num `json:"kl"`
					Loss num
					Grad [][]num
				}
				verlAnswer(t, c.name+"/"+d, &v)
				per, err := loss.KL(tensor(t, c.logp, d), tensor(t, c.ref, d), c.kind)
				if err != nil {
					t.Fatal(err)
				}
				md.matrix(c.name+" per-token", rowsOf(t, per, c.logp), nums(v.KL), nil)
				for _, row := range v.KL {
					for _, x := range row {
						clamped = clamped || (c.kind == loss.KLLowVar && math.Abs(float64(x)) == 10)
					}
				}
				per.MustDrop()
				x := leaf(t, c.logp, d)
				l, val, err := loss.KLLoss(x, tensor(t, c.ref, d), tensor(t, c.mask, d), loss.KLOptions{Type: c.kind, Agg: c.mode})
				if err != nil {
					t.Fatal(err)
				}
				k := aggScale(c.mode, c.mask)
				md.scalar(c.name+" loss", val, float64(v.Loss)*k)
				md.matrix(c.name+" grad", backward(t, l, x, c.logp), scaled(nums(v.Grad), k), nil)
				l.MustDrop()
			}
			md.report()
		}
	}
	if !clamped {
		t.Error("no input reaches low_var_kl's clamp")
	}
}

// TestKLUnsupported: "full" is NotImplementedError in verl and an error in
// ragen-go. "k3+" is a documented difference: verl 0.9.1 added
// straight-through variants (a "+" suffix: the value of k1/k3, the gradient of
// k2); RAGEN's pinned verl has none and docs/ragen.md#policy-loss lists kl,
// abs, mse and low_var_kl, so ragen-go rejects the name rather than guess.
func TestKLUnsupported(t *testing.T) {
	var full, plus struct {
		NotImplemented bool    `json:"not_implemented"`
		KL             [][]num `json:"kl"`
	}
	verlAnswer(t, "kl/unsupported/full", &full)
	verlAnswer(t, "kl/unsupported/k3+", &plus)
	if !full.NotImplemented {
		t.Error(`verl implements kl_penalty "full" now: compare it`)
	}
	if plus.NotImplemented || plus.KL == nil {
		t.Error(`verl no longer implements kl_penalty "k3+": update the note`)
	}
	for _, kind := range []loss.KLType{"full", "k3+"} {
		if _, err := loss.KL(tensor(t, [][]float64{{-1}}, "float32"), tensor(t, [][]float64{{-1}}, "float32"), kind); err == nil {
			t.Errorf("loss.KL accepts %q", kind)
		}
	}
}
