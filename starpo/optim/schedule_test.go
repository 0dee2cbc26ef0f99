package optim

import (
	"strings"
	"testing"
)

func TestScheduleLR(t *testing.T) {
	warm := Schedule{Kind: Warmup, WarmupSteps: 4, Base: 1e-6}
	for _, c := range []struct {
		s    Schedule
		step int
		want float64
	}{
		{Schedule{Kind: Constant, Base: 1e-6}, 0, 1e-6},
		{Schedule{Kind: Constant, Base: 1e-6}, 1000, 1e-6},
		{warm, 0, 0},
		{warm, 1, 0.25e-6},
		{warm, 3, 0.75e-6},
		{warm, 4, 1e-6},
		{warm, 99, 1e-6},
	} {
		if got := c.s.LR(c.step); got != c.want {
			t.Errorf("%+v.LR(%d) = %g, want %g", c.s, c.step, got, c.want)
		}
	}
}

func TestNewScheduleFromVerlFields(t *testing.T) {
	for _, c := range []struct {
		steps, total int
		ratio        float64
		want         Schedule
	}{
		{-1, 200, 0, Schedule{Kind: Constant, Base: 1e-6}}, // RAGEN's defaults
		{-1, 200, 0.1, Schedule{Kind: Warmup, WarmupSteps: 20, Base: 1e-6}},
		{-1, 15, 0.1, Schedule{Kind: Warmup, WarmupSteps: 1, Base: 1e-6}}, // ⌊1.5⌋
		{5, 200, 0.5, Schedule{Kind: Warmup, WarmupSteps: 5, Base: 1e-6}}, // explicit steps win
		{0, 200, 0.5, Schedule{Kind: Constant, Base: 1e-6}},
	} {
		got, err := NewSchedule(1e-6, c.steps, c.ratio, c.total)
		if err != nil || got != c.want {
			t.Errorf("NewSchedule(1e-6, %d, %v, %d) = %+v, %v; want %+v", c.steps, c.ratio, c.total, got, err, c.want)
		}
	}
}

func TestScheduleErrorsNameTheValue(t *testing.T) {
	for _, c := range []struct {
		s    Schedule
		want string
	}{
		{Schedule{Kind: "cosine", Base: 1}, `"cosine"`},
		{Schedule{Kind: Warmup, Base: 1}, "warm-up steps 0"},
		{Schedule{Kind: Constant, WarmupSteps: 3, Base: 1}, "warm-up steps 3"},
		{Schedule{Kind: Constant, Base: -2}, "learning rate -2"},
	} {
		if err := c.s.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v.Validate() = %v, want an error naming %s", c.s, err, c.want)
		}
	}
	if _, err := NewSchedule(1, -1, 1.5, 10); err == nil || !strings.Contains(err.Error(), "ratio 1.5") {
		t.Errorf("NewSchedule with ratio 1.5: %v, want an error naming it", err)
	}
}
