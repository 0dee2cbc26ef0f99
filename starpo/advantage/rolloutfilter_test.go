package advantage

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// Hand cases of each strategy on four groups' metrics.
func TestSelectHandCases(t *testing.T) {
	top := func(v float64, mode TopPMode, zero bool) Filter {
		return Filter{Strategy: StrategyTopP, Value: v, Order: Largest, IncludeZero: zero, TopPMode: mode,
			SelectionEps: 0.01, Metric: MetricRewardVariance}
	}
	with := func(f Filter, s Strategy, v float64, o Order) Filter {
		f.Strategy, f.Value, f.Order = s, v, o
		return f
	}
	stds := []float64{0.5, 0, 0.3, 0.2}
	for _, tc := range []struct {
		name   string
		f      Filter
		metric []float64
		keep   []int
	}{
		// Σ = 1, threshold 0.9 − 0.01 = 0.89: 0.5, 0.8 fall short, 1.0 reaches it.
		{"linear 0.9", top(0.9, TopPLinear, true), stds, []int{0, 2, 3}},
		// threshold 0.79: 0.5 + 0.3 = 0.8 reaches it.
		{"linear 0.8", top(0.8, TopPLinear, true), stds, []int{0, 2}},
		// Zero groups excluded first; Σ unchanged, the same walk.
		{"linear 0.8 no zero", top(0.8, TopPLinear, false), stds, []int{0, 2}},
		{"linear 1", top(1, TopPLinear, true), stds, []int{0, 1, 2, 3}},
		{"linear 1 no zero", top(1, TopPLinear, false), stds, []int{0, 2, 3}},
		// All zero: threshold −0.01, reached before any group: none kept.
		{"linear all zero", top(0.9, TopPLinear, true), []float64{0, 0, 0, 0}, nil},
		{"linear all zero excluded", top(0.9, TopPLinear, false), []float64{0, 0, 0, 0}, nil},
		// Σ = 0.2 + 0.1 − 0.4 = −0.1, threshold 0.9·(−0.1) − 0.01 = −0.1:
		// reached at once, none kept.
		{"linear negative", top(0.9, TopPLinear, true), []float64{0.2, 0.1, -0.4, 0}, nil},
		// softmax(1, 0, 2, −1): e^2/(e^2 + e + 1 + e^−1) = 0.6439,
		// + e/(…) = 0.8808 (< 0.9), + 1/(…) = 0.9679.
		{"softmax 0.5", top(0.5, TopPSoftmax, true), []float64{1, 0, 2, -1}, []int{2}},
		{"softmax 0.85", top(0.85, TopPSoftmax, true), []float64{1, 0, 2, -1}, []int{0, 2}},
		{"softmax 0.9", top(0.9, TopPSoftmax, true), []float64{1, 0, 2, -1}, []int{0, 1, 2}},
		// Smallest: softmax(−1, 0, −2, 1): group 3 first (0.6439).
		{"softmax smallest", with(top(0.5, TopPSoftmax, true), StrategyTopP, 0.5, Smallest),
			[]float64{1, 0, 2, -1}, []int{3}},
		// Group 1 (0) excluded: softmax(1, 2, −1) = (0.2595, 0.7054, 0.0351).
		{"softmax no zero", top(0.85, TopPSoftmax, false), []float64{1, 0, 2, -1}, []int{0, 2}},
		// ⌊0.5·4⌋ = 2 largest; ⌊0.1·4⌋ = 0, at least one.
		{"top_k", with(top(1, "", true), StrategyTopK, 0.5, Largest), stds, []int{0, 2}},
		{"top_k one", with(top(1, "", true), StrategyTopK, 0.1, Largest), stds, []int{0}},
		{"top_k smallest", with(top(1, "", true), StrategyTopK, 0.5, Smallest), stds, []int{1, 3}},
		// ⌊1·4⌋ = 4, capped at the 3 non-zero groups.
		{"top_k no zero", with(top(1, "", false), StrategyTopK, 1, Smallest), stds, []int{0, 2, 3}},
		{"top_k no zero smallest", with(top(1, "", false), StrategyTopK, 0.5, Smallest), stds, []int{2, 3}},
		{"top_k_abs", with(top(1, "", true), StrategyTopKAbs, 3, Largest), stds, []int{0, 2, 3}},
		{"top_k_abs past all", with(top(1, "", true), StrategyTopKAbs, 9, Largest), stds, []int{0, 1, 2, 3}},
		// Largest: ≥ 0.5·0.5 = 0.25. Smallest (zero excluded): min 0.2,
		// ≤ 0.2/0.5 = 0.4.
		{"min_p", with(top(1, "", true), StrategyMinP, 0.5, Largest), stds, []int{0, 2}},
		{"min_p smallest", with(top(1, "", false), StrategyMinP, 0.5, Smallest), stds, []int{2, 3}},
		// With zero groups allowed the minimum is 0: only the zeros.
		{"min_p smallest zero", with(top(1, "", true), StrategyMinP, 0.5, Smallest), stds, []int{1}},
		// Ties go to the lower index.
		{"top_k ties", with(top(1, "", true), StrategyTopK, 0.5, Largest), []float64{1, 2, 2, 2}, []int{1, 2}},
	} {
		if got := tc.f.Select(tc.metric); !slices.Equal(got, tc.keep) {
			t.Errorf("%s: Select(%v) = %v, want %v", tc.name, tc.metric, got, tc.keep)
		}
	}
}

