package parity

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ragen-go/ragen/starpo/advantage"
)

// The advantage math is plain Go float64, so it is compared with verl run
// in float64: the formulas must agree to the last bits, not merely within
// fp32 noise (verl runs them in fp32 in training; the functions are
// dtype-generic). Two tolerances are wider, each for a stated reason:
//
//   - whitenTol: verl's masked_mean divides by n + 1e-8 where WhitenMasked
//     divides by n (documented in whiten.go), which moves the mean and the
//     variance by a relative 1e-8/n: up to 5e-8 in the whitened values at
//     n = 2, far below what fp32 training resolves;
//   - grpoTol: verl gives a group of one the std torch.tensor(1.0), an fp32
//     tensor, so its divisor std + 1e-6 rounds to fp32's 1.00000095 even in
//     an fp64 run; ragen-go divides by 1 + 1e-6 exactly: half an fp32 ulp.
const (
	whitenTol = 1e-7
	grpoTol   = 6e-8
)

type gaeCase struct {
	name                  string
	rewards, values, mask [][]float64
	gamma, lam            float64
	holes                 bool
}

// gaeCases: every shape, RAGEN's γ = λ = 1 (docs/ragen.md#defaults) and a
// discounted (0.99, 0.95), masks without holes (full, right- and left-padded,
// empty rows) and with multi-turn holes. Rewards sit on trained positions
// only, as PlaceScore and PlaceTurnRewards put them; values are random
// everywhere, garbage outside the mask that neither side may read.
func gaeCases() []gaeCase {
	var cs []gaeCase
	i := uint64(0)
	for _, sh := range shapes {
		for _, gl := range [][2]float64{{1, 1}, {0.99, 0.95}} {
			for _, holes := range []bool{false, true} {
				r := newRand(1, i)
				i++
				B, T := sh[0], sh[1]
				layouts := []int{rowFull, rowRightPad, rowLeftPad, rowEmpty}
				if holes {
					layouts = allLayouts
				}
				mask := masks(r, B, T, layouts...)
				rewards := matrix(r, B, T, normal(1))
				for b := range rewards {
					for t := range rewards[b] {
						if mask[b][t] == 0 {
							rewards[b][t] = 0
						}
					}
				}
				cs = append(cs, gaeCase{
					name:    fmt.Sprintf("gae/%dx%d/gamma=%v,lam=%v/holes=%v", B, T, gl[0], gl[1], holes),
					rewards: rewards, values: matrix(r, B, T, normal(1)), mask: mask,
					gamma: gl[0], lam: gl[1], holes: holes && hasHole(mask),
				})
			}
		}
	}
	return cs
}

func gaeRequests() []request {
	var rs []request
	for _, c := range gaeCases() {
		rs = append(rs, request{"name": c.name, "fn": "gae", "dtype": "float64",
			"rewards": c.rewards, "values": c.values, "mask": c.mask, "gamma": c.gamma, "lam": c.lam})
	}
	return rs
}

// TestGAE compares GAE's returns and the whitened advantages with verl's
// compute_gae_advantage_return, which returns both (whitened inside), on
// the trained positions; outside them ragen-go leaves 0 and verl leaves
// values that every masked loss ignores.
//
// A documented difference (starpo/advantage/gae.go): ragen-go follows RAGEN's
// pinned verl (docs/ragen.md#advantages: a backward recursion over every
// position, not only the trained ones, values zeroed outside the mask), where
// verl 0.9.1 skips untrained positions, carrying V and A across them. The two
// agree whenever no row has an untrained position between trained ones, and,
// with holes, at RAGEN's setting γ = λ = 1 ("gamma: 1.0, lam: 1.0",
// docs/ragen.md#defaults), where A_t = Σ_{s≥t} r_s − V_t either way. With
// holes and γλ < 1 the hole's length discounts in ours and not in verl 0.9.1:
// the test checks that they differ there, so the note cannot go stale
// silently.
func TestGAE(t *testing.T) {
	ret := &maxDiff{t: t, what: "GAE returns", tol: tolerance["float64"]}
	adv := &maxDiff{t: t, what: "GAE whitened advantages", tol: whitenTol}
	differing := 0
	for _, c := range gaeCases() {
		var v struct{ Advantages, Returns [][]num }
		verlAnswer(t, c.name, &v)
		a, r := advantage.GAE(c.rewards, c.values, c.mask, c.gamma, c.lam)
		w, err := advantage.WhitenMasked(a, c.mask)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if c.holes && c.gamma*c.lam != 1 {
			d := &maxDiff{t: t, what: c.name, tol: math.Inf(1)}
			d.matrix("returns", r, nums(v.Returns), c.mask)
			if d.max < 1e-6 {
				t.Errorf("%s: returns agree with verl 0.9.1 (deviation %.3g) where the recursions differ: update gae.go's note", c.name, d.max)
			}
			differing++
			continue
		}
		ret.matrix(c.name, r, nums(v.Returns), c.mask)
		adv.matrix(c.name, w, nums(v.Advantages), c.mask)
	}
	if differing == 0 {
		t.Error("no case has holes with γλ < 1")
	}
	ret.report()
	adv.report()
}

