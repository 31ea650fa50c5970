package rowindexbench

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/bench/duckdb"
	"github.com/ariadne-go/ariadne/rowindex"
	"github.com/ariadne-go/ariadne/store"
)

// BenchmarkBuild profiles add-row-index's work (rowindex.Create on user_id)
// over the Parquet files under ARIADNE_BENCH_LAKE (for example a benchmark
// run's WORK/lake), into a temporary folder, against DuckDB's bare scan of
// the key column in the same run (build/keyscan; issue 10 asks ≤ 5):
//
//	ARIADNE_BENCH_LAKE=/tmp/rib/lake go test ./bench/rowindexbench -run '^$' -bench Build -benchtime 1x -cpuprofile cpu.out
func BenchmarkBuild(b *testing.B) {
	lake := os.Getenv("ARIADNE_BENCH_LAKE")
	if lake == "" {
		b.Skip("ARIADNE_BENCH_LAKE not set")
	}
	ctx := context.Background()
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
	eng, err := duckdb.Open(ctx, paths, "user_id")
	if err != nil {
		b.Fatal(err)
	}
	defer eng.Close()
	var scan, build time.Duration
	for b.Loop() {
		t0 := time.Now()
		if _, err := eng.KeyScan(ctx); err != nil {
			b.Fatal(err)
		}
		scan += time.Since(t0)
		t0 = time.Now()
		idx, err := store.Open(ctx, "file://"+b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		man, _, err := rowindex.Create(ctx, idx, rowindex.Definition{Name: "b", Key: "user_id"}, rowindex.StoreResolver{Store: data}, uris)
		if err != nil {
			b.Fatal(err)
		}
		build += time.Since(t0)
		b.ReportMetric(float64(man.Entries()), "entries")
	}
	b.ReportMetric(scan.Seconds()/float64(b.N), "duckdb-keyscan-s")
	b.ReportMetric(build.Seconds()/float64(b.N), "build-s")
	b.ReportMetric(build.Seconds()/scan.Seconds(), "build/keyscan")
}