// refSelect transcribes RAGEN's _select_top_groups with loops, ranking by
// repeated selection of the best remaining candidate (the first on ties).
func refSelect(f Filter, metric []float64) []int {
	var idx []int
	var sc []float64
	for g := range metric {
		if f.IncludeZero || math.Abs(metric[g]) > 1e-10 {
			idx, sc = append(idx, g), append(sc, metric[g])
		}
	}
	if len(idx) == 0 {
		return nil
	}
	desc := func(key []float64) []int { // positions in sc, largest key first
		used, out := make([]bool, len(key)), []int{}
		for range key {
			b := -1
			for i := range key {
				if !used[i] && (b < 0 || key[i] > key[b]) {
					b = i
				}
			}
			used[b], out = true, append(out, b)
		}
		return out
	}
	neg := make([]float64, len(sc))
	for i := range sc {
		neg[i] = -sc[i]
	}
	signed := sc
	if f.Order == Smallest {
		signed = neg
	}
	var local []int
	switch f.Strategy {
	case StrategyTopP:
		if f.Value >= 1 {
			return idx
		}
		if f.TopPMode == TopPSoftmax {
			mx := math.Inf(-1)
			for _, l := range signed {
				mx = math.Max(mx, l)
			}
			probs, z := make([]float64, len(signed)), 0.0
			for i, l := range signed {
				probs[i] = math.Exp(l - mx)
				z += probs[i]
			}
			for i := range probs {
				probs[i] /= z
			}
			order := desc(probs)
			cum, cut := 0.0, len(order) // searchsorted: the first cum ≥ value
			for i, j := range order {
				cum += probs[j]
				if cum >= f.Value {
					cut = i
					break
				}
			}
			local = order[:min(cut+1, len(order))]
		} else {
			order, total := desc(signed), 0.0
			for _, s := range sc {
				total += s
			}
			threshold := f.Value*total - f.SelectionEps
			cum, count := 0.0, 0
			for _, j := range order {
				if cum >= threshold {
					break
				}
				if sc[j] <= 0 {
					break
				}
				cum += sc[j]
				count++
			}
			if cum < threshold {
				return nil
			}
			local = order[:count]
		}
	case StrategyTopK, StrategyTopKAbs:
		k := int(f.Value * float64(len(metric)))
		if f.Strategy == StrategyTopKAbs {
			k = int(f.Value)
		}
		k = min(k, len(idx))
		k = max(k, 1)
		local = desc(signed)[:k]
	case StrategyMinP:
		for i, s := range sc {
			if f.Order == Largest && s >= slices.Max(sc)*f.Value-1e-10 ||
				f.Order == Smallest && s <= slices.Min(sc)/(f.Value+1e-10)+1e-10 {
				local = append(local, i)
			}
		}
	}
	out := make([]int, len(local))
	for i, j := range local {
		out[i] = idx[j]
	}
	slices.Sort(out)
	return out
}