type grpoCase struct {
	name          string
	rewards, mask [][]float64
	groups        []int
}

// grpoCases: random rewards anywhere in the row (verl and ragen-go both sum
// the whole row), all mask layouts, and group ids for the normalisation
// tests: non-contiguous groups of two or more, one group of equal scores
// that are exact in binary (std 0 on both sides), and, in the last case of
// each shape, a group of one.
func grpoCases() []grpoCase {
	var cs []grpoCase
	for i, sh := range shapes {
		r := newRand(2, uint64(i))
		B, T := sh[0], sh[1]
		mask := masks(r, B, T, allLayouts...)
		rewards := matrix(r, B, T, func(r *rand.Rand) float64 {
			if r.IntN(4) == 0 {
				return r.NormFloat64()
			}
			return 0
		})
		nGroups := max(1, B/3)
		groups := make([]int, B)
		for b := range groups {
			groups[b] = r.IntN(nGroups)
		}
		groups[0], groups[B-1] = 0, 0 // group 0 has two members
		if B >= 4 {
			// Rows 1 and 2 form a group of equal scores: all their reward on
			// one position, the same exact value.
			groups[1], groups[2] = nGroups, nGroups
			for _, b := range []int{1, 2} {
				clear(rewards[b])
				rewards[b][T-1] = 0.5
			}
		}
		cs = append(cs, grpoCase{name: fmt.Sprintf("grpo/%dx%d", B, T), rewards: rewards, mask: mask, groups: sizeTwoOrMore(groups)})
	}
	return cs
}

// sizeTwoOrMore merges each group of one into group 0, so every group has
// at least two members; the singleton behaviour has its own test.
func sizeTwoOrMore(groups []int) []int {
	n := map[int]int{}
	for _, g := range groups {
		n[g]++
	}
	out := append([]int(nil), groups...)
	for i, g := range out {
		if n[g] == 1 {
			out[i] = 0
		}
	}
	return out
}

func unique(n int) []int {
	ids := make([]int, n)
	for i := range ids {
		ids[i] = i
	}
	return ids
}

func grpoRequests() []request {
	var rs []request
	for _, c := range grpoCases() {
		for _, g := range []struct {
			suffix string
			index  []int
			norm   bool
		}{{"unique", unique(len(c.mask)), true}, {"groups/std", c.groups, true}, {"groups/nostd", c.groups, false}} {
			rs = append(rs, request{"name": c.name + "/" + g.suffix, "fn": "grpo", "dtype": "float64",
				"rewards": c.rewards, "mask": c.mask, "index": g.index, "norm_by_std": g.norm})
		}
	}
	// A group of one among larger groups, both ways.
	for _, norm := range []bool{true, false} {
		rs = append(rs, request{"name": fmt.Sprintf("grpo/singleton/norm=%v", norm), "fn": "grpo", "dtype": "float64",
			"rewards": singleton.rewards, "mask": singleton.mask, "index": singleton.groups, "norm_by_std": norm})
	}
	return rs
}

// TestGRPOOutcome compares GRPOOutcome with verl's
// compute_grpo_outcome_advantage as StarPO calls it: a fresh uid per
// trajectory (docs/ragen.md#training-step), norm_adv_by_std_in_grpo on (verl's
// default, which RAGEN keeps, docs/ragen.md#defaults). Every position is
// compared (both are 0 outside the mask). ragen-go has no
// norm_adv_by_std_in_grpo=False: with singleton groups it would only drop the
// 1/(1 + 1e-6).
func TestGRPOOutcome(t *testing.T) {
	d := &maxDiff{t: t, what: "GRPOOutcome advantages", tol: grpoTol}
	for _, c := range grpoCases() {
		var v struct{ Advantages, Returns [][]num }
		verlAnswer(t, c.name+"/unique", &v)
		a, r := advantage.GRPOOutcome(c.rewards, c.mask)
		d.matrix(c.name, a, nums(v.Advantages), nil)
		d.matrix(c.name+" returns", r, nums(v.Returns), nil)
	}
	d.report()
}

// TestNormalizeScoresAsGRPO compares RAGEN's group normalisation
// (NormalizeScores, docs/ragen.md#rewards: the group statistics StarPO
// computes before verl sees singleton uids) with verl's GRPO over real groups,
// where they are the same formula: mean_std is norm_adv_by_std_in_grpo on, (s
// − mean)/(std + 1e-6) with the unbiased std, and mean is it off. Scores are
// the row sums; the advantage is the normalised score on trained positions.
func TestNormalizeScoresAsGRPO(t *testing.T) {
	for _, m := range []struct {
		method advantage.RewardNorm
		suffix string
	}{{advantage.NormMeanStd, "groups/std"}, {advantage.NormMean, "groups/nostd"}} {
		d := &maxDiff{t: t, what: "NormalizeScores " + string(m.method), tol: tolerance["float64"]}
		for _, c := range grpoCases() {
			if len(c.mask) < 2 {
				continue // a batch of one is a group of one: TestNormalizeScoresSingleton
			}
			var v struct{ Advantages [][]num }
			verlAnswer(t, c.name+"/"+m.suffix, &v)
			got := normalizedAdvantages(t, c.rewards, c.mask, c.groups, m.method)
			d.matrix(c.name, got, nums(v.Advantages), nil)
		}
		d.report()
	}
}

