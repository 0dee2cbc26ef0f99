package collapse

import "math/rand/v2"

// Pick chooses up to m samples from trajs (each trajectory's turns, in
// order) for Measure, trajectory-uniform: repeatedly a trajectory
// uniformly among those with a turn left, then one of its remaining turns
// with a non-empty reasoning uniformly, never the same (trajectory, turn)
// twice. Long episodes thus do not crowd out short ones, as they would if
// turns were drawn uniformly. The choice depends only on trajs' shape and
// seed. With fewer than m non-empty turns it returns them all.
func Pick(trajs [][]Sample, m int, seed uint64) []Sample {
	left := make([][]int, 0, len(trajs)) // per trajectory with a turn left: its turns' indices
	owner := make([]int, 0, len(trajs))
	for i, turns := range trajs {
		var idx []int
		for k, s := range turns {
			if len(s.Reasoning) > 0 {
				idx = append(idx, k)
			}
		}
		if len(idx) > 0 {
			left, owner = append(left, idx), append(owner, i)
		}
	}
	rng := rand.New(rand.NewPCG(seed, 0xC011A95E))
	var out []Sample
	for len(out) < m && len(left) > 0 {
		t := rng.IntN(len(left))
		k := rng.IntN(len(left[t]))
		out = append(out, trajs[owner[t]][left[t][k]])
		left[t][k] = left[t][len(left[t])-1]
		left[t] = left[t][:len(left[t])-1]
		if len(left[t]) == 0 {
			left[t], owner[t] = left[len(left)-1], owner[len(owner)-1]
			left, owner = left[:len(left)-1], owner[:len(owner)-1]
		}
	}
	return out
}
