package envs

import "math/rand/v2"

// pcgStream is the second PCG seed word. Any fixed value works; fixing it
// makes the generator a function of the Reset seed alone.
const pcgStream = 0x9e3779b97f4a7c15

// seededRand owns one PCG source and the Rand drawing from it, so a Reset
// reseeds in place instead of allocating.
type seededRand struct {
	src *rand.PCG
	*rand.Rand
}

func newSeededRand() seededRand {
	src := rand.NewPCG(0, pcgStream)
	return seededRand{src: src, Rand: rand.New(src)}
}

func (r seededRand) seed(seed int64) { r.src.Seed(uint64(seed), pcgStream) }

// nextSeed derives the seed of a retry from the seed that failed (splitmix64
// finaliser). RAGEN uses Python's per-process randomised string hash here,
// which makes its retries irreproducible; a fixed mix keeps ours reproducible.
func nextSeed(seed int64) int64 {
	z := uint64(seed) + 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return int64((z ^ (z >> 31)) >> 1) // keep it non-negative, like RAGEN's mod 2^32
}
