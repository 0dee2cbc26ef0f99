package advantage

// grpoEps is verl's epsilon in (s − mean)/(std + ε).
const grpoEps = 1e-6

// GRPOOutcome is verl's compute_grpo_outcome_advantage as StarPO calls it
// (docs/ragen.md#advantages): every trajectory carries a fresh uid, so each is
// its own group, which verl gives mean 0 and std 1. The advantage is the
// trajectory's score broadcast over its trained positions:
//
//	s_b = Σ_t r_bt,   A_bt = s_b / (1 + 1e-6) · [mask_bt ≠ 0],   returns = A
//
// The score sums every position of the row, as verl does; with PlaceScore it
// is the already group-normalised score (docs/ragen.md#rewards). The
// 1/(1+1e-6) is verl's (s − 0)/(1 + ε) with norm_adv_by_std_in_grpo on (verl's
// default, which RAGEN keeps; off would only drop the 1/(1 + 1e-6) here). No
// whitening. verl computes 1 + ε in fp32, 1.00000095; this divides by
// 1.000001, half an fp32 ulp away (parity/ checks it). rewards and mask are
// [B][T]; shapes that differ panic.
func GRPOOutcome(rewards, mask [][]float64) (adv, returns [][]float64) {
	checkShape("advantage.GRPOOutcome", "rewards", rewards, mask)
	adv = make([][]float64, len(mask))
	returns = make([][]float64, len(mask))
	for b, m := range mask {
		s := 0.0
		for _, r := range rewards[b] {
			s += r
		}
		a := s / (1 + grpoEps)
		adv[b] = make([]float64, len(m))
		for t, w := range m {
			if w != 0 {
				adv[b][t] = a
			}
		}
		returns[b] = append([]float64(nil), adv[b]...)
	}
	return adv, returns
}
