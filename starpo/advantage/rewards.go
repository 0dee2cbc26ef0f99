package advantage

import "fmt"

// Rewards on tokens (docs/ragen.md#rewards). A row is in response coordinates:
// position j has input token j and target token j+1, and mask is the
// shifted loss mask. A trajectory ends "… <|im_end|> \n": the last
// position, the last 1 of the mask, is the one whose input is the final
// <|im_end|> (its target, the trailing "\n", is the last token). A turn's
// end is likewise the position whose input is that turn's <|im_end|>: its
// index in the full token sequence, which is its index here too.

// finalPosition is where a trajectory's reward goes: the last trained
// position, or the last column when the mask has none. With a sequence that
// ends with an assistant turn, as RAGEN builds them
// (docs/ragen.md#training-sequence), this is RAGEN's column −1.
func finalPosition(mask []float64) int {
	for j := len(mask) - 1; j >= 0; j-- {
		if mask[j] != 0 {
			return j
		}
	}
	return len(mask) - 1
}

// PlaceScore puts a trajectory's score on its final position, the last
// trained one (input: the last <|im_end|>), zero elsewhere: RAGEN's default
// placement (use_turn_scores off), where score is the summed turn rewards
// plus penalty after NormalizeScores. An empty mask gives an empty row.
func PlaceScore(mask []float64, score float64) []float64 {
	r := make([]float64, len(mask))
	if len(mask) > 0 {
		r[finalPosition(mask)] = score
	}
	return r
}

// PlaceTurnRewards puts turn k's reward on turnEnds[k], the position whose
// input is that assistant turn's closing <|im_end|> (use_turn_scores on;
// no penalty or normalisation in this mode, as in RAGEN). A turn that is
// absent (turnEnds[k] < 0, or beyond the row, e.g. cut off) falls back to
// the final position, as PlaceScore. Rewards sharing a position add up
// (RAGEN assigns, so the last one wins; they meet only through the
// fall-back). A length mismatch, or a turn end at an untrained position (a
// coordinate bug: <|im_end|> is inside its assistant segment), is an error.
func PlaceTurnRewards(mask []float64, turnEnds []int, turnRewards []float64) ([]float64, error) {
	if len(turnEnds) != len(turnRewards) {
		return nil, fmt.Errorf("placing turn rewards: %d turn ends for %d rewards", len(turnEnds), len(turnRewards))
	}
	r := make([]float64, len(mask))
	if len(mask) == 0 {
		if len(turnEnds) > 0 {
			return nil, fmt.Errorf("placing turn rewards: %d turns in an empty row", len(turnEnds))
		}
		return r, nil
	}
	for k, j := range turnEnds {
		if j < 0 || j >= len(mask) {
			j = finalPosition(mask)
		} else if mask[j] == 0 {
			return nil, fmt.Errorf("placing turn rewards: turn %d ends at position %d, which the mask does not train",
				k, j)
		}
		r[j] += turnRewards[k]
	}
	return r, nil
}
