package delta

import (
	"context"
	"testing"
)

// BenchmarkAppend appends 100 000 rows (4 columns) to a mem:// table per
// iteration, one commit each.
func BenchmarkAppend(b *testing.B) {
	ctx := context.Background()
	s := memStore(b)
	tb := newTable(b, s)
	rows := rowsOf(0, 100_000, "")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tb.Append(ctx, Rows(rows), WriteOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(rows))*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkUpsert updates 100 keys spread over a 20-file table and inserts
// 100; stats pruning limits the rewrite to the files holding the keys.
func BenchmarkUpsert(b *testing.B) {
	ctx := context.Background()
	s := memStore(b)
	tb := newTable(b, s)
	for i := int64(0); i < 20; i++ {
		if _, err := tb.Append(ctx, Rows(rowsOf(i*5000, i*5000+5000, "")), WriteOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	next := int64(1_000_000)
	for b.Loop() {
		var src [][]any
		for k := int64(0); k < 100; k++ {
			src = append(src, row(k, "updated", ""), row(next, "new", ""))
			next++
		}
		res, err := tb.Upsert(ctx, []string{"id"}, Rows(src), WriteOptions{})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(res.FilesRemoved), "files-rewritten")
	}
}
