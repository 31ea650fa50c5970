package fileindexbench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/fileindex"
	"github.com/ariadne-go/ariadne/internal/lakegen"
)

// TestBenchSmoke runs Run end to end on a lake of a few MB: the same code
// path as `ariadne bench fileindex` (generation, update, bare scan, cold and
// warm locates, joins checked against DuckDB over every file), so that the
// benchmark cannot rot, plus the report's invariants.
func TestBenchSmoke(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	lake := lakegen.Config{Seed: 5, TargetBytes: 3 << 20, Days: 3, FilesPerDay: 4, Users: 5000, Tracks: 2000, Sorted: true,
		RowGroupRows: 8192, PageBytes: 8 << 10}
	cfg := Config{Dir: dir, Lake: lake, KeyCounts: []int{1, 10, 100}, WarmQueries: 5, ColdQueries: 2}
	rep, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Files != 12 || rep.Rows == 0 || rep.DataBytes == 0 {
		t.Fatalf("lake: %d files, %d rows, %d bytes", rep.Files, rep.Rows, rep.DataBytes)
	}
	u := rep.Update
	if u.Batches == 0 || u.MBps <= 0 || u.ScanTime <= 0 || u.Ratio <= 0 || u.HeapPeak == 0 || u.IndexSize == 0 {
		t.Fatalf("update %+v", u)
	}
	if len(rep.Locate) != 6 {
		t.Fatalf("%d locate rows, want 3 cold + 3 warm", len(rep.Locate))
	}
	for _, l := range rep.Locate {
		// A warm query costs one List of the main table's log and no read;
		// a cold one also reads the table.
		if !l.Cold && (l.Requests != 1 || l.Bytes != 0) {
			t.Errorf("warm locate of %d keys: %.1f requests, %.0f bytes per query, want 1 List", l.Keys, l.Requests, l.Bytes)
		}
		if l.Cold && (l.Requests <= 1 || l.Bytes == 0) {
			t.Errorf("cold locate of %d keys: %.1f requests, %.0f bytes", l.Keys, l.Requests, l.Bytes)
		}
		if l.Files < 1 || l.Files > float64(rep.Files) {
			t.Errorf("locate of %d keys: %.1f files located of %d", l.Keys, l.Files, rep.Files)
		}
	}
	if len(rep.Join) != 3 {
		t.Fatalf("%d join rows", len(rep.Join))
	}
	for _, j := range rep.Join {
		// Run itself fails when DuckDB's row count differs.
		if j.Rows == 0 || j.Duck.Wall.P50 <= 0 || j.Files == 0 || j.Files > rep.Files || j.Bytes == 0 || j.DuckFiles != rep.Files {
			t.Errorf("join %+v", j)
		}
		for _, q := range []Quantiles{j.Ours.Wall, j.Ours.CPU, j.Duck.Wall, j.Duck.CPU} {
			if q.P50 <= 0 || q.P90 < q.P50 || q.P99 < q.P90 {
				t.Errorf("join of %d keys: quantiles %+v out of order", j.Keys, q)
			}
		}
		// A small lake's joins are short: the pair repeats past the
		// minimum, up to joinRuns.
		if j.Runs <= joinMinRuns || j.Runs > joinRuns {
			t.Errorf("join of %d keys: %d runs, want (%d, %d]", j.Keys, j.Runs, joinMinRuns, joinRuns)
		}
		// Parquet files and an inner join: late materialization, or the
		// engine's scan of the located files when many rows match.
		switch j.Stats.Path {
		case fileindex.PathLate:
			if j.Stats.RowsLoaded != j.Rows {
				t.Errorf("join of %d keys: stats %+v, want the late path loading exactly the %d result rows", j.Keys, j.Stats, j.Rows)
			}
		case fileindex.PathScan:
			if j.Keys == 1 {
				t.Errorf("join of 1 key: stats %+v, want the late path", j.Stats)
			}
		default:
			t.Errorf("join of %d keys: path %s (%s)", j.Keys, j.Stats.Path, j.Stats.Plan)
		}
	}
	if u.TypedFiles != rep.Files || !u.SnapshotFromMemory || u.TypedScanTime <= 0 {
		t.Errorf("update: %d of %d files typed, snapshot from memory %v, typed scan %v", u.TypedFiles, rep.Files, u.SnapshotFromMemory, u.TypedScanTime)
	}
	// Bucketed by user into 4 files a day: one user's rows are in at most
	// one file per day.
	if j := rep.Join[0]; j.Files > lake.Days {
		t.Errorf("1-key join read %d files, want ≤ %d (one per day)", j.Files, lake.Days)
	}

	var sb strings.Builder
	rep.Format(&sb)
	t.Log("\n" + sb.String())
	for _, want := range []string{"| update |", "| warm | 100 |", "| cold | 1 |", "| join (inner) |", "of 12 |"} {
		if !strings.Contains(sb.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, sb.String())
		}
	}
	if _, err := json.Marshal(rep); err != nil {
		t.Fatal(err)
	}

	// The lake is reused when the config is unchanged (the marker), and the
	// index rebuilt.
	info, err := os.Stat(dir + "/lake/lake.json")
	if err != nil {
		t.Fatal(err)
	}
	cfg.SkipBareScan, cfg.SkipDuckDB, cfg.KeyCounts = true, true, []int{1}
	rep2, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	info2, err := os.Stat(dir + "/lake/lake.json")
	if err != nil {
		t.Fatal(err)
	}
	if !info2.ModTime().Equal(info.ModTime()) || rep2.DataBytes != rep.DataBytes {
		t.Error("the lake was regenerated for an unchanged config")
	}
	if rep2.Update.ScanTime != 0 || rep2.Join[0].Duck.Wall.P50 != 0 {
		t.Errorf("skipped baselines were run: %+v %+v", rep2.Update, rep2.Join[0])
	}
}

