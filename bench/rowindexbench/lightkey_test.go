package rowindexbench

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/ariadne-go/ariadne/internal/lakegen"
	"github.com/ariadne-go/ariadne/rowindex"
	"github.com/ariadne-go/ariadne/store"
)

// BenchmarkLightKey profiles warm lookups of light keys (users far down the
// Zipf law: a few rows each) on the lake and index a benchmark run left in
// ARIADNE_BENCH_WORK (ariadne bench rowindex --work DIR):
//
//	ARIADNE_BENCH_WORK=/tmp/rib go test ./bench/rowindexbench -run '^$' -bench LightKey -cpuprofile cpu.out
func BenchmarkLightKey(b *testing.B) {
	work := os.Getenv("ARIADNE_BENCH_WORK")
	if work == "" {
		b.Skip("ARIADNE_BENCH_WORK not set")
	}
	ctx := context.Background()
	data, err := store.Open(ctx, "file://"+filepath.Join(work, "lake"))
	if err != nil {
		b.Fatal(err)
	}
	idx, err := store.Open(ctx, "file://"+filepath.Join(work, "index"))
	if err != nil {
		b.Fatal(err)
	}
	ri, err := rowindex.Open(ctx, idx, indexName, rowindex.Options{Resolver: rowindex.StoreResolver{Store: data}})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := ri.Warm(ctx); err != nil {
		b.Fatal(err)
	}
	var keys []any
	for u := uint64(50_000); u < 52_000; u++ {
		keys = append(keys, lakegen.UserID(u))
	}
	rows, bytes := 0, int64(0)
	for i := 0; b.Loop(); i++ {
		res, err := ri.Lookup(ctx, rowindex.Query{Key: keys[i%len(keys)]})
		if err != nil {
			b.Fatal(err)
		}
		rows += len(res.Rows)
		bytes += res.Plan.Data.BytesRead
	}
	b.ReportMetric(float64(rows)/float64(b.N), "rows/op")
	b.ReportMetric(float64(bytes)/float64(b.N), "databytes/op")
}
