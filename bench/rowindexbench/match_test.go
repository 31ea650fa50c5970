package duckbench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/internal/lakegen"
	"github.com/ariadne-go/ariadne/rowindex"
	"github.com/ariadne-go/ariadne/store"
)

// TestRowIndexMatchesDuckDB checks, on the three layouts (arrival order,
// bucketed and sorted, prepared) and through both kinds of row index, that
// the row index returns exactly DuckDB's rows for hot, cold and absent users.
func TestRowIndexMatchesDuckDB(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		layout           string
		sorted, prepared bool
		kind             rowindex.Kind
	}{
		{"arrival", false, false, rowindex.KindHash},
		{"arrival", false, false, rowindex.KindSorted},
		{"sorted", true, false, rowindex.KindHash},
		{"sorted", true, false, rowindex.KindSorted},
		{"prepared", false, true, rowindex.KindSorted},
	} {
		t.Run(tc.layout+"/"+string(tc.kind), func(t *testing.T) {
			dir := t.TempDir()
			data, _ := store.Open(ctx, "file://"+dir)
			files, err := lakegen.Generate(ctx, data, lakegen.Config{Seed: 3, TargetBytes: 2 << 20, Days: 2, FilesPerDay: 2,
				Users: 3000, Sorted: tc.sorted, Prepared: tc.prepared, RowGroupRows: 5000, PageBytes: 8 << 10})
			if err != nil {
				t.Fatal(err)
			}
			var uris, paths []string
			for _, f := range files {
				uris = append(uris, f.Key)
				paths = append(paths, filepath.Join(dir, f.Key))
			}
			idx, _ := store.Open(ctx, "mem://")
			if _, _, err := rowindex.Create(ctx, idx, rowindex.Definition{Name: "u", Key: "user_id", Kind: tc.kind}, rowindex.StoreResolver{Store: data}, uris); err != nil {
				t.Fatal(err)
			}
			ri, err := rowindex.Open(ctx, idx, "u", rowindex.Options{Resolver: rowindex.StoreResolver{Store: data}})
			if err != nil {
				t.Fatal(err)
			}
			eng, err := Open(ctx, paths)
			if err != nil {
				t.Fatal(err)
			}
			defer eng.Close()
			keys := []int64{lakegen.UserID(0), lakegen.UserID(1), lakegen.UserID(2999), 42}
			for r := uint64(3); r < 3000; r += 397 {
				keys = append(keys, lakegen.UserID(r))
			}
			for _, k := range keys {
				want, err := eng.Rows(ctx, k)
				if err != nil {
					t.Fatal(err)
				}
				res, err := ri.Lookup(ctx, rowindex.Query{Key: k})
				if err != nil {
					t.Fatal(err)
				}
				var got, exp []string
				for _, r := range res.Rows {
					v := r.Values
					got = append(got, fmt.Sprintf("%d|%d|%s|%d|%s", v[0].Int64(), v[1].Int64(), v[2].ByteArray(), v[3].Int32(), v[4].ByteArray()))
				}
				for _, r := range want {
					exp = append(exp, fmt.Sprintf("%d|%d|%s|%d|%s", r[0], r[1].(time.Time).UnixMicro(), r[2], r[3], r[4]))
				}
				slices.Sort(got)
				slices.Sort(exp)
				if strings.Join(got, "\n") != strings.Join(exp, "\n") {
					t.Fatalf("user %d: row index %d rows, DuckDB %d rows, or values differ", k, len(got), len(exp))
				}
			}
		})
	}
}

// TestBenchReport runs the full benchmark with DuckDB and prints the tables
// of docs/rowindex.md. It runs only when ARIADNE_BENCH_DIR names a folder
// (the lake is generated there once and reused); ARIADNE_BENCH_MB sets the
// lake size (default 1024), ARIADNE_BENCH_LAYOUT=arrival benchmarks the
// unsorted (arrival-order) layout and =prepared the prepared one (bucketed,
// sorted, key-aligned pages) instead of the bucketed, sorted one, and
// ARIADNE_BENCH_KIND=hash looks up through a hash row index. The
// report is also written as JSON to ARIADNE_BENCH_DIR/report.json, the input
// of the chart (rowindex/internal/benchchart):
//
//	ARIADNE_BENCH_DIR=/tmp/ribench go test ./rowindex/internal/duckbench -run TestBenchReport -v -timeout 2h
//	go run ./rowindex/internal/benchchart -in /tmp/ribench/report.json -out docs/rowindex-bench.svg
func TestBenchReport(t *testing.T) {
	dir := os.Getenv("ARIADNE_BENCH_DIR")
	if dir == "" {
		t.Skip("set ARIADNE_BENCH_DIR to run the benchmark")
	}
	lake := lakegen.DefaultConfig()
	switch layout := os.Getenv("ARIADNE_BENCH_LAYOUT"); layout {
	case "", "sorted":
		lake.Sorted = true
	case "prepared":
		lake.Prepared = true
	case "arrival":
	default:
		t.Fatalf("ARIADNE_BENCH_LAYOUT=%s: want sorted, prepared or arrival", layout)
	}
	if s := os.Getenv("ARIADNE_BENCH_MB"); s != "" {
		var mb int64
		fmt.Sscan(s, &mb)
		lake.TargetBytes = mb << 20
	}
	rep, err := rowindex.Bench(context.Background(), rowindex.BenchConfig{
		Dir: dir, Lake: lake, Kind: rowindex.Kind(os.Getenv("ARIADNE_BENCH_KIND")), External: []rowindex.ExternalFactory{Factory}, Progress: os.Stderr,
	})
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	rep.Format(&sb)
	t.Log("\n" + sb.String())
	b, err := json.MarshalIndent(rep, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "report.json"), append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}
