package rollout

import "testing"

// valid_episodes and success_in_valid separate the answer format from the
// play: one fully valid success, one fully valid failure, one episode with
// an invalid turn that succeeded anyway.
func TestComputeMetricsSeparatesFormatFromPlay(t *testing.T) {
	trajs := []Trajectory{
		{Tag: "T", GroupID: 0, ActionIsValid: 1, Success: true},
		{Tag: "T", GroupID: 0, ActionIsValid: 1},
		{Tag: "T", GroupID: 1, ActionIsValid: 0.5, Success: true},
		{Tag: "U", GroupID: 2, ActionIsValid: 0.8},
	}
	m := ComputeMetrics(trajs, 2)
	want := map[string]float64{
		"T/success":          2.0 / 3,
		"T/valid_episodes":   2.0 / 3,
		"T/success_in_valid": 0.5,
		"U/valid_episodes":   0,
	}
	for k, v := range want {
		if got, ok := m[k]; !ok || got != v {
			t.Errorf("%s = %v (present %v), want %v", k, got, ok, v)
		}
	}
	if _, ok := m["U/success_in_valid"]; ok {
		t.Errorf("U/success_in_valid present with no valid episode: %v", m["U/success_in_valid"])
	}
}
