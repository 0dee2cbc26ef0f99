// Package progress draws a progress bar with an ETA for long stages: redrawn
// in place on a terminal, a plain line every few seconds otherwise (CI logs,
// pipes), so neither floods nor stays silent.
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// Bar is one stage's progress. It is not safe for concurrent use.
type Bar struct {
	name  string
	total int
	w     io.Writer
	tty   bool
	start time.Time
	last  time.Time
	every time.Duration
	now   func() time.Time
}

// New starts a bar for total units of work, drawn on stderr.
func New(name string, total int) *Bar { return NewTo(os.Stderr, name, total, isTerminal(os.Stderr)) }

// NewTo starts a bar on w; tty selects in-place redrawing.
func NewTo(w io.Writer, name string, total int, tty bool) *Bar {
	b := &Bar{name: name, total: max(total, 1), w: w, tty: tty, every: 5 * time.Second, now: time.Now}
	b.start = b.now()
	return b
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// Set reports done units and a short status text (e.g. the loss).
func (b *Bar) Set(done int, status string) {
	t := b.now()
	if !b.tty && done < b.total && t.Sub(b.last) < b.every {
		return
	}
	b.last = t
	line := b.Line(done, status, t)
	if b.tty {
		fmt.Fprintf(b.w, "\r\033[K%s", line)
		if done >= b.total {
			fmt.Fprintln(b.w)
		}
		return
	}
	fmt.Fprintln(b.w, line)
}

// Line renders the bar at done units: name, bar, count, percentage,
// elapsed time, ETA and status.
func (b *Bar) Line(done int, status string, now time.Time) string {
	done = min(max(done, 0), b.total)
	const width = 24
	filled := done * width / b.total
	elapsed := now.Sub(b.start)
	eta := "?"
	if done > 0 {
		eta = fmtDur(time.Duration(float64(elapsed) * float64(b.total-done) / float64(done)))
	}
	s := fmt.Sprintf("%-10s [%s%s] %d/%d %3d%% %s elapsed, ETA %s", b.name,
		strings.Repeat("#", filled), strings.Repeat("-", width-filled), done, b.total, done*100/b.total, fmtDur(elapsed), eta)
	if status != "" {
		s += "  " + status
	}
	return s
}

func fmtDur(d time.Duration) string {
	d = d.Round(time.Second)
	if d >= time.Hour {
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}
