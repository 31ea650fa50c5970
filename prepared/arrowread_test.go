package prepared

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/parquet-go/parquet-go"
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

// arrowTable reads a whole file with arrow-go (pqarrow) and returns a
// reader of its record batches, released when the test ends.
func arrowTable(t *testing.T, b []byte) *array.TableReader {
	t.Helper()
	pr, err := file.NewParquetReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pr.Close() })
	fr, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{BatchSize: 1024}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tab, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tr := array.NewTableReader(tab, 1024)
	t.Cleanup(func() {
		tr.Release()
		tab.Release()
	})
	return tr
}

// arrowRows reads a file of events with arrow-go and renders each row as
// event.String does.
func arrowRows(t *testing.T, b []byte) []string {
	t.Helper()
	tr := arrowTable(t, b)
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

// TestArrowGoReadsCoGrouped: arrow-go reads a co-grouped blob file
// (BlobCodecZstdDict: a DELTA_LENGTH_BYTE_ARRAY blob column of
// ariadne-block-3 frames) as the key and a binary column whose values are
// parquet-go's, value for value, and whose blocks decode to every source
// row, each block's rows holding its stored row's key.
func TestArrowGoReadsCoGrouped(t *testing.T) {
	type rec struct {
		K  int64   `parquet:"k"`
		TS int64   `parquet:"ts"`
		S  *string `parquet:"s,optional"`
	}
	var src []rec
	for i := range 3000 {
		r := rec{K: int64(i*7919) % 400, TS: 1_717_200_000_000 + int64(i)*1000}
		if i%5 != 0 {
			s := fmt.Sprintf("spotify:track:%08d", i*31%977)
			r.S = &s
		}
		src = append(src, r)
	}
	buf := parquet.NewGenericBuffer[rec]()
	if _, err := buf.Write(src); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st := fileStore(t)
	opts := Options{Key: "k", Sort: []string{"ts"}, Blob: &BlobOptions{Column: "served", Fields: []string{"ts", "s"}, Codec: BlobCodecZstdDict}}
	if _, _, err := WriteFramed(ctx, st, "cg", buf.Schema(), buf.Rows(), opts, DefaultFrameOptions()); err != nil {
		t.Fatal(err)
	}
	f, b := openFile(t, st, "cg")
	blob, ok, err := BlobOf(f)
	if !ok || err != nil || blob.Marker.Encoding != BlobBlockEncoding3 {
		t.Fatalf("blob %v %v", ok, err)
	}
	// parquet-go's values, in file order.
	var pgo [][]byte
	rr := parquet.NewReader(f)
	for {
		rows := make([]parquet.Row, 64)
		n, err := rr.ReadRows(rows)
		for _, r := range rows[:n] {
			pgo = append(pgo, slices.Clone(r[1].ByteArray()))
		}
		if err != nil {
			break
		}
	}
	tr := arrowTable(t, b)
	stored, rows := 0, 0
	for tr.Next() {
		r := tr.RecordBatch()
		keys := r.Column(r.Schema().FieldIndices("k")[0]).(*array.Int64)
		vals := r.Column(r.Schema().FieldIndices("served")[0]).(*array.Binary)
		for i := range int(r.NumRows()) {
			v := vals.Value(i)
			if stored >= len(pgo) || !bytes.Equal(v, pgo[stored]) {
				t.Fatalf("stored row %d: arrow-go's value is not parquet-go's", stored)
			}
			block, err := blob.DecodeBlock(nil, v)
			if err != nil {
				t.Fatalf("stored row %d: %v", stored, err)
			}
			for _, br := range block {
				if br[blob.KeyAt()].Int64() != keys.Value(i) {
					t.Fatalf("stored row %d: a row of key %d in key %d's block", stored, br[blob.KeyAt()].Int64(), keys.Value(i))
				}
			}
			stored++
			rows += len(block)
		}
	}
	if err := tr.Err(); err != nil {
		t.Fatal(err)
	}
	if stored != len(pgo) || rows != len(src) || stored >= rows {
		t.Fatalf("arrow-go: %d stored rows (parquet-go %d) of %d rows, %d written", stored, len(pgo), rows, len(src))
	}
}

// TestArrowGoReadsNested: arrow-go reads a nested co-grouped file
// (Options.CoGroup) as a key column and one LIST per other column, and the
// lists, walked stored row by stored row, give exactly the source rows in
// the file's order (key, then ts), nulls in place; every stored row's lists
// have the same length.
func TestArrowGoReadsNested(t *testing.T) {
	type rec struct {
		K    int64   `parquet:"k"`
		TS   int64   `parquet:"ts"`
		S    *string `parquet:"s,optional"`
		D    float64 `parquet:"d"`
		Flag bool    `parquet:"flag"`
	}
	var src []rec
	for i := range 5000 {
		r := rec{K: int64(i*7919) % 300, TS: 1_717_200_000_000 + int64(i)*1000, D: float64(i) / 8, Flag: i%3 == 0}
		if i%2 == 0 {
			r.K = 7 // a heavy key, cut into several stored rows
		}
		if i%5 != 0 {
			s := fmt.Sprintf("spotify:track:%08d", i*31%977)
			r.S = &s
		}
		src = append(src, r)
	}
	buf := parquet.NewGenericBuffer[rec]()
	if _, err := buf.Write(src); err != nil {
		t.Fatal(err)
	}
	render := func(k, ts int64, s *string, d float64, flag bool) string {
		str := "null"
		if s != nil {
			str = *s
		}
		return fmt.Sprintf("%d|%d|%s|%v|%v", k, ts, str, d, flag)
	}
	want := make([]string, 0, len(src))
	slices.SortStableFunc(src, func(a, b rec) int {
		if c := cmp.Compare(a.K, b.K); c != 0 {
			return c
		}
		return cmp.Compare(a.TS, b.TS)
	})
	for _, r := range src {
		want = append(want, render(r.K, r.TS, r.S, r.D, r.Flag))
	}
	ctx := context.Background()
	st := fileStore(t)
	if _, err := Write(ctx, st, "nested", buf.Schema(), buf.Rows(), Options{Key: "k", Sort: []string{"ts"}, CoGroup: true, RowGroupRows: 1000}); err != nil {
		t.Fatal(err)
	}
	_, b := openFile(t, st, "nested")
	tr := arrowTable(t, b)
	var got []string
	stored := 0
	for tr.Next() {
		r := tr.RecordBatch()
		col := func(name string) arrow.Array {
			idx := r.Schema().FieldIndices(name)
			if len(idx) != 1 {
				t.Fatalf("no column %q in %v", name, r.Schema())
			}
			return r.Column(idx[0])
		}
		keys := col("k").(*array.Int64)
		lists := []*array.List{col("ts").(*array.List), col("s").(*array.List), col("d").(*array.List), col("flag").(*array.List)}
		ts := lists[0].ListValues().(*array.Int64)
		ss := lists[1].ListValues().(*array.String)
		ds := lists[2].ListValues().(*array.Float64)
		flags := lists[3].ListValues().(*array.Boolean)
		for i := range int(r.NumRows()) {
			stored++
			lo, hi := lists[0].ValueOffsets(i)
			for _, l := range lists[1:] {
				if llo, lhi := l.ValueOffsets(i); lhi-llo != hi-lo {
					t.Fatalf("stored row %d: lists of %d and %d values", stored, hi-lo, lhi-llo)
				}
			}
			slo, _ := lists[1].ValueOffsets(i)
			dlo, _ := lists[2].ValueOffsets(i)
			flo, _ := lists[3].ValueOffsets(i)
			for j := range hi - lo {
				var s *string
				if ss.IsValid(int(slo + j)) {
					v := ss.Value(int(slo + j))
					s = &v
				}
				got = append(got, render(keys.Value(i), ts.Value(int(lo+j)), s, ds.Value(int(dlo+j)), flags.Value(int(flo+j))))
			}
		}
	}
	if err := tr.Err(); err != nil {
		t.Fatal(err)
	}
	keys := map[int64]bool{}
	for _, r := range src {
		keys[r.K] = true
	}
	if stored <= len(keys) || stored >= len(src) {
		t.Fatalf("%d stored rows for %d source rows of %d keys, one of them heavy", stored, len(src), len(keys))
	}
	if len(got) != len(want) {
		t.Fatalf("arrow-go reads %d rows, %d written", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("row %d: arrow-go reads %s, written %s", i, got[i], want[i])
		}
	}
}
