package fileindex

import (
	"context"
	"fmt"
	"iter"
	"runtime"
	"testing"

	"github.com/ariadne-go/ariadne/delta"
	"github.com/ariadne-go/ariadne/index"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/store"
)

// benchFiles is the index size of issue 3 item 4: 100,000 indexed files.
const benchFiles = 100_000

// benchValuesPerFile: each synthetic file holds 10 distinct Ids, so the
// main table has 1,000,000 (file, value) pairs.
const benchValuesPerFile = 10

// BenchmarkLocate locates 1, 100 and 1,000 keys among 100,000 indexed
// files (issue 3 item 4) and reports the storage requests per query, which
// must stay at one List once the view of the table version is warm. The
// "cold" case includes loading the view (scanning the Id column once).
func BenchmarkLocate(b *testing.B) {
	ctx := context.Background()
	ti := newTestIndex(b, "bench", `{"type":"struct","fields":[{"name":"Id","type":"long","nullable":true,"metadata":{}}]}`, "parquet", nil,
		func(ix *index.Index) error { return ix.AddIndex(ctx, "Id") })
	st := &schema.Struct{Fields: []schema.Field{
		{Name: FilenameColumn, Type: schema.String, Nullable: true},
		{Name: "Id", Type: &schema.Array{Element: schema.Long, ContainsNull: true}, Nullable: true},
		{Name: FileSizeColumn, Type: schema.Long, Nullable: true},
	}}
	tbl, err := delta.Create(ctx, store.Sub(ti.root, ti.ix.Paths().Main), st, delta.CreateOptions{})
	if err != nil {
		b.Fatal(err)
	}
	rows := iter.Seq2[[]any, error](func(yield func([]any, error) bool) {
		for f := range benchFiles {
			ids := make([]any, benchValuesPerFile)
			for j := range ids {
				ids[j] = int64(f*benchValuesPerFile + j)
			}
			if !yield([]any{fmt.Sprintf("s3://bucket/lake/part-%06d.parquet", f), ids, int64(1 << 20)}, nil) {
				return
			}
		}
	})
	if _, err := tbl.Append(ctx, rows, delta.WriteOptions{}); err != nil {
		b.Fatal(err)
	}
	query := func(keys int) Query {
		vals := make([]any, keys)
		for i := range vals {
			// Spread the keys over the whole table.
			vals[i] = int64(i * (benchFiles * benchValuesPerFile / keys))
		}
		return Query{"Id": vals}
	}
	run := func(b *testing.B, fi *FileIndex, q Query, want int) {
		if _, err := fi.Locate(ctx, q); err != nil { // warm the view
			b.Fatal(err)
		}
		before := ti.root.Snapshot()
		b.ResetTimer()
		for b.Loop() {
			got, err := fi.Locate(ctx, q)
			if err != nil {
				b.Fatal(err)
			}
			if len(got) != want {
				b.Fatalf("located %d files, want %d", len(got), want)
			}
		}
		d := ti.root.Snapshot().Sub(before)
		b.ReportMetric(float64(d.Total.Requests)/float64(b.N), "requests/query")
		b.ReportMetric(float64(d.Read.Bytes)/float64(b.N), "readbytes/query")
	}
	b.Run("cold", func(b *testing.B) {
		var heap float64
		for b.Loop() {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			fi := New(ti.ix, Options{})
			if _, err := fi.Locate(ctx, query(1)); err != nil {
				b.Fatal(err)
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			heap = float64(after.HeapAlloc) - float64(before.HeapAlloc)
			runtime.KeepAlive(fi)
		}
		// The retained heap of one warm view (file list + the Id column).
		b.ReportMetric(heap/(1<<20), "viewMiB")
	})
	fi := New(ti.ix, Options{})
	for _, keys := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("keys=%d", keys), func(b *testing.B) {
			run(b, fi, query(keys), keys)
		})
	}
}
