package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/ariadne-go/ariadne"
	"github.com/ariadne-go/ariadne/fileindex"
)

// progressPrinter renders progress of long operations on stderr: a
// redrawn bar on a terminal, a log line every logEvery otherwise (CI logs,
// pipes), and with --json one JSON object per line (progressEvent) at the
// log pace; stdout stays the answer's.
type progressPrinter struct {
	mu       sync.Mutex
	w        io.Writer
	tty      bool
	json     bool
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

// progress returns the progress printer of a long step: on stderr, JSON
// lines with --json.
func (g *globals) progress() *progressPrinter {
	p := newProgressPrinter(g.env.Stderr)
	if g.jsonOut {
		p.json, p.tty = true, false
	}
	return p
}

// notice tells the user something on stderr that is neither progress nor
// the answer (a lock waited for, a finished output replaced): a text line
// (prefix: message), or with --json a JSON line {"event": "notice",
// "source", "message"}.
func (g *globals) notice(source, message string) {
	if !g.jsonOut {
		fmt.Fprintf(g.env.Stderr, "%s: %s\n", source, message)
		return
	}
	b, err := json.Marshal(struct {
		Event   string `json:"event"`
		Source  string `json:"source"`
		Message string `json:"message"`
	}{"notice", source, message})
	if err == nil {
		g.env.Stderr.Write(append(b, '\n'))
	}
}

// progressEvent is one progress report of --json: a line on stderr (see
// docs/cli-json.md, "Progress").
type progressEvent struct {
	Event          string  `json:"event"` // always "progress"
	Phase          string  `json:"phase"`
	Done           int64   `json:"done"`
	Total          int64   `json:"total"` // 0: not known
	Bytes          int64   `json:"bytes"`
	RowIndex       string  `json:"row_index,omitempty"`
	ElapsedSeconds float64 `json:"elapsed_seconds"`
	Final          bool    `json:"final"` // the last report of its phase
	// Build is a row index build's counts (add-row-index, update).
	Build *buildEvent `json:"build,omitempty"`
}

// buildEvent is rowindex.BuildProgress in the JSON vocabulary.
type buildEvent struct {
	Files      int   `json:"files"`
	FilesDone  int   `json:"files_done"`
	Rows       int64 `json:"rows"`
	DataBytes  int64 `json:"data_bytes"`
	Entries    int64 `json:"entries"`
	Runs       int   `json:"runs"`
	SpillBytes int64 `json:"spill_bytes"`
	Fragments  int   `json:"fragments"`
	IndexBytes int64 `json:"index_bytes"`
}

// emit reports one progress event: ev as a JSON line with --json, else the
// text line; throttled unless final.
func (p *progressPrinter) emit(final bool, ev func(elapsed time.Duration) progressEvent, line func(elapsed time.Duration) string) {
	if !p.json {
		p.print(final, line)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.now()
	if !final && t.Sub(p.last) < logEvery {
		return
	}
	p.last = t
	e := ev(t.Sub(p.start))
	e.Event, e.Final = "progress", final
	b, err := json.Marshal(e)
	if err != nil {
		return
	}
	p.w.Write(append(b, '\n'))
}

func progressSeconds(d time.Duration) float64 {
	return math.Round(d.Seconds()*1000) / 1000
}

// report is the fileindex.Options.Progress callback.
func (p *progressPrinter) report(pr fileindex.Progress) {
	final := pr.Total > 0 && pr.Done >= pr.Total
	p.emit(final, func(elapsed time.Duration) progressEvent {
		return progressEvent{Phase: pr.Phase, Done: int64(pr.Done), Total: int64(pr.Total), Bytes: pr.Bytes, ElapsedSeconds: progressSeconds(elapsed)}
	}, func(elapsed time.Duration) string { return p.format(pr, elapsed) })
}

// maintain is the ariadne.WithMaintainProgress callback of compact and
// vacuum: a row index started or finished.
func (p *progressPrinter) maintain(mp ariadne.MaintainProgress) {
	final := mp.Done >= mp.Total
	p.emit(final, func(elapsed time.Duration) progressEvent {
		return progressEvent{Phase: "row " + mp.Step, Done: int64(mp.Done), Total: int64(mp.Total), RowIndex: mp.RowIndex, ElapsedSeconds: progressSeconds(elapsed)}
	}, func(elapsed time.Duration) string {
		return p.format(fileindex.Progress{Phase: "row " + mp.Step, Done: mp.Done, Total: mp.Total}, elapsed) + "  row index " + mp.RowIndex
	})
}

// warm is the ariadne.WithWarmProgress callback of warm: a step of a row
// index's warm-up advanced.
func (p *progressPrinter) warm(wp ariadne.WarmProgress) {
	final := wp.Done >= wp.Total
	pr := fileindex.Progress{Phase: "warm " + wp.Step, Done: wp.Done, Total: wp.Total, Bytes: wp.Bytes}
	p.emit(final, func(elapsed time.Duration) progressEvent {
		return progressEvent{Phase: pr.Phase, Done: int64(wp.Done), Total: int64(wp.Total), Bytes: wp.Bytes, RowIndex: wp.RowIndex, ElapsedSeconds: progressSeconds(elapsed)}
	}, func(elapsed time.Duration) string {
		return p.format(pr, elapsed) + "  row index " + wp.RowIndex
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
