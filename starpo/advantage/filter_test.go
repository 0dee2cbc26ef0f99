package advantage

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// Four groups of two: stds 0, √½, 0, √2; maxes 0, 1, 1, 2; means 0, ½, 1, 1.
var filterScores = []float64{0, 0, 0, 1, 1, 1, 0, 2}

func TestFilterGroups(t *testing.T) {
	h, s2 := math.Sqrt(0.5), math.Sqrt2
	for _, tc := range []struct {
		ratio float64
		mode  FilterType
		keep  []int
	}{
		{1, FilterStd, []int{0, 1, 2, 3}},
		{0.5, FilterStd, []int{1, 3}},
		{0.25, FilterStd, []int{3}},
		{0.5, FilterStdRev, []int{0, 2}},
		{0.25, FilterStdRev, []int{0}}, // ties with group 2: lower index
		{0.75, FilterStdRev, []int{0, 1, 2}},
		{0.1, FilterStd, []int{3}}, // ⌊0.4⌋ = 0, at least one kept
	} {
		keep, _, err := FilterGroups(filterScores, 2, tc.ratio, tc.mode)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(keep, tc.keep) {
			t.Errorf("ratio %v %s: keep = %v, want %v", tc.ratio, tc.mode, keep, tc.keep)
		}
	}

	_, st, err := FilterGroups(filterScores, 2, 0.5, FilterStd)
	if err != nil {
		t.Fatal(err)
	}
	want := FilterStats{
		InGroupStd: (h + s2) / 4, InGroupMax: 1, InGroupMean: 0.625,
		ChosenInGroupStd: (h + s2) / 2, ChosenInGroupMax: 1.5, ChosenInGroupMean: 0.75,
	}
	checkRow(t, "stats", statsRow(st), statsRow(want), 1e-15)

	_, all, _ := FilterGroups(filterScores, 2, 1, FilterStd)
	if all.ChosenInGroupStd != all.InGroupStd || all.ChosenInGroupMax != all.InGroupMax ||
		all.ChosenInGroupMean != all.InGroupMean {
		t.Errorf("ratio 1: chosen stats %+v differ from all", all)
	}
	m := st.Metrics()
	if len(m) != 6 || m["rollout/in_group_std"] != st.InGroupStd ||
		m["rollout/chosen_in_group_mean"] != st.ChosenInGroupMean {
		t.Errorf("Metrics() = %v", m)
	}
}

func statsRow(s FilterStats) []float64 {
	return []float64{s.InGroupStd, s.InGroupMax, s.InGroupMean, s.ChosenInGroupStd, s.ChosenInGroupMax,
		s.ChosenInGroupMean}
}

func TestFilterGroupsTiesKeepIndexOrder(t *testing.T) {
	// Groups 0, 1, 2 share std √½, group 3 has none; keep 2 of 4.
	scores := []float64{0, 1, 1, 0, 0, 1, 5, 5}
	keep, _, err := FilterGroups(scores, 2, 0.5, FilterStd)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(keep, []int{0, 1}) {
		t.Errorf("keep = %v, want [0 1]", keep)
	}
	// Many ties, past the sizes a sort handles by insertion: 40 groups of
	// equal spread, every other one with more; keep 10 of them, then 30.
	scores = make([]float64, 80)
	for g := range 40 {
		scores[2*g+1] = 1 + float64(g%2)
	}
	for _, tc := range []struct {
		ratio float64
		mode  FilterType
		first int
	}{{0.25, FilterStd, 1}, {0.25, FilterStdRev, 0}} {
		keep, _, err = FilterGroups(scores, 2, tc.ratio, tc.mode)
		if err != nil {
			t.Fatal(err)
		}
		var want []int
		for g := tc.first; len(want) < 10; g += 2 {
			want = append(want, g)
		}
		if !slices.Equal(keep, want) {
			t.Errorf("%s: keep = %v, want %v", tc.mode, keep, want)
		}
	}
	keep, _, _ = FilterGroups(scores, 2, 0.75, FilterStd)
	want := []int{}
	for g := range 40 {
		if g%2 == 1 || g < 20 {
			want = append(want, g)
		}
	}
	if !slices.Equal(keep, want) {
		t.Errorf("0.75: keep = %v, want %v", keep, want)
	}
}

