package fileindexbench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/config"
	"github.com/ariadne-go/ariadne/fileindex"
	"github.com/ariadne-go/ariadne/index"
	"github.com/ariadne-go/ariadne/internal/lakegen"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/store"
)

// BenchmarkColdLocate measures the first locate of a fresh FileIndex handle
// on the lake benchmark's index (user_id regular, track_uri bloom 1 %, ts
// range), answered from the locate snapshot and, in the same run, by the
// scan of the main table (the path every cold locate took before, forced
// with fileindex.Options.IgnoreLocateSnapshots); and warm
// locates (new keys on a handle whose view answered two queries) on both
// paths. It also writes the keys of one query of 1 and of 1,000 keys to
// DIR/keys-N.csv for timing the CLI on the same index. It needs
// ARIADNE_BENCH_DIR: the lake is generated (or reused) in DIR/lake and the
// index built once in DIR/coldlocate (reused by later runs; an update with
// nothing to do writes a missing snapshot). ARIADNE_BENCH_MB sizes the lake
// (default 1250, the lake).
//
//	ARIADNE_BENCH_DIR=/tmp/fibench go test ./bench/fileindexbench -run '^$' -bench '^BenchmarkColdLocate$' -benchtime 5x -timeout 1h
func BenchmarkColdLocate(b *testing.B) {
	dir := os.Getenv("ARIADNE_BENCH_DIR")
	if dir == "" {
		b.Skip("set ARIADNE_BENCH_DIR to run the cold-locate benchmark")
	}
	ctx := context.Background()
	lake := DefaultLake()
	if mb, err := strconv.Atoi(os.Getenv("ARIADNE_BENCH_MB")); err == nil && mb > 0 {
		lake.TargetBytes = int64(mb) * 1e6
	}
	ix, root := coldLocateIndex(b, ctx, dir, lake)
	keys := newKeyGen(lake)
	for _, n := range []int{1, 1000} {
		writeBenchKeys(b, filepath.Join(dir, fmt.Sprintf("keys-%d.csv", n)), keys.query(n))
		for _, mode := range []string{"cold-snapshot", "cold-scan", "warm-snapshot", "warm-scan"} {
			b.Run(fmt.Sprintf("keys=%d/%s", n, mode), func(b *testing.B) {
				scan := strings.HasSuffix(mode, "scan")
				warm := strings.HasPrefix(mode, "warm")
				var fi *fileindex.FileIndex
				if warm {
					fi = fileindex.New(ix, fileindex.Options{IgnoreLocateSnapshots: scan})
					// Two queries: the second loads what the first left
					// unread (the snapshot's blocks are read lazily), as in any long-lived process.
					for range 2 {
						if _, err := fi.Locate(ctx, fileindex.Query{"user_id": keys.query(n)}); err != nil {
							b.Fatal(err)
						}
					}
				}
				var reqs, bytes, files int64
				b.ResetTimer()
				for range b.N {
					b.StopTimer()
					if !warm {
						runtime.GC()
						fi = fileindex.New(ix, fileindex.Options{IgnoreLocateSnapshots: scan})
					}
					q := fileindex.Query{"user_id": keys.query(n)}
					before := root.Snapshot()
					b.StartTimer()
					got, plan, err := fi.LocateWithPlan(ctx, q)
					b.StopTimer()
					if err != nil {
						b.Fatal(err)
					}
					if plan.Snapshot == scan {
						b.Fatalf("%s: plan %+v", mode, plan)
					}
					d := root.Snapshot().Sub(before)
					reqs += d.Total.Requests
					bytes += d.Read.Bytes
					files += int64(len(got))
				}
				b.ReportMetric(float64(reqs)/float64(b.N), "requests/op")
				b.ReportMetric(float64(bytes)/float64(b.N), "indexbytes/op")
				b.ReportMetric(float64(files)/float64(b.N), "files/op")
			})
		}
	}
}

// writeBenchKeys writes keys as a user_id CSV, for timing the CLI on the
// same index (ariadne locate listens --keys FILE).
func writeBenchKeys(b *testing.B, path string, keys []any) {
	var sb strings.Builder
	sb.WriteString("user_id\n")
	for _, k := range keys {
		fmt.Fprintf(&sb, "%v\n", k)
	}
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
}

// coldLocateIndex opens (building it the first time) the benchmark index on
// the lake and runs an update, which has nothing to do but writes the
// locate snapshot of the current version when it is missing.
func coldLocateIndex(b *testing.B, ctx context.Context, dir string, lake lakegen.Config) (*index.Index, *store.Counting) {
	b.Helper()
	lakeDir := filepath.Join(dir, "lake")
	files, err := lakegen.Ensure(ctx, lakeDir, lake, os.Stderr)
	if err != nil {
		b.Fatal(err)
	}
	idxDir := filepath.Join(dir, "coldlocate")
	if err := os.MkdirAll(idxDir, 0o755); err != nil {
		b.Fatal(err)
	}
	base, err := store.Open(ctx, "file://"+idxDir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { base.Close() })
	root := store.NewCounting(base)
	src, err := schema.Parse(LakeSchema)
	if err != nil {
		b.Fatal(err)
	}
	cat := index.NewCatalog(root, index.Options{Config: config.Defaults()})
	_, statErr := os.Stat(filepath.Join(idxDir, "indexes", "listens", "metadata.json"))
	ix, err := cat.Open(ctx, "listens", index.OpenOptions{Schema: src, Format: "parquet"})
	if err != nil {
		b.Fatal(err)
	}
	if statErr != nil {
		uris := make([]string, len(files))
		for i, f := range files {
			uris[i] = "file://" + filepath.Join(lakeDir, filepath.FromSlash(f.Key))
		}
		if _, err := ix.AddFiles(ctx, uris...); err != nil {
			b.Fatal(err)
		}
		for _, err := range []error{ix.AddIndex(ctx, "user_id"), ix.AddBloomIndex(ctx, "track_uri", 0.01), ix.AddRangeIndex(ctx, "ts")} {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	t0 := time.Now()
	before := root.Snapshot()
	if _, err := fileindex.New(ix, fileindex.Options{}).Update(ctx, fileindex.UpdateOptions{}); err != nil {
		b.Fatal(err)
	}
	d := root.Snapshot().Sub(before)
	b.Logf("update (writes a missing locate snapshot): %s, %d requests, %d bytes written", time.Since(t0).Round(time.Millisecond), d.Total.Requests, d.Write.Bytes)
	return ix, root
}
