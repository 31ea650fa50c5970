package prepared

import (
	"bytes"
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	arrowpq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/ariadne-go/ariadne/store"
)

// arrowFile writes ids as a Parquet file with arrow-go's writer and its
// defaults. With no ids it writes what Arrow writes for an empty table: one
// row group of 0 rows whose chunks hold only an empty dictionary page (data
// page offset 0).
func arrowFile(t *testing.T, ids []int64) []byte {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for _, id := range ids {
		b.Field(0).(*array.Int64Builder).Append(id)
		b.Field(1).(*array.StringBuilder).Append("n")
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	fw, err := pqarrow.NewFileWriter(sc, &buf, arrowpq.NewWriterProperties(), pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := fw.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestPrepareEmptySource: a valid 0-row file (Arrow's empty row group, which
// failed with "Seek: invalid offset") is prepared alone (no bucket files, a
// finished manifest) and beside a file with rows (their rows only).
func TestPrepareEmptySource(t *testing.T) {
	ctx := context.Background()
	src := fileStore(t)
	if err := store.WriteAll(ctx, src, "empty.parquet", arrowFile(t, nil), nil); err != nil {
		t.Fatal(err)
	}
	if err := store.WriteAll(ctx, src, "three.parquet", arrowFile(t, []int64{3, 1, 2}), nil); err != nil {
		t.Fatal(err)
	}
	dst := fileStore(t)
	st, err := PrepareFiles(ctx, storeResolver{src}, []Source{{URI: "empty.parquet"}}, dst, Options{Key: "id"})
	if err != nil {
		t.Fatalf("0-row source: %v", err)
	}
	if st.Rows != 0 || len(st.Files) != 0 {
		t.Errorf("0-row source: %d rows in %d files, want none", st.Rows, len(st.Files))
	}
	if _, err := ReadManifest(ctx, dst); err != nil {
		t.Errorf("0-row source: no finished manifest: %v", err)
	}
	dst = fileStore(t)
	st, err = PrepareFiles(ctx, storeResolver{src}, []Source{{URI: "empty.parquet"}, {URI: "three.parquet"}}, dst, Options{Key: "id"})
	if err != nil {
		t.Fatalf("0-row source beside another: %v", err)
	}
	if st.Rows != 3 {
		t.Errorf("rows %d, want 3", st.Rows)
	}
}
