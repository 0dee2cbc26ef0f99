package envs

import "testing"

var benchTags = []string{"SimpleSokoban", "LargerSokoban", "SokobanDifferentGridVocab", "FrozenLake", "Bandit", "Countdown", "SimpleSudoku", "MediumSudoku", "Sudoku4x4", "game_2048"}

// BenchmarkReset measures level generation: one op is one Reset.
func BenchmarkReset(b *testing.B) {
	for _, tag := range benchTags {
		b.Run(tag, func(b *testing.B) {
			e := mustNew(b, tag)
			seed := int64(0)
			for b.Loop() {
				mustReset(b, e, seed)
				seed++
			}
			b.ReportMetric(float64(seed)/b.Elapsed().Seconds(), "levels/s")
		})
	}
}

// BenchmarkStep measures one Step, rendering included; episodes restart
// when they end.
func BenchmarkStep(b *testing.B) {
	for _, tag := range benchTags {
		b.Run(tag, func(b *testing.B) {
			e := mustNew(b, tag)
			mustReset(b, e, 0)
			acts := e.Actions()
			if acts == nil {
				acts = []string{"74 + 62 - 44"}
			}
			n, seed := 0, int64(0)
			for b.Loop() {
				if _, _, done, _ := e.Step(acts[n%len(acts)]); done {
					b.StopTimer()
					seed++
					mustReset(b, e, seed)
					b.StartTimer()
				}
				n++
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "steps/s")
		})
	}
}

// BenchmarkSolve measures the breadth-first solver on fresh levels.
func BenchmarkSolve(b *testing.B) {
	for _, tag := range benchTags[:3] {
		b.Run(tag, func(b *testing.B) {
			e := mustNew(b, tag).(*Sokoban)
			seed := int64(0)
			for b.Loop() {
				b.StopTimer()
				mustReset(b, e, seed)
				seed++
				b.StartTimer()
				if _, ok := e.Solve(); !ok {
					b.Fatalf("seed %d unsolved", seed-1)
				}
			}
		})
	}
}

// BenchmarkBatch128 is one training step's environment work at RAGEN's
// defaults: reset 8 groups × 16 environments (a seed per group), then
// parse a response and execute its actions, 5 turns of 2 actions each.
func BenchmarkBatch128(b *testing.B) {
	const groups, groupSize, turns = 8, 16, 5
	for _, tag := range []string{"SimpleSokoban", "LargerSokoban", "FrozenLake", "Countdown"} {
		b.Run(tag, func(b *testing.B) {
			batch := make([]Env, groups*groupSize)
			for i := range batch {
				batch[i] = mustNew(b, tag)
			}
			responses := []string{
				" push it </think><answer>Up || Left</answer>",
				" go </think><answer>Right || Down</answer>",
				" hmm </think><answer>Down || Down</answer>",
				" try </think><answer>Left || Up</answer>",
			}
			step := int64(0)
			for b.Loop() {
				for i, e := range batch {
					mustReset(b, e, 10000+step*groups+int64(i/groupSize))
				}
				for turn := range turns {
					for i, e := range batch {
						p := ParseResponse(responses[(i+turn)%len(responses)], true, 5, e)
						for _, a := range p.Valid {
							if _, _, done, _ := e.Step(a); done {
								break
							}
						}
					}
				}
				step++
			}
		})
	}
}
