package rowindexbench

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ariadne-go/ariadne/rowindex"
	"github.com/ariadne-go/ariadne/store"
)

// BenchmarkBuild profiles add-row-index's work (rowindex.Create on user_id)
// over the Parquet files under ARIADNE_BENCH_LAKE (for example a benchmark
// run's WORK/lake), into a temporary folder:
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
	for b.Loop() {
		idx, err := store.Open(ctx, "file://"+b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		man, _, err := rowindex.Create(ctx, idx, rowindex.Definition{Name: "b", Key: "user_id"}, rowindex.StoreResolver{Store: data}, uris)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(man.Entries()), "entries")
	}
}
