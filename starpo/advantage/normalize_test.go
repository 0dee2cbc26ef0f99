package advantage

import (
	"math"
	"strings"
	"testing"
)

func TestNormalizeScores(t *testing.T) {
	// Group 0: (1, 2, 3), mean 2, unbiased std 1.
	// Group 1: (5, 5, 5), std 0: no spread.
	// Group 2: (0, 4), mean 2, unbiased std √8.
	scores := []float64{1, 2, 3, 5, 5, 5, 0, 4}
	groups := []int{0, 0, 0, 1, 1, 1, 2, 2}
	e := 1e-6
	r8 := math.Sqrt(8)
	for _, tc := range []struct {
		method RewardNorm
		want   []float64
	}{
		{NormIdentity, []float64{1, 2, 3, 5, 5, 5, 0, 4}},
		{NormMean, []float64{-1, 0, 1, 0, 0, 0, -2, 2}},
		{NormMeanStd, []float64{-1 / (1 + e), 0, 1 / (1 + e), 0, 0, 0, -2 / (r8 + e), 2 / (r8 + e)}},
		{NormAsymClip, []float64{-1 / (1 + e), 0, 1 / (1 + e), 0, 0, 0, -2 / (r8 + e), 2 / (r8 + e)}},
	} {
		got, err := NormalizeScores(scores, groups, tc.method)
		if err != nil {
			t.Fatal(err)
		}
		checkRow(t, string(tc.method), got, tc.want, 1e-15)
	}
	if scores[0] != 1 {
		t.Fatal("NormalizeScores wrote into its input")
	}
}

func TestNormalizeScoresAsymClip(t *testing.T) {
	// 19 zeros and one 1: mean 0.05, unbiased variance
	// (19·0.0025 + 0.9025)/19 = 0.05, so the outlier's z = 0.95/√0.05 ≈ 4.25
	// clips to 3 and the rest are −0.05/√0.05 ≈ −0.224. Negated, the
	// outlier's −4.25 clips to −1.
	up, down := make([]float64, 20), make([]float64, 20)
	up[19], down[19] = 1, -1
	s := math.Sqrt(0.05) + 1e-6
	for _, tc := range []struct {
		x          []float64
		rest, last float64
	}{{up, -0.05 / s, 3}, {down, 0.05 / s, -1}} {
		got, err := NormalizeScores(tc.x, make([]int, 20), NormAsymClip)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]float64, 20)
		for i := range want {
			want[i] = tc.rest
		}
		want[19] = tc.last
		checkRow(t, "asym_clip", got, want, 1e-12)
	}
}

func TestNormalizeScoresSingletons(t *testing.T) {
	// Every group of one (validation): unchanged whatever the method.
	scores := []float64{0.3, -1, 7}
	for _, m := range []RewardNorm{NormMean, NormMeanStd, NormAsymClip} {
		got, err := NormalizeScores(scores, []int{4, 5, 6}, m)
		if err != nil {
			t.Fatal(err)
		}
		checkRow(t, string(m)+" singletons", got, scores, 0)
	}
	// A group of one in a batch that is normalised has no spread: 0.
	got, err := NormalizeScores([]float64{1, 3, 7}, []int{0, 0, 1}, NormMeanStd)
	if err != nil {
		t.Fatal(err)
	}
	checkRow(t, "mixed", got, []float64{-1 / (math.Sqrt2 + 1e-6), 1 / (math.Sqrt2 + 1e-6), 0}, 1e-15)
}

func TestNormalizeScoresGroupsNeedNotBeContiguous(t *testing.T) {
	a, err := NormalizeScores([]float64{1, 5, 2, 5, 3, 5}, []int{0, 1, 0, 1, 0, 1}, NormMeanStd)
	if err != nil {
		t.Fatal(err)
	}
	checkRow(t, "interleaved", a, []float64{-1 / (1 + 1e-6), 0, 0, 0, 1 / (1 + 1e-6), 0}, 1e-15)
}

func TestNormalizeScoresErrors(t *testing.T) {
	if _, err := NormalizeScores([]float64{1, 2}, []int{0, 0}, "zscore"); err == nil || !strings.Contains(err.Error(),
		`"zscore"`) {
		t.Errorf("unknown method: err = %v, want one naming it", err)
	}
	// The method is checked even when normalisation is skipped.
	if _, err := NormalizeScores([]float64{1}, []int{0}, "zscore"); err == nil {
		t.Error("unknown method accepted for a batch of singletons")
	}
	if _, err := NormalizeScores([]float64{1, 2}, []int{0}, NormMean); err == nil || !strings.Contains(err.Error(),
		"1 group ids for 2 scores") {
		t.Errorf("length mismatch: err = %v", err)
	}
}
