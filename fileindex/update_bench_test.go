package fileindex

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/datafile"
	"github.com/ariadne-go/ariadne/internal/lakegen"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/store"
)

// BenchmarkUpdateHugeValueSet indexes one CSV file holding millions of
// distinct values of two columns with L = 1,000 (§12 item 8): both pairs
// are large, so their values stream from the engine into large_indexes/
// and through the auto-bloom filters without any per-file array. It reports
// the Go heap peak and the process's peak RSS (Go + DuckDB).
//
//	go test ./fileindex -run '^$' -bench UpdateHugeValueSet -benchtime 1x
func BenchmarkUpdateHugeValueSet(b *testing.B) {
	const rows = 3_000_000
	dir := b.TempDir()
	path := filepath.Join(dir, "huge.csv")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprintln(w, "Id,Version,Category,Value")
	for i := 0; i < rows; i++ {
		// Category: a distinct 16-byte string per row.
		fmt.Fprintf(w, "%d,%d,k%015x,%d.5\n", i, i%7, uint64(i)*0x9E3779B97F4A7C15>>4, i%100)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	uri := updFileURI(b, path)
	info, _ := os.Stat(path)
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		e := newUpdEnvTB(b)
		e.cfg.LargeIndexLimit = 1000
		ix := e.open(fmt.Sprint("huge", i), updSchemaIDs, "csv", map[string]string{"header": "true"})
		if _, err := ix.AddFiles(ctx, uri); err != nil {
			b.Fatal(err)
		}
		for _, c := range []string{"Id", "Category"} {
			if err := ix.AddIndex(ctx, c); err != nil {
				b.Fatal(err)
			}
		}
		if err := ix.AddRangeIndex(ctx, "Value"); err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		hp := startHeapSampler(os.Getenv("ARIADNE_BENCH_HEAPPROF"))
		b.StartTimer()
		res, err := e.fi(ix).Update(ctx, UpdateOptions{})
		b.StopTimer()
		peak := hp.Stop()
		if err != nil {
			b.Fatal(err)
		}
		if res.NewFiles != 1 || len(res.AutoBloomDetected) != 2 {
			b.Fatalf("result %+v", res)
		}
		b.ReportMetric(float64(peak)/(1<<20), "heap-peak-MiB")
		b.ReportMetric(float64(peakRSS())/(1<<20), "maxrss-MiB")
		b.ReportMetric(float64(rows), "distinct/file")
		b.SetBytes(info.Size())
	}
}

// listenSchema is lakegen's Listen record as a Spark schema.
const listenSchema = `{"type":"struct","fields":[{"name":"user_id","type":"long","nullable":true,"metadata":{}},{"name":"ts","type":"timestamp","nullable":true,"metadata":{}},{"name":"track_uri","type":"string","nullable":true,"metadata":{}},{"name":"duration_ms","type":"integer","nullable":true,"metadata":{}},{"name":"context","type":"string","nullable":true,"metadata":{}}]}`

