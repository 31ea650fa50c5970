package rowindexbench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/bench/duckdb"
	"github.com/ariadne-go/ariadne/internal/lakegen"
	"github.com/ariadne-go/ariadne/prepared"
	"github.com/ariadne-go/ariadne/rowindex"
	"github.com/ariadne-go/ariadne/store"
)

// TestRowIndexMatchesDuckDB checks, on every generated layout and through
// both kinds of row index, that the row index returns exactly DuckDB's rows
// (values, compared as text) for the top users, cold users and an absent
// one, with and without a limit. The prepared layouts (framed, co-grouped)
// are looked up in the prepared files, DuckDB reads their source.
func TestRowIndexMatchesDuckDB(t *testing.T) {
	ctx := context.Background()
	for _, layout := range Layouts {
		for _, kind := range []rowindex.Kind{rowindex.KindHash, rowindex.KindSorted} {
			t.Run(layout+"/"+string(kind), func(t *testing.T) {
				dir := t.TempDir()
				data, _ := store.Open(ctx, "file://"+dir)
				c, err := LakeConfig(layout, 1)
				if err != nil {
					t.Fatal(err)
				}
				c.Seed, c.Days, c.FilesPerDay, c.Users = 3, 2, 2, 3000
				if layout != LayoutSkewed {
					c.RowGroupRows, c.PageBytes = 5000, 8<<10
				}
				files, err := lakegen.Generate(ctx, data, c)
				if err != nil {
					t.Fatal(err)
				}
				var uris, paths []string
				for _, f := range files {
					uris = append(uris, f.Key)
					paths = append(paths, filepath.Join(dir, f.Key))
				}
				if sourced(layout) {
					out := t.TempDir()
					if uris, err = ensureFramed(ctx, dir, out, c, prepared.DefaultMinFrameBytes, layout == LayoutCoGrouped, io.Discard); err != nil {
						t.Fatal(err)
					}
					data, _ = store.Open(ctx, "file://"+out)
				}
				idx, _ := store.Open(ctx, "mem://")
				if _, _, err := rowindex.Create(ctx, idx, rowindex.Definition{Name: "u", Key: keyColumn, Kind: kind}, rowindex.StoreResolver{Store: data}, uris); err != nil {
					t.Fatal(err)
				}
				ri, err := rowindex.Open(ctx, idx, "u", rowindex.Options{Resolver: rowindex.StoreResolver{Store: data}})
				if err != nil {
					t.Fatal(err)
				}
				eng, err := duckdb.Open(ctx, paths, keyColumn)
				if err != nil {
					t.Fatal(err)
				}
				defer eng.Close()
				keys := []int64{lakegen.UserID(0), lakegen.UserID(1), lakegen.UserID(2999), 42}
				for r := uint64(3); r < 3000; r += 397 {
					keys = append(keys, lakegen.UserID(r))
				}
				for _, k := range keys {
					want, err := eng.Rows(ctx, k, 0)
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
					lim, err := ri.Lookup(ctx, rowindex.Query{Key: k, Limit: 10})
					if err != nil {
						t.Fatal(err)
					}
					if n, err := eng.Count(ctx, k, 10); err != nil || len(lim.Rows) != n {
						t.Fatalf("user %d, limit 10: row index %d rows, DuckDB %d (%v)", k, len(lim.Rows), n, err)
					}
				}
			})
		}
	}
}

// TestBenchReport runs the full benchmark and prints the tables of
// docs/rowindex-bench.md. It runs only when ARIADNE_BENCH_DIR names a
// folder (the lake is generated there once and reused). ARIADNE_BENCH_MB
// sets the lake size (default 1024), ARIADNE_BENCH_LAYOUT the layout
// (default sorted), ARIADNE_BENCH_KIND=hash looks up through a hash row
// index, ARIADNE_BENCH_TIMEOUT (a Go duration) cuts each lookup. The report
// is also written as JSON to ARIADNE_BENCH_DIR/report.json, the input of
// the chart (bench/rowindexbench/benchchart):
//
//	ARIADNE_BENCH_DIR=/tmp/ribench go test ./bench/rowindexbench -run TestBenchReport -v -timeout 2h
//	go run ./bench/rowindexbench/benchchart -in /tmp/ribench/report.json -out docs/rowindex-bench.svg
func TestBenchReport(t *testing.T) {
	dir := os.Getenv("ARIADNE_BENCH_DIR")
	if dir == "" {
		t.Skip("set ARIADNE_BENCH_DIR to run the benchmark")
	}
	mb := 1024
	if s := os.Getenv("ARIADNE_BENCH_MB"); s != "" {
		var err error
		if mb, err = strconv.Atoi(s); err != nil {
			t.Fatal(err)
		}
	}
	var timeout time.Duration
	if s := os.Getenv("ARIADNE_BENCH_TIMEOUT"); s != "" {
		var err error
		if timeout, err = time.ParseDuration(s); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := Run(context.Background(), Config{
		Dir: dir, Layout: os.Getenv("ARIADNE_BENCH_LAYOUT"), SizeMB: mb, Kind: rowindex.Kind(os.Getenv("ARIADNE_BENCH_KIND")),
		Overview: true, Classes: ClassConfig{Timeout: timeout}, Progress: os.Stderr,
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