// refMetric is the group metric by loops: mean, unbiased std (0 for one
// member), or sum, of the ranked quantity.
func refMetric(m GroupMetric, v GroupValues) []float64 {
	x := v.Scores
	if m == MetricEntropy || m == MetricEntropyVariance {
		x = v.Entropy
	} else if m == MetricLength {
		x = v.Length
	}
	n := len(x) / v.GroupSize
	out := make([]float64, n)
	for g := range n {
		sum := 0.0
		for i := g * v.GroupSize; i < (g+1)*v.GroupSize; i++ {
			sum += x[i]
		}
		mean := sum / float64(v.GroupSize)
		switch m {
		case MetricRewardSum:
			out[g] = sum
		case MetricRewardVariance, MetricEntropyVariance:
			if v.GroupSize > 1 {
				ss := 0.0
				for i := g * v.GroupSize; i < (g+1)*v.GroupSize; i++ {
					ss += (x[i] - mean) * (x[i] - mean)
				}
				out[g] = math.Sqrt(ss / float64(v.GroupSize-1))
			}
		default:
			out[g] = mean
		}
	}
	return out
}

// randomValues are groups of random sizes whose scores are often tied or
// constant (zero std), with entropies and lengths.
func randomValues(r *rand.Rand, tagged bool) GroupValues {
	size, groups := 1+r.IntN(5), 1+r.IntN(12)
	n := size * groups
	v := GroupValues{GroupSize: size, Scores: make([]float64, n), Entropy: make([]float64, n),
		Length: make([]float64, n)}
	discrete := r.IntN(2) == 0
	for i := range n {
		if discrete {
			v.Scores[i] = []float64{0, 0.5, 1, -0.1}[r.IntN(4)]
		} else {
			v.Scores[i] = r.NormFloat64()
		}
		v.Entropy[i] = 2 * r.Float64()
		v.Length[i] = float64(r.IntN(30))
	}
	if tagged {
		v.Tags = make([]string, groups)
		for g := range v.Tags {
			v.Tags[g] = []string{"Bandit", "FrozenLake"}[r.IntN(2)]
		}
	}
	return v
}

// Apply keeps exactly the groups the transcription does, for every
// strategy, order, mode, metric and include_zero on random batches, tagged
// or not.
func TestApplyMatchesTranscription(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	metrics := []GroupMetric{MetricRewardVariance, MetricReward, MetricRewardSum, MetricEntropy,
		MetricEntropyVariance, MetricLength}
	checked := 0
	for range 60 {
		v := randomValues(r, r.IntN(3) == 0)
		for _, m := range metrics {
			for _, s := range []Strategy{StrategyTopP, StrategyTopK, StrategyTopKAbs, StrategyMinP} {
				values := []float64{0.1, 0.25, 0.5, 0.75, 0.9, 1}
				if s == StrategyTopKAbs {
					values = []float64{1, 2, 3, 7}
				}
				for _, val := range values {
					for _, o := range []Order{Largest, Smallest} {
						for _, mode := range []TopPMode{TopPLinear, TopPSoftmax} {
							for _, zero := range []bool{true, false} {
								f := Filter{Strategy: s, Value: val, Order: o, IncludeZero: zero, TopPMode: mode,
									SelectionEps: 0.01, Metric: m}
								keep, st, err := f.Apply(v)
								if err != nil {
									t.Fatal(err)
								}
								want := refApply(f, v)
								if !slices.Equal(keep, want) {
									t.Fatalf("%+v on %+v: keep %v, want %v", f, v, keep, want)
								}
								if st.Kept != len(keep) || st.Groups != len(v.Scores)/v.GroupSize {
									t.Fatalf("stats count %d of %d, kept %v", st.Kept, st.Groups, keep)
								}
								checked++
							}
						}
					}
				}
			}
		}
	}
	t.Logf("%d settings × batches checked", checked)
}

