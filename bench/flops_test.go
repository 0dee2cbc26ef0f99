package bench

import (
	"math"
	"testing"

	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/starpo/rollout"
)

// A hand-sized shape: d 4, MLP 8, 2 layers, 2/1 heads of 2, vocabulary 10.
var handCfg = model.Config{HiddenSize: 4, IntermediateSize: 8, NumHiddenLayers: 2, NumAttentionHeads: 2, NumKeyValueHeads: 1, VocabSize: 10}

// Each count is worked out by hand from the definitions: per layer q, o
// are 4×4, k, v 4×2, the MLP three 4×8; attention is 2·2·T·S·(nH·hd).
func TestFLOPsByHand(t *testing.T) {
	cases := []struct {
		name      string
		got, want float64
	}{
		{"linear per token", LinearFLOPsPerToken(handCfg), 2 * 2 * (16 + 2*8 + 16 + 3*32)}, // 576
		{"attention T3 S5", AttentionFLOPs(handCfg, 3, 5), 2 * 2 * 2 * 3 * 5 * 4},          // 480
		{"head on 2", HeadFLOPs(handCfg, 2), 2 * 2 * 4 * 10},                               // 160
		{"forward", ForwardFLOPs(handCfg, 3, 5, 2), 3*576 + 480 + 160},
		{"prefill 3 and 2", PrefillFLOPs(handCfg, []int{3, 2}), (3*576 + 288 + 80) + (2*576 + 128 + 80)},
		// Steps attend 4, then 5 keys: (576+128+80) + (576+160+80), per sequence.
		{"decode", DecodeFLOPs(handCfg, 2, 3, 2), 2 * (784 + 816)},
		{"train", TrainFLOPs(handCfg, 3, 2), 3 * (3*576 + 288 + 160)},
		{"critic head", CriticHeadFLOPs(handCfg, 3), 3 * 2 * 3 * 4},
		{"mfu", MFU(50, 200), 0.25},
		{"mfu without a peak", MFU(50, 0), 0},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
		}
	}
}

// The rollout is credited what a KV-reusing implementation must compute:
// turn 2 prefills only the tokens after turn 1's prompt and answer (but
// the answer's last token, never fed).
func TestRolloutWork(t *testing.T) {
	turns := []turnRecord{
		{envs: []int{0}, prompts: [][]int{{1, 2, 3}}, gens: []rollout.Generation{{IDs: []int{4, 5}}}},
		{envs: []int{0}, prompts: [][]int{{1, 2, 3, 4, 5, 6, 7}}, gens: []rollout.Generation{{IDs: []int{8, 9, 9}}}},
	}
	flops, tokens := rolloutWork(handCfg, turns)
	want := ForwardFLOPs(handCfg, 3, 3, 1) + DecodeFLOPs(handCfg, 1, 3, 1) + // turn 1
		ForwardFLOPs(handCfg, 3, 7, 1) + DecodeFLOPs(handCfg, 1, 7, 2) // turn 2: {5, 6, 7} are new
	if tokens != 5 || flops != want {
		t.Fatalf("got %v FLOPs and %d tokens, want %v and 5", flops, tokens, want)
	}
}

func TestSlopeAndSoakFlatness(t *testing.T) {
	if s := Slope([]float64{0, 1, 2}, []float64{1, 3, 5}); s != 2 {
		t.Fatalf("slope %v, want 2", s)
	}
	if s := Slope([]float64{1}, []float64{1}); s != 0 {
		t.Fatalf("slope of one point %v, want 0", s)
	}
	mb := float64(1 << 20)
	var flat, leak Soak
	ts := []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	// A warm-up jump in the first tenth, then flat.
	fillSoak(&flat, ts, []float64{100 * mb, 500 * mb, 500 * mb, 500.2 * mb, 500 * mb, 500.1 * mb, 500 * mb, 500 * mb, 500.3 * mb, 500 * mb, 500 * mb})
	if !flat.Flat || flat.StartRSS != int64(500*mb) || math.Abs(flat.SlopeMBPerMin) > 0.1 {
		t.Fatalf("flat run judged %+v", flat)
	}
	// 5 MB a minute.
	rss := make([]float64, len(ts))
	for i, x := range ts {
		rss[i] = (500 + 5*x) * mb
	}
	fillSoak(&leak, ts, rss)
	if leak.Flat || math.Abs(leak.SlopeMBPerMin-5) > 1e-9 {
		t.Fatalf("leaking run judged %+v", leak)
	}
	// Memory handed back (glibc trimming its heap once) is no leak.
	var falling Soak
	drop := []float64{500, 500, 500, 300, 300, 300, 300, 300, 300, 300, 300}
	for i := range drop {
		drop[i] *= mb
	}
	fillSoak(&falling, ts, drop)
	if !falling.Flat || falling.SlopeMBPerMin >= 0 {
		t.Fatalf("falling run judged %+v", falling)
	}
}
