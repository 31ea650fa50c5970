package fileindexbench

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Format writes the report as the tables of docs/fileindex.md.
func (r *Report) Format(w io.Writer) {
	layout := "arrival order"
	if r.Sorted {
		layout = "bucketed by user and sorted"
	}
	fmt.Fprintf(w, "Lake: %d Parquet files, %.0f MB, %d rows, %d users (Zipf), %s. Indexes: %s. GOMAXPROCS %d, %s.\n\n",
		r.Files, float64(r.DataBytes)/1e6, r.Rows, r.Users, layout, strings.Join(r.Indexes, ", "), r.Procs, r.GoVersion)
	u := r.Update
	rss := "n/a"
	if u.RSSPeak >= 0 {
		rss = fmt.Sprintf("%.0f MiB", float64(u.RSSPeak)/(1<<20))
		if !u.RSSReset {
			rss += " (process-wide)"
		}
	}
	fmt.Fprintln(w, "| update | batches | MB/s of input | bare scan (same columns, same reader) | update / scan | Go heap peak | RSS peak | index size |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	scan, ratio := "skipped", "n/a"
	if u.ScanTime > 0 {
		scan = fmt.Sprintf("%v (%.1f MB/s)", round(u.ScanTime), u.ScanMBps)
		ratio = fmt.Sprintf("%.2f", u.Ratio)
	}
	fmt.Fprintf(w, "| %v | %d | %.1f | %s | %s | %.0f MiB | %s | %.1f MB |\n\n", round(u.Time), u.Batches, u.MBps,
		scan, ratio, float64(u.HeapPeak)/(1<<20), rss, float64(u.IndexSize)/1e6)
	if u.Time > 0 && u.ScanTime > 0 {
		fmt.Fprintf(w, "Update speed / bare-scan speed: %.2f (row reader), %.2f (typed page reader, %v). CPU: update %v, row-reader scan %v (%.2f×).\n",
			1/u.Ratio, 1/u.TypedRatio, round(u.TypedScanTime), round(u.CPU), round(u.ScanCPU), u.CPU.Seconds()/u.ScanCPU.Seconds())
	}
	st := u.Stages
	if u.Time > 0 {
		fmt.Fprintf(w, "Stages: read+summarise %v wall (%d of %d files from typed pages), build %v, stage %v, merge %v, locate snapshot %v (from memory: %v).\n\n",
			round(st.ReadWall), u.TypedFiles, r.Files, round(st.Build), round(st.Stage), round(st.Merge), round(st.Snapshot), u.SnapshotFromMemory)
	}

	fmt.Fprintln(w, "| locate | keys | queries | p50 | p99 | index requests/query | index bytes/query | files located/query |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	for _, l := range r.Locate {
		kind := "warm"
		if l.Cold {
			kind = "cold"
		}
		fmt.Fprintf(w, "| %s | %d | %d | %v | %v | %.1f | %.0f | %.1f |\n", kind, l.Keys, l.Queries, round(l.P50), round(l.P99),
			l.Requests, l.Bytes, l.Files)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| join (inner) | keys | rows | runs | file index p50 / p90 / p99 | path | files read | key pages skipped | rows scanned | MB read | DuckDB over all files p50 / p90 / p99 | DuckDB / file index (p50) |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, j := range r.Join {
		duckT, ratio := "skipped", "n/a"
		if j.Duck.Wall.P50 > 0 {
			duckT = fmt.Sprintf("%s (%d files)", j.Duck.Wall, j.DuckFiles)
			ratio = fmt.Sprintf("%.2f", j.Duck.Wall.P50.Seconds()/j.Ours.Wall.P50.Seconds())
		}
		fmt.Fprintf(w, "| | %d | %d | %d | %s | %s | %d of %d | %d of %d | %d | %.1f | %s | %s |\n", j.Keys, j.Rows, j.Runs, j.Ours.Wall, j.Stats.Path,
			j.Files, r.Files, j.Stats.PagesSkipped, j.Stats.Pages, j.Stats.RowsScanned, float64(j.Bytes)/1e6, duckT, ratio)
	}
	fmt.Fprintln(w)
	if r.RowIndexEntries > 0 {
		fmt.Fprintf(w, "Row index user_id (hash): %d entries, %.1f MB, built in %v (0: reused).\n", r.RowIndexEntries, float64(r.RowIndexBytes)/1e6, round(r.RowIndexBuild))
	}
	for _, j := range r.Join {
		direct := ""
		if j.Stats.Direct {
			direct = "; rows answered directly, no SQL"
		}
		fmt.Fprintf(w, "Join plan, %d keys: %s%s (%d requests). CPU p50 / p90 / p99: file index %s, DuckDB %s",
			j.Keys, j.Stats.Plan, direct, j.Stats.Requests, j.Ours.CPU, j.Duck.CPU)
		if j.Ours.CPU.P50 > 0 && j.Duck.CPU.P50 > 0 {
			fmt.Fprintf(w, " (DuckDB / file index at p50: %.2f)", j.Duck.CPU.P50.Seconds()/j.Ours.CPU.P50.Seconds())
		}
		fmt.Fprintln(w, ".")
	}
}

// String formats the quantiles as "p50 / p90 / p99", each rounded.
func (q Quantiles) String() string {
	return fmt.Sprintf("%v / %v / %v", round(q.P50), round(q.P90), round(q.P99))
}

// round rounds a duration to three significant digits or so.
func round(d time.Duration) time.Duration {
	switch {
	case d >= 10*time.Second:
		return d.Round(100 * time.Millisecond)
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}