// refApply selects each tag's groups on their own with refSelect.
func refApply(f Filter, v GroupValues) []int {
	metric := refMetric(f.Metric, v)
	tags := v.Tags
	if tags == nil {
		tags = make([]string, len(metric))
	}
	var keep []int
	seen := map[string]bool{}
	for _, tag := range tags {
		if seen[tag] {
			continue
		}
		seen[tag] = true
		var members []int
		var sub []float64
		for g := range tags {
			if tags[g] == tag {
				members, sub = append(members, g), append(sub, metric[g])
			}
		}
		for _, i := range refSelect(f, sub) {
			keep = append(keep, members[i])
		}
	}
	slices.Sort(keep)
	return keep
}

// StarPOS(ratio, mode) is the StarPO-S filter: the same groups and the
// same statistics as FilterGroupsByTag, on random batches with ties.
func TestStarPOSIsFilterGroups(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 5))
	for i := range 400 {
		v := randomValues(r, i%3 == 0)
		ratio := []float64{0.1, 0.25, 0.3, 0.5, 0.75, 1}[r.IntN(6)]
		mode := []FilterType{FilterStd, FilterStdRev}[r.IntN(2)]
		old, oldStats, err := FilterGroupsByTag(v.Scores, v.GroupSize, ratio, mode, v.Tags)
		if err != nil {
			t.Fatal(err)
		}
		keep, st, err := StarPOS(ratio, mode).Apply(v)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(keep, old) || st.FilterStats != oldStats {
			t.Fatalf("ratio %v %s on %+v: keep %v stats %+v; FilterGroupsByTag %v %+v",
				ratio, mode, v, keep, st.FilterStats, old, oldStats)
		}
	}
}

func TestApplyStatsAndMetrics(t *testing.T) {
	// Four groups of two: score stds 0, √½, 0, √2; maxes 0, 1, 1, 2; means
	// 0, ½, 1, 1; sums 0, 1, 2, 2. Linear top_p 0.9 without zero groups:
	// Σ = √½ + √2 = 2.1213, threshold 1.9092 − 0.01; √2 = 1.414 falls
	// short, + √½ reaches it: groups 1 and 3.
	v := GroupValues{Scores: filterScores, GroupSize: 2, Length: []float64{4, 6, 1, 1, 2, 2, 9, 9}}
	f := Filter{Strategy: StrategyTopP, Value: 0.9, Order: Largest, TopPMode: TopPLinear, SelectionEps: 0.01,
		Metric: MetricRewardVariance}
	keep, st, err := f.Apply(v)
	if err != nil {
		t.Fatal(err)
	}
	h, s2 := math.Sqrt(0.5), math.Sqrt2
	if !slices.Equal(keep, []int{1, 3}) || st.Kept != 2 || st.Groups != 4 || st.Zero != 2 || st.KeptRatio() != 0.5 {
		t.Fatalf("keep %v, stats %+v", keep, st)
	}
	m := st.Metrics()
	for k, want := range map[string]float64{
		"rollout/in_group_std": (h + s2) / 4, "rollout/chosen_in_group_std": (h + s2) / 2,
		"rollout/in_group_reward_std": (h + s2) / 4, "rollout/chosen_in_group_reward_max": 1.5,
		"rollout/in_group_reward_sum": 1.25, "rollout/chosen_in_group_reward_sum": 1.5,
		"rollout/in_group_reward_mean": 0.625, "rollout/filter_kept_count": 2, "rollout/filter_kept_ratio": 0.5,
		"rollout/filter_zero_count": 2,
	} {
		if got, ok := m[k]; !ok || !near(got, want, 1e-15) {
			t.Errorf("%s = %v (present %v), want %v", k, got, ok, want)
		}
	}
	// Length: group means 5, 1, 2, 9; top_k 0.5 keeps groups 0 and 3. The
	// score statistics keep their names; the lengths have theirs.
	f = Filter{Strategy: StrategyTopK, Value: 0.5, Order: Largest, IncludeZero: true, Metric: MetricLength}
	keep, st, err = f.Apply(v)
	if err != nil {
		t.Fatal(err)
	}
	m = st.Metrics()
	if !slices.Equal(keep, []int{0, 3}) || m["rollout/in_group_length_mean"] != 4.25 ||
		m["rollout/chosen_in_group_length_mean"] != 7 || m["rollout/chosen_in_group_length_max"] != 7.5 ||
		m["rollout/chosen_in_group_mean"] != 0.5 || m["rollout/in_group_std"] != (h+s2)/4 {
		t.Errorf("length: keep %v, metrics %v", keep, m)
	}
	if _, ok := m["rollout/in_group_reward_std"]; ok {
		t.Error("length metric reports reward_* statistics")
	}
	// Nothing kept: the chosen means are 0, as RAGEN's _selected_mean.
	keep, st, err = Filter{Strategy: StrategyTopP, Value: 0.5, Order: Largest, TopPMode: TopPLinear,
		Metric: MetricRewardVariance}.Apply(GroupValues{Scores: []float64{1, 1, 0, 0}, GroupSize: 2})
	if err != nil || keep != nil || st.ChosenInGroupMean != 0 || st.KeptRatio() != 0 {
		t.Errorf("all-zero std: keep %v, stats %+v, %v", keep, st, err)
	}
}

