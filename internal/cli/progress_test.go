package cli

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/fileindex"
	"github.com/ariadne-go/ariadne/internal/lakegen"
	"github.com/ariadne-go/ariadne/rowindex"
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

// checkEventLines checks that every line of stderr (of a --json command)
// is a JSON object with a string "event", snake_case keys and no
// nanosecond durations, and returns them.
func checkEventLines(t *testing.T, what, errs string) []map[string]any {
	t.Helper()
	var evs []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(errs), "\n") {
		if line == "" {
			continue
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Errorf("%s: stderr line is not JSON: %q", what, line)
			continue
		}
		if _, ok := ev["event"].(string); !ok {
			t.Errorf("%s: stderr line without an event: %q", what, line)
		}
		for k := range ev {
			if k != strings.ToLower(k) || strings.ContainsAny(k, " -.") {
				t.Errorf("%s: key %q is not snake_case: %q", what, k, line)
			}
		}
		evs = append(evs, ev)
	}
	return evs
}

// checkJSONProgress checks that stderr of a --json command is JSON lines,
// each a progress event with the vocabulary's keys and types, and that
// every wanted phase (a text line's prefix) has its final event.
func checkJSONProgress(t *testing.T, args []string, errs string, want []string) {
	t.Helper()
	finals := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(errs), "\n") {
		if line == "" {
			continue
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Errorf("%v: stderr line is not JSON: %q", args, line)
			continue
		}
		if ev["event"] == "notice" {
			if _, ok := ev["message"].(string); !ok {
				t.Errorf("%v: notice without a message: %q", args, line)
			}
			continue
		}
		if ev["event"] != "progress" {
			t.Errorf("%v: event %v, want progress: %q", args, ev["event"], line)
		}
		for _, k := range []string{"done", "total", "bytes", "elapsed_seconds"} {
			if _, ok := ev[k].(float64); !ok {
				t.Errorf("%v: %s is not a number: %q", args, k, line)
			}
		}
		phase, _ := ev["phase"].(string)
		if fin, _ := ev["final"].(bool); fin {
			finals[phase] = true
		}
		if strings.HasPrefix(phase, "row index") {
			b, ok := ev["build"].(map[string]any)
			if _, n := b["entries"].(float64); !ok || !n {
				t.Errorf("%v: build progress without build.entries: %q", args, line)
			}
		}
	}
	for _, w := range want {
		found := false
		for ph := range finals {
			if strings.HasPrefix(ph+" ", w) {
				found = true
			}
		}
		if !found {
			t.Errorf("%v: no final %q progress event on stderr:\n%s", args, strings.TrimSpace(w), errs)
		}
	}
}

// TestProgressOfLongSteps runs the long steps on a real lake, with and
// without --json, and checks that each shows its progress on stderr (the
// final line of each phase is always printed; with --json as JSON lines)
// while stdout holds only the answer.
func TestProgressOfLongSteps(t *testing.T) {
	dir := t.TempDir()
	lakeDir, files := genLake(t, lakegen.Config{Seed: 5, TargetBytes: 1 << 20, Days: 1, FilesPerDay: 2, Users: 300, Tracks: 500})
	first := filepath.Join(lakeDir, files[0].Key)
	runOK(t, dir, "create", "plays", "--format", "parquet", "--infer-from", first)
	runOK(t, dir, "add-files", "plays", lakeDir)
	runOK(t, dir, "add-index", "plays", "--regular", "user_id")
	prep := filepath.Join(t.TempDir(), "prep")
	for _, c := range []struct {
		args []string
		want []string // progress lines (prefixes) on stderr
	}{
		{[]string{"update", "plays"}, []string{"read ", "merge "}},
		{[]string{"--json", "update", "plays"}, nil}, // up to date: any stderr is JSON lines
		{[]string{"add-row-index", "plays", "--key", "user_id"}, []string{"row index done "}},
		{[]string{"--json", "add-row-index", "plays", "--key", "ts", "--kind", "sorted"}, []string{"row index done "}},
		{[]string{"compact", "plays"}, []string{"compact ", "snapshot ", "row compact "}},
		{[]string{"--json", "compact", "plays"}, []string{"compact ", "snapshot ", "row compact "}},
		{[]string{"vacuum", "plays", "--retain", "0s"}, []string{"vacuum ", "row vacuum "}},
		{[]string{"--json", "vacuum", "plays", "--retain", "0s"}, []string{"vacuum ", "row vacuum "}},
		{[]string{"warm", "plays", "--set", "rowIndexShapeBytes=16777216"}, []string{"warm fragments ", "warm footers ", "warm resident ", "warm shapes "}},
		{[]string{"--json", "warm", "plays", "--set", "rowIndexShapeBytes=16777216"}, []string{"warm fragments ", "warm footers ", "warm resident ", "warm shapes "}},
		{[]string{"prepare", lakeDir, "--out", prep, "--key", "user_id", "--buckets", "2"}, []string{"scan ", "read "}},
		{[]string{"--json", "prepare", lakeDir, "--out", prep, "--key", "user_id", "--buckets", "2", "--overwrite"}, []string{"scan ", "read "}},
	} {
		code, out, errs := run(t, dir, c.args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, errs)
		}
		if c.args[0] == "--json" {
			decode(t, out) // one JSON document, no progress in it
			checkJSONProgress(t, c.args, errs, c.want)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(errs, "\n"+w) && !strings.HasPrefix(errs, w) {
				t.Errorf("%v: no %q progress line on stderr:\n%s", c.args, w, errs)
			}
		}
		if strings.Contains(out, "[####") {
			t.Errorf("%v: progress on stdout:\n%s", c.args, out)
		}
	}
	// The final line of a row index step names the row index and counts
	// every one.
	_, _, errs := run(t, dir, "compact", "plays")
	if !strings.Contains(errs, "row compact  [########################] 2/2") {
		t.Errorf("compact's row index progress:\n%s", errs)
	}
}

// TestBuildProgressSpill: a build's text line names what it spilled: runs
// on the run path, partition files on the partitioned key-id path, nothing
// on the key-id path.
func TestBuildProgressSpill(t *testing.T) {
	for _, c := range []struct {
		bp   rowindex.BuildProgress
		want string
	}{
		{rowindex.BuildProgress{Phase: "merge", Runs: 3, SpillBytes: 3 << 20}, "  3 runs spilled (3.0 MiB)"},
		{rowindex.BuildProgress{Phase: "merge", Partitions: 128, SpillBytes: 2047 << 20}, "  128 partitions (2047.0 MiB)"},
		{rowindex.BuildProgress{Phase: "merge"}, ""},
	} {
		line := formatBuildProgress(c.bp)
		if c.want == "" {
			if strings.Contains(line, "spilled") || strings.Contains(line, "partitions") {
				t.Errorf("%q names a spill", line)
			}
		} else if !strings.Contains(line, c.want) {
			t.Errorf("%q lacks %q", line, c.want)
		}
	}
}