// BenchmarkUpdateLake is the issue-3 update benchmark: a ~1 GB lake of 300
// Parquet files (lakegen's listening history, generated into a temporary
// folder first) indexed with a regular index on user_id, a bloom index on
// track_uri and a range index on ts. It reports the update's input MB/s,
// the MB/s of a bare scan of the same three columns with the same reader,
// their ratio, and memory peaks.
//
//	ARIADNE_BENCH_LAKE_BYTES=1000000000 go test ./fileindex -run '^$' -bench UpdateLake -benchtime 1x -timeout 60m
func BenchmarkUpdateLake(b *testing.B) {
	target := int64(1_000_000_000)
	if v := os.Getenv("ARIADNE_BENCH_LAKE_BYTES"); v != "" {
		fmt.Sscan(v, &target)
	}
	ctx := context.Background()
	lakeDir := b.TempDir()
	lake, err := store.Open(ctx, "file://"+lakeDir)
	if err != nil {
		b.Fatal(err)
	}
	defer lake.Close()
	cfg := lakegen.DefaultConfig()
	cfg.TargetBytes = target
	cfg.Days, cfg.FilesPerDay = 30, 10
	start := time.Now()
	files, err := lakegen.Generate(ctx, lake, cfg)
	if err != nil {
		b.Fatal(err)
	}
	var total int64
	uris := make([]string, len(files))
	for i, f := range files {
		total += f.Size
		uris[i] = "file://" + filepath.Join(lakeDir, f.Key)
	}
	b.Logf("lake: %d files, %.0f MB, generated in %s", len(files), float64(total)/1e6, time.Since(start).Round(time.Second))

	// The bare scan: the same columns, the same reader, one file at a time.
	src, err := schema.Parse(listenSchema)
	if err != nil {
		b.Fatal(err)
	}
	plan, err := datafile.Compile(datafile.Spec{Format: "parquet", Schema: src}, []string{"user_id", "track_uri", "ts"})
	if err != nil {
		b.Fatal(err)
	}
	res := store.NewResolver(store.ResolverOptions{})
	defer res.Close()
	start = time.Now()
	scanCPU0 := cpuTime()
	var scanned int64
	for _, u := range uris {
		r, err := plan.Open(ctx, res, u)
		if err != nil {
			b.Fatal(err)
		}
		for {
			rows, err := r.Next(ctx)
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			scanned += int64(len(rows))
		}
		r.Close()
	}
	scan := time.Since(start)
	scanCPU := cpuTime() - scanCPU0
	b.Logf("bare scan: %d rows in %s", scanned, scan.Round(time.Millisecond))

	// ARIADNE_BENCH_ENGINE=1 runs the update through the engine only (the
	// path before the Go summaries), for a comparison on the same lake.
	engineOnly := os.Getenv("ARIADNE_BENCH_ENGINE") == "1"
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		e := newUpdEnvTB(b)
		ix := e.open(fmt.Sprint("lake", i), listenSchema, "parquet", nil)
		if _, err := ix.AddFiles(ctx, uris...); err != nil {
			b.Fatal(err)
		}
		if err := ix.AddIndex(ctx, "user_id"); err != nil {
			b.Fatal(err)
		}
		if err := ix.AddBloomIndex(ctx, "track_uri", 0.01); err != nil {
			b.Fatal(err)
		}
		if err := ix.AddRangeIndex(ctx, "ts"); err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		hp := startHeapSampler(os.Getenv("ARIADNE_BENCH_HEAPPROF"))
		resetPeakRSS()
		b.StartTimer()
		t0, cpu0 := time.Now(), cpuTime()
		r, err := e.fi(ix).Update(ctx, UpdateOptions{engineOnly: engineOnly})
		el, cpu := time.Since(t0), cpuTime()-cpu0
		b.StopTimer()
		peak := hp.Stop()
		if err != nil {
			b.Fatal(err)
		}
		if r.NewFiles != len(files) {
			b.Fatalf("indexed %d of %d files", r.NewFiles, len(files))
		}
		b.Logf("update: %d batches in %s (%d files by the engine); stages %+v", r.Batches, el.Round(time.Millisecond), r.EngineFiles, r.Stages)
		b.Logf("CPU (user+system, whole process): bare scan %s, update %s", scanCPU.Round(time.Millisecond), cpu.Round(time.Millisecond))
		b.ReportMetric(cpu.Seconds()/scanCPU.Seconds(), "update/scan-cpu")
		b.ReportMetric(float64(total)/1e6/el.Seconds(), "update-MB/s")
		b.ReportMetric(float64(total)/1e6/scan.Seconds(), "scan-MB/s")
		b.ReportMetric(el.Seconds()/scan.Seconds(), "update/scan")
		b.ReportMetric(float64(peak)/(1<<20), "heap-peak-MiB")
		b.ReportMetric(float64(peakRSS())/(1<<20), "maxrss-MiB")
	}
}

// cpuTime is the process's user and system CPU time: on a machine shared
// with other work, wall times depend on the load, CPU times much less.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