// TestNormalizeScoresSingleton: a documented difference. A group of one
// among larger groups gets 0 from RAGEN's _normalize_score_tensor (std 0 ≤
// 1e-6 zeroes the group for mean_std; x − x̄ = 0 for mean), which
// NormalizeScores follows; verl's GRPO gives a group of one mean 0 and std
// 1, so s/(1 + 1e-6) or s. In StarPO the two never meet: verl only sees
// singleton uids after RAGEN has normalised.
func TestNormalizeScoresSingleton(t *testing.T) {
	for _, m := range []struct {
		method advantage.RewardNorm
		norm   bool
		scale  float64
	}{{advantage.NormMeanStd, true, 1 / (1 + 1e-6)}, {advantage.NormMean, false, 1}} {
		var v struct{ Advantages [][]num }
		verlAnswer(t, fmt.Sprintf("grpo/singleton/norm=%v", m.norm), &v)
		want := nums(v.Advantages)
		got := normalizedAdvantages(t, singleton.rewards, singleton.mask, singleton.groups, m.method)
		d := &maxDiff{t: t, what: "NormalizeScores singleton " + string(m.method), tol: grpoTol}
		last := len(got) - 1 // the singleton row
		d.matrix("others", got[:last], want[:last], nil)
		for j, w := range singleton.mask[last] {
			if w == 0 {
				continue
			}
			d.scalar("singleton verl", want[last][j], rowSum(singleton.rewards[last])*m.scale)
			d.scalar("singleton ours", got[last][j], 0)
		}
		d.report()
	}
}

// singleton is a batch of two groups of two and a group of one (the last
// row), every row fully trained.
var singleton = func() grpoCase {
	r := newRand(2, 100)
	mask := masks(r, 5, 4, rowFull)
	return grpoCase{rewards: matrix(r, 5, 4, normal(1)), mask: mask, groups: []int{0, 1, 0, 1, 2}}
}()

func rowSum(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s
}

// normalizedAdvantages is NormalizeScores of the row sums, broadcast over
// the trained positions.
func normalizedAdvantages(t *testing.T, rewards, mask [][]float64, groups []int, method advantage.RewardNorm) [][]float64 {
	t.Helper()
	scores := make([]float64, len(rewards))
	for b, row := range rewards {
		scores[b] = rowSum(row)
	}
	z, err := advantage.NormalizeScores(scores, groups, method)
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]float64, len(mask))
	for b, m := range mask {
		out[b] = make([]float64, len(m))
		for j, w := range m {
			if w != 0 {
				out[b][j] = z[b]
			}
		}
	}
	return out
}

type whitenCase struct {
	name    string
	x, mask [][]float64
}

// whitenCases: every shape and mask layout, values with an offset and scale
// so the mean and variance matter, garbage outside the mask; and a batch
// with a single trained position, which both sides refuse.
func whitenCases() []whitenCase {
	var cs []whitenCase
	for i, sh := range shapes {
		r := newRand(3, uint64(i))
		B, T := sh[0], sh[1]
		cs = append(cs, whitenCase{name: fmt.Sprintf("whiten/%dx%d", B, T),
			x: matrix(r, B, T, func(r *rand.Rand) float64 { return 3 + 2*r.NormFloat64() }), mask: masks(r, B, T, allLayouts...)})
	}
	one := [][]float64{{0, 1, 0}, {0, 0, 0}}
	cs = append(cs, whitenCase{name: "whiten/one-trained", x: [][]float64{{1, 2, 3}, {4, 5, 6}}, mask: one})
	return cs
}

func whitenRequests() []request {
	var rs []request
	for _, c := range whitenCases() {
		rs = append(rs, request{"name": c.name, "fn": "whiten", "dtype": "float64", "x": c.x, "mask": c.mask})
	}
	return rs
}

// TestWhitenMasked compares WhitenMasked with verl's masked_whiten on the
// trained positions (outside them ragen-go leaves 0, verl whitened garbage,
// documented in whiten.go; every masked loss ignores them). With one trained
// position both refuse: verl raises, ragen-go returns an error.
func TestWhitenMasked(t *testing.T) {
	d := &maxDiff{t: t, what: "WhitenMasked", tol: whitenTol}
	for _, c := range whitenCases() {
		var v struct {
			Whitened [][]num
			Error    string
		}
		verlAnswer(t, c.name, &v)
		got, err := advantage.WhitenMasked(c.x, c.mask)
		if trained(c.mask) < 2 {
			if err == nil || v.Error == "" {
				t.Errorf("%s: ours err %v, verl error %q: want both to refuse", c.name, err, v.Error)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		d.matrix(c.name, got, nums(v.Whitened), c.mask)
	}
	d.report()
}
