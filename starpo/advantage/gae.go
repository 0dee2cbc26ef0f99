package advantage

import "fmt"

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

// BiLevelGAE is RAGEN's compute_bi_level_gae_advantage_return before its
// whitening: GAE on two levels, the turns of the agent's MDP and the tokens
// within each turn. ends[b] lists row b's turn ends, ascending: the trained
// position of each turn's last token, which carries the turn's reward and
// value (batch.Batch.TurnEnds). First across turns, with high_level_gamma
// γ_H and the same λ, from the last turn back:
//
//	δ_k = r(e_k) + γ_H·V(e_{k+1}) − V(e_k),   A_k = δ_k + γ_H·λ·A_{k+1},   V(e_K) = A_K = 0
//	G_k = A_k + V(e_k)   (the turn's return)
//
// then across the trained tokens, from the last back: a turn end restarts
// the recursion with G_k as its reward and nothing after it, so it takes the
// turn-level advantage; any other trained position bootstraps from the next
// trained position, which skips the untrained environment text between
// turns (there are none inside a turn):
//
//	end e_k:   δ = G_k − V(e_k),                  A = δ
//	other t:   δ = r_t + γ·V(t⁺) − V(t),          A = δ + γλ·A(t⁺)    (t⁺ the next trained position; none: V = A = 0)
//	returns = A + V
//
// Untrained positions get 0 advantage and 0 return, and neither their
// values nor their rewards are read: garbage there changes nothing. With
// one turn, and rewards only on its trained positions, this is GAE on the
// trained positions.
//
// Where RAGEN differs: its turn ends are the positions whose reward is not
// zero. That equals ends only when every turn's reward is non-zero; under
// use_turn_scores off, which RAGEN requires with bi_level_gae, only the
// final position carries one, so RAGEN's turn level is a single step and its
// token level chains across turns (and across a zero-reward turn at any
// time): passing ends = the non-zero-reward positions reproduces RAGEN
// exactly. Here every turn is a turn, so earlier turns' returns are
// discounted by γ_H per turn; with KL in the reward, RAGEN would take every
// token for a turn end. A last trained position that is not a turn end
// bootstraps from 0 (RAGEN indexes past its list there).
//
// rewards, values and mask are [B][T]; ends out of range, not ascending or
// at untrained positions, and shapes that differ from mask's, panic.
func BiLevelGAE(rewards, values, mask [][]float64, ends [][]int, gamma, lambda, highGamma float64) (adv, returns [][]float64) {
	checkShape("advantage.BiLevelGAE", "rewards", rewards, mask)
	checkShape("advantage.BiLevelGAE", "values", values, mask)
	if len(ends) != len(mask) {
		panic(fmt.Sprintf("advantage.BiLevelGAE: ends has %d rows, mask has %d", len(ends), len(mask)))
	}
	adv = make([][]float64, len(mask))
	returns = make([][]float64, len(mask))
	for b, m := range mask {
		T, e := len(m), ends[b]
		for k, j := range e {
			if j < 0 || j >= T || m[j] == 0 || k > 0 && j <= e[k-1] {
				panic(fmt.Sprintf("advantage.BiLevelGAE: row %d's turn end %d (%d) is out of order, "+
					"out of its %d positions or untrained", b, k, j, T))
			}
		}
		r, v := rewards[b], values[b]
		adv[b], returns[b] = make([]float64, T), make([]float64, T)
		// The turn level: G[k], turn k's return.
		G, last := make([]float64, len(e)), 0.0
		for k := len(e) - 1; k >= 0; k-- {
			next := 0.0
			if k+1 < len(e) {
				next = v[e[k+1]]
			}
			delta := r[e[k]] + highGamma*next - v[e[k]]
			last = delta + highGamma*lambda*last
			G[k] = last + v[e[k]]
		}
		// The token level, turn k's tokens seeded by G[k] at its end.
		k, nextPos := len(e)-1, -1
		last = 0
		for t := T - 1; t >= 0; t-- {
			if m[t] == 0 {
				continue
			}
			var delta float64
			if k >= 0 && t == e[k] {
				delta, last = G[k]-v[t], 0
				k--
			} else {
				next := 0.0
				if nextPos >= 0 {
					next = v[nextPos]
				}
				delta = r[t] + gamma*next - v[t]
			}
			last = delta + gamma*lambda*last
			adv[b][t], returns[b][t] = last, last+v[t]
			nextPos = t
		}
	}
	return adv, returns
}
