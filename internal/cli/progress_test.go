package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/fileindex"
)

func TestProgressLogLines(t *testing.T) {
	var buf bytes.Buffer
	p := newProgressPrinter(&buf)
	clock := time.Unix(0, 0)
	p.now = func() time.Time { return clock }
	p.start, p.last = clock, clock
	p.report(fileindex.Progress{Phase: "batch", Done: 1, Total: 4}) // throttled
	clock = clock.Add(6 * time.Second)
	p.report(fileindex.Progress{Phase: "batch", Done: 2, Total: 4, Bytes: 3 << 20})
	p.report(fileindex.Progress{Phase: "batch", Done: 4, Total: 4}) // final: always shown
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 log lines, got %q", buf.String())
	}
	if !strings.Contains(lines[0], "[############............] 2/4") || !strings.Contains(lines[0], "3.0 MiB (0.5 MiB/s)") {
		t.Fatalf("line: %q", lines[0])
	}
}
