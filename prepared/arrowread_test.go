package prepared

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// TestArrowGoReadsEveryVariant: arrow-go's Parquet reader (pqarrow, the
// reader of Go programs that work in Arrow) returns exactly the rows
// written, in file order, for every prepared variant: pages of one key,
// packed pages, and every framed layout of frameVariants (a frame per key,
// aligned with skippable frames, grouped, and raw blocks).
func TestArrowGoReadsEveryVariant(t *testing.T) {
	ctx := context.Background()
	evs := genEvents(11, 8_000)
	var want []string
	for _, e := range sortedEvents(evs) {
		want = append(want, e.String())
	}
	st := fileStore(t)
	type variant struct {
		name string
		page int
		fo   *FrameOptions
	}
	vs := []variant{{"per-key", PageBytesPerKey, nil}, {"packed", 4096, nil}}
	for _, v := range frameVariants {
		vs = append(vs, variant{"framed-" + v.name, v.page, &v.fo})
	}
	for _, v := range vs {
		t.Run(v.name, func(t *testing.T) {
			schema, rows := eventRows(t, evs)
			opts := Options{Key: "user", Sort: []string{"ts"}, PageBytes: v.page, RowGroupRows: 3000}
			var err error
			if v.fo != nil {
				_, _, err = WriteFramed(ctx, st, v.name, schema, rows, opts, *v.fo)
			} else {
				_, err = Write(ctx, st, v.name, schema, rows, opts)
			}
			if err != nil {
				t.Fatal(err)
			}
			_, b := openFile(t, st, v.name)
			got := arrowRows(t, b)
			if len(got) != len(want) {
				t.Fatalf("arrow-go reads %d rows, %d written", len(got), len(want))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("row %d: arrow-go reads %s, written %s", i, got[i], want[i])
				}
			}
		})
	}
}

// arrowRows reads a file of events with arrow-go and renders each row as
// event.String does.
func arrowRows(t *testing.T, b []byte) []string {
	t.Helper()
	pr, err := file.NewParquetReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	fr, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{BatchSize: 1024}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tab, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tab.Release()
	tr := array.NewTableReader(tab, 1024)
	defer tr.Release()
	var out []string
	col := func(rec arrow.RecordBatch, name string) arrow.Array {
		idx := rec.Schema().FieldIndices(name)
		if len(idx) != 1 {
			t.Fatalf("no column %q in %v", name, rec.Schema())
		}
		return rec.Column(idx[0])
	}
	for tr.Next() {
		rec := tr.RecordBatch()
		user := col(rec, "user").(*array.Int64)
		ts := col(rec, "ts").(*array.Timestamp)
		name := col(rec, "name").(*array.String)
		score := col(rec, "score").(*array.Float64)
		n := col(rec, "n").(*array.Int32)
		blob := col(rec, "blob").(*array.Binary)
		tags := col(rec, "tags").(*array.List)
		tagVals := tags.ListValues().(*array.String)
		if unit := ts.DataType().(*arrow.TimestampType).Unit; unit != arrow.Microsecond {
			t.Fatalf("ts in %v, written in microseconds", unit)
		}
		for i := range int(rec.NumRows()) {
			u, nm := "null", "null"
			if user.IsValid(i) {
				u = fmt.Sprint(user.Value(i))
			}
			if name.IsValid(i) {
				nm = name.Value(i)
			}
			var tg []string
			lo, hi := tags.ValueOffsets(i)
			for k := lo; k < hi; k++ {
				tg = append(tg, tagVals.Value(int(k)))
			}
			out = append(out, fmt.Sprintf("%s|%d|%s|%v|%d|%x|%v", u, int64(ts.Value(i)), nm, score.Value(i), n.Value(i), blob.Value(i), tg))
		}
	}
	if err := tr.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
