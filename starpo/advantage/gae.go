package advantage

// GAE is verl's compute_gae_advantage_return before whitening: generalised
// advantage estimation by a backward recursion over every position of each
// row, trained or not (docs/ragen.md#advantages):
//
//	δ_t = r_t + γ·V_{t+1} − V_t,   A_t = δ_t + γλ·A_{t+1},   V_T = A_T = 0
//	returns_t = A_t + V_t
//
// rewards, values and mask are [B][T] (response coordinates). The critic's
// values are zeroed outside the mask first (verl's values·mask, done here
// by selection), so garbage values at untrained positions change nothing.
// Rewards are not masked: a reward at an untrained position still flows
// back into earlier positions, as in verl; PlaceScore and PlaceTurnRewards
// only write trained positions. (Later verl versions skip untrained
// positions, carrying V and A across them; RAGEN's pinned verl, followed
// here, does not.)
//
// With γ = λ = 1 and one terminal reward R, A_t = R − V_t. The StarPO-PPO
// advantage is WhitenMasked(adv, mask) over the whole (filtered) batch; the
// returns come from the raw A. Shapes that differ from mask's panic.
func GAE(rewards, values, mask [][]float64, gamma, lambda float64) (adv, returns [][]float64) {
	checkShape("advantage.GAE", "rewards", rewards, mask)
	checkShape("advantage.GAE", "values", values, mask)
	adv = make([][]float64, len(mask))
	returns = make([][]float64, len(mask))
	for b, m := range mask {
		T := len(m)
		adv[b] = make([]float64, T)
		returns[b] = make([]float64, T)
		next, last := 0.0, 0.0 // V_{t+1} (masked) and A_{t+1}
		for t := T - 1; t >= 0; t-- {
			v := 0.0
			if m[t] != 0 {
				v = values[b][t]
			}
			delta := rewards[b][t] + gamma*next - v
			last = delta + gamma*lambda*last
			adv[b][t] = last
			returns[b][t] = last + v
			next = v
		}
	}
	return adv, returns
}
