package bench

import (
	"strings"
	"testing"
	"time"
)

func TestDefaultOptionsValid(t *testing.T) {
	if err := DefaultOptions().Validate(); err != nil {
		t.Fatal(err)
	}
}

// Each bad setting is refused with an error naming its flag.
func TestOptionErrors(t *testing.T) {
	cases := []struct {
		change func(*Options)
		want   string
	}{
		{func(o *Options) { o.Parts = []string{"peak", "warp"} }, `--parts: "warp"`},
		{func(o *Options) { o.Parts = nil }, "--parts is empty"},
		{func(o *Options) { o.Parts = []string{PartUpdate} }, "needs rollout"},
		{func(o *Options) { o.DecodeBatches = []int{1, 0} }, "--decode-batches: 0"},
		{func(o *Options) { o.PeakSizes = nil }, "--peak-sizes is empty"},
		{func(o *Options) { o.PrefillLen = 0 }, "--prefill-len"},
		{func(o *Options) { o.Repeat = 0 }, "--repeat"},
		{func(o *Options) { o.DecodeTokens = 1 }, "--decode-tokens"},
		{func(o *Options) { o.Temperature = 0 }, "--temperature"},
		{func(o *Options) { o.PeakSeconds = -1 }, "--peak-seconds"},
		{func(o *Options) { o.UpdateSeqs = 5 }, "--update-seqs 5 must be a multiple"},
		{func(o *Options) { o.UpdateSeqs = 64 }, "more than the rollout's 32"},
		{func(o *Options) { o.Parts = append(o.Parts, PartSoak); o.Soak = 0 }, "--soak"},
	}
	for _, c := range cases {
		o := DefaultOptions()
		c.change(&o)
		err := o.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want an error containing %q, got %v", c.want, err)
		}
	}
	o := DefaultOptions()
	o.Parts, o.Soak = []string{PartSoak}, time.Second
	if err := o.Validate(); err != nil {
		t.Errorf("a soak-only run: %v", err)
	}
}

func TestLookupPreset(t *testing.T) {
	for _, n := range PresetNames() {
		if _, err := LookupPreset(n); err != nil {
			t.Error(err)
		}
	}
	if _, err := LookupPreset("gpt2"); err == nil || !strings.Contains(err.Error(), `"gpt2" is not one of 50m, qwen2.5-0.5b, tiny`) {
		t.Errorf("unknown preset: %v", err)
	}
}
