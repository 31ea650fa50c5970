package fileindexbench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/config"
	"github.com/ariadne-go/ariadne/fileindex"
	"github.com/ariadne-go/ariadne/index"
	"github.com/ariadne-go/ariadne/internal/lakegen"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/store"
)

// hugeSchema is the CSV schema of BenchmarkUpdateHugeValueSet.
const hugeSchema = `{"type":"struct","fields":[{"name":"Id","type":"integer","nullable":true,"metadata":{}},{"name":"Version","type":"integer","nullable":true,"metadata":{}},{"name":"Category","type":"string","nullable":true,"metadata":{}},{"name":"Value","type":"double","nullable":true,"metadata":{}}]}`

// openIndex creates index name (schema js, format, read options) in a new
// catalog on a file:// root in a temporary folder, with cfg.
func openIndex(b *testing.B, cfg config.Config, name, js, format string, ro map[string]string) *index.Index {
	b.Helper()
	ctx := context.Background()
	root, err := store.Open(ctx, "file://"+b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { root.Close() })
	st, err := schema.Parse(js)
	if err != nil {
		b.Fatal(err)
	}
	ix, err := index.NewCatalog(root, index.Options{Config: cfg}).Open(ctx, name, index.OpenOptions{Schema: st, Format: format, ReadOptions: ro})
	if err != nil {
		b.Fatal(err)
	}
	return ix
}

// BenchmarkUpdateHugeValueSet indexes one CSV file holding millions of
// distinct values of two columns with L = 1,000 (§12 item 8): both pairs
// are large, so their values stream from the engine into large_indexes/
// and through the auto-bloom filters without any per-file array. It reports
// the Go heap peak and the process's peak RSS (Go + DuckDB).
//
//	go test ./bench/fileindexbench -run '^$' -bench UpdateHugeValueSet -benchtime 1x
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
	uri := "file://" + path // b.TempDir is absolute
	info, _ := os.Stat(path)
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		cfg := config.Defaults()
		cfg.LargeIndexLimit = 1000
		ix := openIndex(b, cfg, fmt.Sprint("huge", i), hugeSchema, "csv", map[string]string{"header": "true"})
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
		res, err := fileindex.New(ix, fileindex.Options{}).Update(ctx, fileindex.UpdateOptions{})
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

// BenchmarkUpdateLake is the issue-3 update benchmark: a ~1 GB lake of 300
// Parquet files (lakegen's listening history, generated into a temporary
// folder first) indexed with a regular index on user_id, a bloom index on
// track_uri and a range index on ts. It reports the update's input MB/s,
// the MB/s of a bare scan of the same three columns with the same reader,
// their ratio, and memory peaks.
//
//	ARIADNE_BENCH_LAKE_BYTES=1000000000 go test ./bench/fileindexbench -run '^$' -bench UpdateLake -benchtime 1x -timeout 60m
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

	// The bare scan: the same columns, the same reader, one file at a time
	// (Run's baseline).
	src, err := schema.Parse(LakeSchema)
	if err != nil {
		b.Fatal(err)
	}
	scanCPU0 := cpuTime()
	scan, err := bareScan(ctx, src, []string{"user_id", "track_uri", "ts"}, uris)
	if err != nil {
		b.Fatal(err)
	}
	scanCPU := cpuTime() - scanCPU0
	b.Logf("bare scan: %s", scan.Round(time.Millisecond))

	for i := 0; i < b.N; i++ {
		b.StopTimer()
		ix := openIndex(b, config.Defaults(), fmt.Sprint("lake", i), LakeSchema, "parquet", nil)
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
		r, err := fileindex.New(ix, fileindex.Options{}).Update(ctx, fileindex.UpdateOptions{})
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