// BenchmarkLake is the issue-3 benchmark: Run on a ≥ 1 GB lake of 300
// Parquet files (generated once into ARIADNE_BENCH_DIR, or a temporary
// folder, and reused), printing the tables of docs/fileindex.md.
// ARIADNE_BENCH_MB overrides the lake's target size.
//
//	ARIADNE_BENCH_DIR=/tmp/fibench go test ./bench/fileindexbench -run '^$' -bench '^BenchmarkLake$' -benchtime 1x -timeout 2h
func BenchmarkLake(b *testing.B) {
	dir := os.Getenv("ARIADNE_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	lake := DefaultLake()
	if s := os.Getenv("ARIADNE_BENCH_MB"); s != "" {
		var mb int64
		if _, err := fmt.Sscan(s, &mb); err != nil {
			b.Fatal(err)
		}
		lake.TargetBytes = mb * 1e6
	}
	for b.Loop() {
		rep, err := Run(context.Background(), Config{Dir: dir, Lake: lake, Progress: os.Stderr})
		if err != nil {
			b.Fatal(err)
		}
		// To stderr: the benchmark log truncates long output.
		rep.Format(os.Stderr)
		b.ReportMetric(rep.Update.MBps, "update-MB/s")
		b.ReportMetric(rep.Update.Ratio, "update/scan")
		b.ReportMetric(float64(rep.Update.HeapPeak)/(1<<20), "heap-peak-MiB")
		b.ReportMetric(float64(rep.Update.RSSPeak)/(1<<20), "rss-peak-MiB")
	}
}

// TestQuantiles checks the nearest-rank quantiles the reports give.
func TestQuantiles(t *testing.T) {
	ms := func(ns ...int) []time.Duration {
		out := make([]time.Duration, len(ns))
		for i, n := range ns {
			out[i] = time.Duration(n) * time.Millisecond
		}
		return out
	}
	twenty := ms(20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1)
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(100-i) * time.Millisecond
	}
	for _, c := range []struct {
		in   []time.Duration
		want Quantiles
	}{
		{nil, Quantiles{}},
		{ms(7), Quantiles{7 * time.Millisecond, 7 * time.Millisecond, 7 * time.Millisecond}},
		{ms(3, 1, 2), Quantiles{2 * time.Millisecond, 3 * time.Millisecond, 3 * time.Millisecond}},
		// 20 runs: p50 the 10th, p90 the 18th, p99 the slowest.
		{twenty, Quantiles{10 * time.Millisecond, 18 * time.Millisecond, 20 * time.Millisecond}},
		// 100 runs: p50 the 50th, p99 the 99th, not the slowest.
		{hundred, Quantiles{50 * time.Millisecond, 90 * time.Millisecond, 99 * time.Millisecond}},
	} {
		if got := quantiles(c.in); got != c.want {
			t.Errorf("quantiles(%v) = %+v, want %+v", c.in, got, c.want)
		}
	}
	if twenty[0] != 20*time.Millisecond {
		t.Error("quantiles sorted its input in place")
	}
}
