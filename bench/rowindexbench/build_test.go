package rowindexbench

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/bench/duckdb"
	"github.com/ariadne-go/ariadne/internal/lakegen"
	"github.com/ariadne-go/ariadne/rowindex"
	"github.com/ariadne-go/ariadne/store"
)

// BenchmarkBuild profiles add-row-index's work (rowindex.Create on user_id)
// over the Parquet files under ARIADNE_BENCH_LAKE (for example a benchmark
// run's WORK/lake), into a temporary folder, against DuckDB's bare scan of
// the key column in the same run (build/keyscan; issue 10 asks ≤ 5), in
// wall and in CPU time (user+sys of the process while each ran):
//
//	ARIADNE_BENCH_LAKE=/tmp/rib/lake go test ./bench/rowindexbench -run '^$' -bench Build -benchtime 1x -cpuprofile cpu.out
//
// More settings, by environment:
//
//   - ARIADNE_BENCH_GENERATE=LAYOUT:MB generates the lake of a layout and
//     size (LakeConfig) into ARIADNE_BENCH_LAKE first, unless it is there
//     already (lakegen.Ensure), outside the timing; "skewed:1024" is issue
//     10's 1 GB lake, "skewed:10240" the one with 10× its rows;
//   - ARIADNE_BENCH_ONLY=build, scan or generate runs one part alone, so
//     that /usr/bin/time -v gives that part's peak RSS and CPU; build alone
//     also sets the Go memory limit to the budget, as add-row-index does;
//   - ARIADNE_BENCH_MEMORY=BYTES sets the build's memory budget (default
//     rowindex.DefaultBuildMemory);
//   - ARIADNE_BENCH_KIND=sorted builds a sorted row index (default: a hash
//     row index, add-row-index's default kind);
//   - ARIADNE_BENCH_INDEX=DIR builds the index into DIR (emptied first) and
//     keeps it, to compare the fragments of two builds;
//   - ARIADNE_BENCH_PHASES=1 logs each phase's start (wall and process CPU
//     since the build began), to see where the wall time goes;
//   - ARIADNE_BENCH_RSS=1 samples the process's resident memory every 10 ms
//     and logs the peak split into anonymous and file pages and the Go
//     runtime's memory classes (rssSampler); ARIADNE_BENCH_RSS_TRACE=FILE
//     also writes every sample to FILE.
func BenchmarkBuild(b *testing.B) {
	lake := os.Getenv("ARIADNE_BENCH_LAKE")
	if lake == "" {
		b.Skip("ARIADNE_BENCH_LAKE not set")
	}
	ctx := context.Background()
	only := os.Getenv("ARIADNE_BENCH_ONLY")
	if g := os.Getenv("ARIADNE_BENCH_GENERATE"); g != "" {
		layout, mb, _ := strings.Cut(g, ":")
		size, err := strconv.Atoi(mb)
		if err != nil {
			b.Fatalf("ARIADNE_BENCH_GENERATE=%q: want LAYOUT:MB", g)
		}
		c, err := LakeConfig(layout, size)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := lakegen.Ensure(ctx, lake, c, os.Stderr); err != nil {
			b.Fatal(err)
		}
	}
	if only == "generate" {
		return
	}
	budget := int64(rowindex.DefaultBuildMemory)
	if m := os.Getenv("ARIADNE_BENCH_MEMORY"); m != "" {
		n, err := strconv.ParseInt(m, 10, 64)
		if err != nil {
			b.Fatal(err)
		}
		budget = n
	}
	if only == "build" {
		// As add-row-index does (internal/cli/rowindex_build.go): the
		// budget is the process's, less its resident memory outside the Go
		// heap (this binary's code and DuckDB's library), and the Go memory
		// limit at what is left, so that garbage does not grow the heap
		// past it.
		budget = rowindex.HeapBudget(budget)
		debug.SetMemoryLimit(budget)
		b.Logf("heap budget %d MiB", budget>>20)
	}
	opts := []rowindex.BuildOption{rowindex.WithMemory(budget)}
	logPhases, sampleRSS := os.Getenv("ARIADNE_BENCH_PHASES") != "", os.Getenv("ARIADNE_BENCH_RSS") != ""
	var phaseNow atomic.Value // the build's phase, for the RSS sampler
	phaseNow.Store("")
	if logPhases || sampleRSS {
		phase, c0 := "", cpuTime()
		opts = append(opts, rowindex.WithProgress(func(p rowindex.BuildProgress) {
			if p.Phase != phase {
				phase = p.Phase
				phaseNow.Store(phase)
				if logPhases {
					b.Logf("phase %s at %.2f s wall, %.2f s CPU (runs %d, %d MiB spilled)", phase, p.Elapsed.Seconds(), (cpuTime() - c0).Seconds(), p.Runs, p.SpillBytes>>20)
				}
			}
		}))
	}
	if sampleRSS {
		s, err := startRSSSampler(10*time.Millisecond, func() string { return phaseNow.Load().(string) }, os.Getenv("ARIADNE_BENCH_RSS_TRACE"))
		if err != nil {
			b.Fatal(err)
		}
		defer func() { b.Log(s.end()) }()
	}
	data, err := store.Open(ctx, "file://"+lake)
	if err != nil {
		b.Fatal(err)
	}
	var uris []string
	err = filepath.WalkDir(lake, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".parquet") {
			rel, _ := filepath.Rel(lake, p)
			uris = append(uris, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	var paths []string
	for _, u := range uris {
		paths = append(paths, filepath.Join(lake, filepath.FromSlash(u)))
	}
	var eng *duckdb.Engine
	if only != "build" {
		if eng, err = duckdb.Open(ctx, paths, "user_id"); err != nil {
			b.Fatal(err)
		}
		defer eng.Close()
	}
	var scan, build, scanCPU, buildCPU time.Duration
	for b.Loop() {
		if eng != nil {
			t0, c0 := time.Now(), cpuTime()
			if _, err := eng.KeyScan(ctx); err != nil {
				b.Fatal(err)
			}
			scan += time.Since(t0)
			scanCPU += cpuTime() - c0
		}
		if only == "scan" {
			continue
		}
		t0, c0 := time.Now(), cpuTime()
		dir := b.TempDir()
		if keep := os.Getenv("ARIADNE_BENCH_INDEX"); keep != "" {
			dir = keep
			if err := os.RemoveAll(dir); err != nil {
				b.Fatal(err)
			}
		}
		idx, err := store.Open(ctx, "file://"+dir)
		if err != nil {
			b.Fatal(err)
		}
		man, _, err := rowindex.Create(ctx, idx, rowindex.Definition{Name: "b", Key: "user_id", Kind: rowindex.Kind(os.Getenv("ARIADNE_BENCH_KIND"))}, rowindex.StoreResolver{Store: data}, uris, opts...)
		if err != nil {
			b.Fatal(err)
		}
		build += time.Since(t0)
		buildCPU += cpuTime() - c0
		b.ReportMetric(float64(man.Entries()), "entries")
	}
	n := float64(b.N)
	if eng != nil {
		b.ReportMetric(scan.Seconds()/n, "duckdb-keyscan-s")
		b.ReportMetric(scanCPU.Seconds()/n, "duckdb-keyscan-cpu-s")
	}
	if only != "scan" {
		b.ReportMetric(build.Seconds()/n, "build-s")
		b.ReportMetric(buildCPU.Seconds()/n, "build-cpu-s")
	}
	if eng != nil && only != "scan" {
		b.ReportMetric(build.Seconds()/scan.Seconds(), "build/keyscan")
		b.ReportMetric(buildCPU.Seconds()/scanCPU.Seconds(), "build-cpu/keyscan-cpu")
	}
}

// cpuTime is the process's user+sys CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
