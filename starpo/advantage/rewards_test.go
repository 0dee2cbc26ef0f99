package advantage

import (
	"strings"
	"testing"
)

// Token ids of a toy chat: S = <|im_start|>, E = <|im_end|>, N = "\n".
const (
	tS = 100
	tE = 101
	tN = 10
)

// shiftedMask builds RAGEN's loss mask (docs/ragen.md#training-sequence) from
// token ids: turn indicator = running count of S, trained where it is odd and
// > 1 (assistant turns), then the last column dropped. It also returns the
// index of each assistant turn's E.
func shiftedMask(ids []int) (mask []float64, turnEnds []int) {
	turn := 0
	full := make([]float64, len(ids))
	for j, id := range ids {
		if id == tS {
			turn++
		}
		if turn%2 == 1 && turn > 1 {
			full[j] = 1
			if id == tE {
				turnEnds = append(turnEnds, j)
			}
		}
	}
	return full[:len(ids)-1], turnEnds
}

// twoTurns is system, user, assistant (a b), user, assistant (c), left
// padded by two 0s.
var twoTurns = []int{0, 0, tS, 1, tE, tN, tS, 2, tE, tN, tS, 3, 4, tE, tN, tS, 5, tE, tN, tS, 6, tE, tN}

func TestPlaceScoreOnLastImEnd(t *testing.T) {
	mask, ends := shiftedMask(twoTurns)
	r := PlaceScore(mask, 0.7)
	last := len(mask) - 1
	if twoTurns[last] != tE || mask[last] != 1 || ends[len(ends)-1] != last {
		t.Fatalf("test chat: last position %d has input %d, mask %v", last, twoTurns[last], mask[last])
	}
	for j, v := range r {
		if want := map[bool]float64{true: 0.7}[j == last]; v != want {
			t.Errorf("reward[%d] = %v, want %v", j, v, want)
		}
	}
	// Trailing untrained columns: the last trained position; none: the
	// last column; an empty row stays empty.
	checkRow(t, "trailing", PlaceScore([]float64{1, 1, 0}, 2), []float64{0, 2, 0}, 0)
	checkRow(t, "untrained", PlaceScore([]float64{0, 0}, 2), []float64{0, 2}, 0)
	if r := PlaceScore(nil, 1); len(r) != 0 {
		t.Errorf("empty row: %v", r)
	}
}

func TestPlaceTurnRewards(t *testing.T) {
	mask, ends := shiftedMask(twoTurns)
	if len(ends) != 2 || ends[0] != 13 || ends[1] != 21 {
		t.Fatalf("turn ends = %v, want [13 21]", ends)
	}
	// Each reward on the position whose input is its turn's <|im_end|>
	// (target "\n"), not on the segment's last 1 (input "\n", target the
	// next <|im_start|>) for the first turn.
	r, err := PlaceTurnRewards(mask, ends, []float64{0.1, 1})
	if err != nil {
		t.Fatal(err)
	}
	want := make([]float64, len(mask))
	want[13], want[21] = 0.1, 1
	checkRow(t, "turn rewards", r, want, 0)

	// Absent turns (−1, or past the row) fall back to the final position,
	// and add up there.
	r, err = PlaceTurnRewards(mask, []int{13, -1, 40}, []float64{0.1, 0.5, 0.25})
	if err != nil {
		t.Fatal(err)
	}
	want[21] = 0.75
	checkRow(t, "fall-back", r, want, 0)
}

func TestPlaceTurnRewardsErrors(t *testing.T) {
	mask, _ := shiftedMask(twoTurns)
	for _, tc := range []struct {
		ends    []int
		rewards []float64
		want    string
	}{
		{[]int{13}, []float64{1, 2}, "1 turn ends for 2 rewards"},
		{[]int{8}, []float64{1}, "turn 0 ends at position 8, which the mask does not train"},
	} {
		_, err := PlaceTurnRewards(mask, tc.ends, tc.rewards)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want %q", tc.ends, err, tc.want)
		}
	}
	if _, err := PlaceTurnRewards(nil, []int{-1}, []float64{1}); err == nil {
		t.Error("turns in an empty row accepted")
	}
}
