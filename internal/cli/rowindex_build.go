package cli

import (
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/ariadne-go/ariadne/rowindex"
)

// rowIndexBuildFlags are the flags of the commands that build row indexes
// (add-row-index, update).
type rowIndexBuildFlags struct {
	memory string
}

func (f *rowIndexBuildFlags) register(fs interface {
	StringVar(p *string, name, value, usage string)
}) {
	fs.StringVar(&f.memory, "memory", "512MiB", "memory budget of a row index build (entries beyond it are sorted in runs spilled to the temporary folder): bytes or 64MiB, 2GiB, 1.5G")
}

// options returns the build options. With capHeap (a command that only
// builds row indexes) it also sets the Go memory limit of this process to
// the budget, unless GOMEMLIMIT is set: the build keeps its sort buffers
// within the budget less rowindex's overhead share, and without a limit the
// collector would let garbage (decoded pages, fragment rows) grow the heap
// to twice what is live; with it, the process stays at about the budget.
func (f *rowIndexBuildFlags) options(p *progressPrinter, capHeap bool) ([]rowindex.BuildOption, error) {
	mem, err := parseSize(f.memory)
	if err != nil {
		return nil, usagef("--memory: %v", err)
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); capHeap && !set {
		// The budget is the process's: the binary's own resident memory
		// (code, DuckDB's library) is taken off first.
		mem = rowindex.HeapBudget(mem)
		debug.SetMemoryLimit(mem)
	}
	opts := []rowindex.BuildOption{rowindex.WithMemory(mem)}
	if p != nil {
		opts = append(opts, rowindex.WithProgress(func(bp rowindex.BuildProgress) {
			p.emit(bp.Phase == "done", func(time.Duration) progressEvent { return buildProgressEvent(bp) },
				func(time.Duration) string { return formatBuildProgress(bp) })
		}))
	}
	return opts, nil
}

// buildProgressEvent is a row index build's progress for --json: done and
// total count data files.
func buildProgressEvent(bp rowindex.BuildProgress) progressEvent {
	return progressEvent{
		Phase: "row index " + bp.Phase, Done: int64(bp.FilesDone), Total: int64(bp.Files), Bytes: bp.DataBytes,
		ElapsedSeconds: progressSeconds(bp.Elapsed),
		Build: &buildEvent{
			Files: bp.Files, FilesDone: bp.FilesDone, Rows: bp.Rows, DataBytes: bp.DataBytes, Entries: bp.Entries,
			Runs: bp.Runs, SpillBytes: bp.SpillBytes, Fragments: bp.Fragments, IndexBytes: bp.IndexBytes,
		},
	}
}

// formatBuildProgress renders a row index build's progress line.
func formatBuildProgress(bp rowindex.BuildProgress) string {
	var b strings.Builder
	fmt.Fprintf(&b, "row index %-5s", bp.Phase)
	if bp.Phase == "scan" {
		const width = 24
		filled := 0
		if bp.Files > 0 {
			filled = width * bp.FilesDone / bp.Files
		}
		fmt.Fprintf(&b, " [%s%s] %d/%d files", strings.Repeat("#", filled), strings.Repeat(".", width-filled), bp.FilesDone, bp.Files)
	}
	fmt.Fprintf(&b, "  %s rows  %s entries", count(bp.Rows), count(bp.Entries))
	if s := bp.Elapsed.Seconds(); s > 0 && bp.Phase == "scan" {
		mb := float64(bp.DataBytes) / (1 << 20)
		fmt.Fprintf(&b, "  %.1f MiB (%.1f MiB/s)", mb, mb/s)
	}
	if bp.Runs > 0 {
		fmt.Fprintf(&b, "  %d runs spilled (%.1f MiB)", bp.Runs, float64(bp.SpillBytes)/(1<<20))
	} else if bp.Partitions > 0 {
		fmt.Fprintf(&b, "  %d partitions (%.1f MiB)", bp.Partitions, float64(bp.SpillBytes)/(1<<20))
	}
	if bp.Phase != "scan" {
		fmt.Fprintf(&b, "  %d fragments (%.1f MiB)", bp.Fragments, float64(bp.IndexBytes)/(1<<20))
	}
	fmt.Fprintf(&b, "  %s", bp.Elapsed.Round(100*time.Millisecond))
	return b.String()
}

// count renders a count with an SI suffix (12.3M).
func count(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2fG", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1e4:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return strconv.FormatInt(n, 10)
}

// parseSize parses a byte size: a number with an optional unit, K/KiB,
// M/MiB, G/GiB, T/TiB (powers of 1024) or KB, MB, GB, TB (powers of 1000).
func parseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	num, unit := t, ""
	if i >= 0 {
		num, unit = t[:i], strings.TrimSpace(t[i:])
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%q is not a size (bytes, or a number with K, KiB, KB, M, MiB, MB, G, GiB, GB)", s)
	}
	mult := map[string]float64{"": 1, "b": 1,
		"k": 1 << 10, "kib": 1 << 10, "kb": 1e3,
		"m": 1 << 20, "mib": 1 << 20, "mb": 1e6,
		"g": 1 << 30, "gib": 1 << 30, "gb": 1e9,
		"t": 1 << 40, "tib": 1 << 40, "tb": 1e12,
	}[strings.ToLower(unit)]
	if mult == 0 {
		return 0, fmt.Errorf("%q: unknown unit %q", s, unit)
	}
	if v*mult >= math.MaxInt64 {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return int64(v * mult), nil
}
