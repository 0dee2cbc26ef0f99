package progress

import (
	"strings"
	"testing"
	"time"
)

// The line shows count, percentage and an ETA extrapolated from the pace;
// off a terminal, updates are throttled but the last one always prints.
func TestBar(t *testing.T) {
	var out strings.Builder
	clock := time.Unix(0, 0)
	b := NewTo(&out, "sft", 10, false)
	b.now = func() time.Time { return clock }
	b.start = clock
	clock = clock.Add(20 * time.Second)
	if got := b.Line(4, "loss 1.5", clock); got != "sft        [#########---------------] 4/10  40% 0m20s elapsed, ETA 0m30s  loss 1.5" {
		t.Fatalf("line %q", got)
	}
	b.Set(4, "")
	b.Set(5, "") // within 5 s of the last: throttled
	clock = clock.Add(time.Minute)
	b.Set(10, "done")
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[1], "10/10 100%") {
		t.Fatalf("output %q", out.String())
	}
}