func TestFilterGroupsCount(t *testing.T) {
	// StarPO-S default: 8 groups of 16 at 0.25 keep 2 groups, 32 rows.
	// ⌊0.29·100⌋ is 28 in floating point, as in Python's int().
	for _, tc := range []struct {
		groups, size int
		ratio        float64
		want         int
	}{{8, 16, 0.25, 2}, {100, 2, 0.29, 28}, {3, 1, 0.5, 1}} {
		scores := make([]float64, tc.groups*tc.size)
		for i := range scores {
			scores[i] = float64(i * i % 7)
		}
		keep, _, err := FilterGroups(scores, tc.size, tc.ratio, FilterStd)
		if err != nil {
			t.Fatal(err)
		}
		if len(keep) != tc.want || !slices.IsSorted(keep) {
			t.Errorf("%d×%d at %v: keep = %v, want %d ascending", tc.groups, tc.size, tc.ratio, keep, tc.want)
		}
	}
	if rows := Rows([]int{1, 3}, 2); !slices.Equal(rows, []int{2, 3, 6, 7}) {
		t.Errorf("Rows = %v, want [2 3 6 7]", rows)
	}
}

func TestFilterGroupsErrors(t *testing.T) {
	for _, tc := range []struct {
		scores []float64
		size   int
		ratio  float64
		mode   FilterType
		want   string
	}{
		{nil, 2, 1, FilterStd, "no scores"},
		{filterScores, 0, 1, FilterStd, "group size 0"},
		{filterScores, 3, 1, FilterStd, "8 scores do not split into groups of 3"},
		{filterScores, 2, 0, FilterStd, "ratio 0"},
		{filterScores, 2, 1.5, FilterStd, "ratio 1.5"},
		{filterScores, 2, math.NaN(), FilterStd, "ratio NaN"},
		{filterScores, 2, 1, "max_mean", `"max_mean"`},
		{[]float64{0, math.NaN()}, 2, 1, FilterStd, "score 1 is NaN"},
	} {
		_, _, err := FilterGroups(tc.scores, tc.size, tc.ratio, tc.mode)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v/%d/%v/%s: err = %v, want one mentioning %q", tc.scores, tc.size, tc.ratio, tc.mode, err,
				tc.want)
		}
	}
}

// Ranked together, the environment whose rewards are larger takes every
// place; ranked per tag, each environment keeps its own most-disagreeing
// groups.
func TestFilterGroupsByTag(t *testing.T) {
	scores := []float64{
		0, 10, // sokoban, std 7.07
		0, 5, // sokoban, std 3.54
		0, 1, // lake, std 0.71
		1, 1, // lake, std 0
	}
	tags := []string{"sokoban", "sokoban", "lake", "lake"}
	together, _, err := FilterGroups(scores, 2, 0.5, FilterStd)
	if err != nil || !slices.Equal(together, []int{0, 1}) {
		t.Fatalf("batch-wide: %v %v, want [0 1]", together, err)
	}
	keep, st, err := FilterGroupsByTag(scores, 2, 0.5, FilterStd, tags)
	if err != nil || !slices.Equal(keep, []int{0, 2}) {
		t.Fatalf("per tag: %v %v, want [0 2]", keep, err)
	}
	wantAll := (math.Sqrt(50) + math.Sqrt(12.5) + math.Sqrt(0.5) + 0) / 4
	wantChosen := (math.Sqrt(50) + math.Sqrt(0.5)) / 2
	if math.Abs(st.InGroupStd-wantAll) > 1e-12 || math.Abs(st.ChosenInGroupStd-wantChosen) > 1e-12 ||
		st.ChosenInGroupMax != 5.5 {
		t.Fatalf("stats %+v, want std %v chosen %v chosen max 5.5", st, wantAll, wantChosen)
	}
	// One tag: the same as the batch-wide filter.
	one := []string{"x", "x", "x", "x"}
	if k, _, _ := FilterGroupsByTag(scores, 2, 0.5, FilterStd, one); !slices.Equal(k, together) {
		t.Fatalf("one tag: %v, want %v", k, together)
	}
	if _, _, err := FilterGroupsByTag(scores, 2, 0.5, FilterStd, tags[:3]); err == nil {
		t.Fatal("3 tags for 4 groups: no error")
	}
}