func TestApplyErrors(t *testing.T) {
	ok := Filter{Strategy: StrategyTopK, Value: 0.5, Order: Largest, IncludeZero: true, Metric: MetricRewardVariance}
	ent := ok
	ent.Metric = MetricEntropy
	bad := func(mut func(*Filter)) Filter {
		f := ok
		mut(&f)
		return f
	}
	for _, tc := range []struct {
		f    Filter
		v    GroupValues
		want string
	}{
		{ok, GroupValues{GroupSize: 2}, "no scores"},
		{ok, GroupValues{Scores: []float64{1, 2, 3}, GroupSize: 2}, "do not split"},
		{ok, GroupValues{Scores: []float64{1, 2}, GroupSize: 0}, "not positive"},
		{ok, GroupValues{Scores: []float64{1, 2}, GroupSize: 1, Tags: []string{"a"}}, "1 tags for 2 scores"},
		{ok, GroupValues{Scores: []float64{1, math.NaN()}, GroupSize: 1}, "trajectory 1 has score NaN"},
		{ent, GroupValues{Scores: []float64{1, 2}, GroupSize: 1}, "metric entropy needs one entropy per trajectory"},
		{ent, GroupValues{Scores: []float64{1, 2}, Entropy: []float64{1, math.Inf(1)}, GroupSize: 1}, "entropy +Inf"},
		{bad(func(f *Filter) { f.Strategy = "top_q" }), GroupValues{}, `strategy "top_q"`},
		{bad(func(f *Filter) { f.Order = "big" }), GroupValues{}, `type "big"`},
		{bad(func(f *Filter) { f.Metric = "loss" }), GroupValues{}, `metric "loss"`},
		{bad(func(f *Filter) { f.Strategy = StrategyTopP }), GroupValues{}, `top_p mode ""`},
		{bad(func(f *Filter) { f.Value = 0 }), GroupValues{}, "value 0 must be in (0, 1] for top_k"},
		{bad(func(f *Filter) { f.Value = 1.5 }), GroupValues{}, "value 1.5 must be in (0, 1]"},
		{bad(func(f *Filter) { f.Strategy, f.Value = StrategyTopKAbs, 2.5 }), GroupValues{}, "whole number"},
		{bad(func(f *Filter) { f.SelectionEps = -1 }), GroupValues{}, "selection_eps -1"},
	} {
		_, _, err := tc.f.Apply(tc.v)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v on %+v: %v, want an error containing %q", tc.f, tc.v, err, tc.want)
		}
	}
}

func TestLossScaling(t *testing.T) {
	for _, tc := range []struct {
		l    LossScaling
		want float64
	}{{ScaleNone, 1}, {ScaleLinear, 0.25}, {ScaleSqrt, 0.5}} {
		if got := tc.l.Factor(0.25); got != tc.want {
			t.Errorf("%s.Factor(0.25) = %v, want %v", tc.l, got, tc.want)
		}
	}
	if ScaleSqrt.Check() != nil || LossScaling("log").Check() == nil {
		t.Error("LossScaling.Check")
	}
}
