package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/ariadne-go/ariadne"
	"github.com/ariadne-go/ariadne/fileindex"
)

// progressPrinter renders progress of long operations on stderr: a
// redrawn bar on a terminal, a log line every logEvery otherwise (CI logs,
// pipes), and nothing with --json (stdout stays machine-readable; stderr
// still gets the periodic lines).
type progressPrinter struct {
	mu       sync.Mutex
	w        io.Writer
	tty      bool
	start    time.Time
	last     time.Time
	lastLine int
	now      func() time.Time
}

const (
	// redrawEvery throttles terminal redraws: 10 per second is smooth and
	// costs nothing next to indexing work.
	redrawEvery = 100 * time.Millisecond
	// logEvery spaces log lines when stderr is not a terminal.
	logEvery = 5 * time.Second
)

func newProgressPrinter(w io.Writer) *progressPrinter {
	tty := false
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			tty = true
		}
	}
	now := time.Now
	return &progressPrinter{w: w, tty: tty, start: now(), now: now}
}

// report is the fileindex.Options.Progress callback.
func (p *progressPrinter) report(pr fileindex.Progress) {
	final := pr.Total > 0 && pr.Done >= pr.Total
	p.print(final, func(elapsed time.Duration) string { return p.format(pr, elapsed) })
}

// maintain is the ariadne.WithMaintainProgress callback of compact and
// vacuum: a row index started or finished.
func (p *progressPrinter) maintain(mp ariadne.MaintainProgress) {
	final := mp.Done >= mp.Total
	p.print(final, func(elapsed time.Duration) string {
		return p.format(fileindex.Progress{Phase: "row " + mp.Step, Done: mp.Done, Total: mp.Total}, elapsed) + "  row index " + mp.RowIndex
	})
}

// print renders a progress line (made by line from the time elapsed),
// throttled unless final.
func (p *progressPrinter) print(final bool, line func(elapsed time.Duration) string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.now()
	every := logEvery
	if p.tty {
		every = redrawEvery
	}
	if !final && t.Sub(p.last) < every {
		return
	}
	p.last = t
	text := line(t.Sub(p.start))
	if p.tty {
		pad := ""
		if n := p.lastLine - len(text); n > 0 {
			pad = strings.Repeat(" ", n)
		}
		fmt.Fprintf(p.w, "\r%s%s", text, pad)
		p.lastLine = len(text)
		if final {
			fmt.Fprintln(p.w)
			p.lastLine = 0
		}
		return
	}
	fmt.Fprintln(p.w, text)
}

func (p *progressPrinter) format(pr fileindex.Progress, elapsed time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-12s", pr.Phase)
	if pr.Total > 0 {
		const width = 24
		filled := width * pr.Done / pr.Total
		fmt.Fprintf(&b, " [%s%s] %d/%d", strings.Repeat("#", filled), strings.Repeat(".", width-filled), pr.Done, pr.Total)
	} else {
		fmt.Fprintf(&b, " %d", pr.Done)
	}
	if pr.Bytes > 0 {
		mb := float64(pr.Bytes) / (1 << 20)
		fmt.Fprintf(&b, "  %.1f MiB", mb)
		if s := elapsed.Seconds(); s > 0 {
			fmt.Fprintf(&b, " (%.1f MiB/s)", mb/s)
		}
	}
	fmt.Fprintf(&b, "  %s", elapsed.Round(100*time.Millisecond))
	return b.String()
}
