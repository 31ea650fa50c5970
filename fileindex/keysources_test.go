package fileindex

import (
	"context"
	"database/sql"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	_ "github.com/duckdb/duckdb-go/v2" // registers the "duckdb" database/sql driver

	"github.com/ariadne-go/ariadne/index"
)

// TestJoinFromDuckDBAndArrow joins table1 (indexed on Id and Version) with
// keys that come from a DuckDB relation on the caller's own database and
// from an Arrow record reader: both give the same answer as in-memory rows.
func TestJoinFromDuckDBAndArrow(t *testing.T) {
	ctx := context.Background()
	ti := table1Index(t, func(ix *index.Index) error {
		if err := ix.AddIndex(ctx, "Id"); err != nil {
			return err
		}
		return ix.AddIndex(ctx, "Version")
	})
	join := func(src KeySource) ([]string, []string) {
		t.Helper()
		r, err := ti.fi.Join(ctx, src, []string{"Id", "Version"}, Inner, JoinOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return drain(t, r)
	}
	wantCols, wantRows := join(keys("Id,Version", intInt, []any{int32(1), int32(1)}, []any{int32(4), int32(2)}))
	if len(wantRows) != 2 {
		t.Fatalf("reference join: %v", wantRows)
	}

	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT * FROM (VALUES (1, 1), (4, 2)) AS t("Id", "Version")`)
	if err != nil {
		t.Fatal(err)
	}
	src, err := SQLSource(rows)
	if err != nil {
		t.Fatal(err)
	}
	if cols, got := join(src); !slices.Equal(cols, wantCols) || !slices.Equal(sorted(got), sorted(wantRows)) {
		t.Errorf("DuckDB keys: %v %v, want %v %v", cols, got, wantCols, wantRows)
	}

	mem := memory.NewGoAllocator()
	sch := arrow.NewSchema([]arrow.Field{{Name: "Id", Type: arrow.PrimitiveTypes.Int32}, {Name: "Version", Type: arrow.PrimitiveTypes.Int32}}, nil)
	b := array.NewRecordBuilder(mem, sch)
	defer b.Release()
	b.Field(0).(*array.Int32Builder).AppendValues([]int32{1, 4}, nil)
	b.Field(1).(*array.Int32Builder).AppendValues([]int32{1, 2}, nil)
	rec := b.NewRecordBatch()
	rdr, err := array.NewRecordReader(sch, []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	asrc, err := ArrowSource(rdr)
	if err != nil {
		t.Fatal(err)
	}
	if cols, got := join(asrc); !slices.Equal(cols, wantCols) || !slices.Equal(sorted(got), sorted(wantRows)) {
		t.Errorf("Arrow keys: %v %v, want %v %v", cols, got, wantCols, wantRows)
	}
}

func sorted(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }

func TestArrowValues(t *testing.T) {
	mem := memory.NewGoAllocator()
	st := arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true})
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "l", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
		{Name: "s", Type: st, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, Nullable: true},
		{Name: "d", Type: &arrow.Decimal128Type{Precision: 10, Scale: 2}, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, sch)
	defer b.Release()
	lb := b.Field(0).(*array.ListBuilder)
	lb.Append(true)
	lb.ValueBuilder().(*array.StringBuilder).AppendValues([]string{"x", "y"}, nil)
	sb := b.Field(1).(*array.StructBuilder)
	sb.Append(true)
	sb.FieldBuilder(0).(*array.Int64Builder).Append(7)
	b.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(1_700_000_000_123))
	b.Field(3).(*array.Decimal128Builder).AppendNull()
	rec := b.NewRecordBatch()
	rdr, _ := array.NewRecordReader(sch, []arrow.RecordBatch{rec})
	src, err := ArrowSource(rdr)
	if err != nil {
		t.Fatal(err)
	}
	if got := src.Schema().String(); got != "struct<l:array<string>,s:struct<a:bigint>,ts:timestamp,d:decimal(10,2)>" {
		t.Fatal(got)
	}
	rows, err := src.Next(context.Background())
	if err != nil || len(rows) != 1 {
		t.Fatal(rows, err)
	}
	r := rows[0]
	if l := r[0].([]any); len(l) != 2 || l[1] != "y" {
		t.Errorf("list: %v", r[0])
	}
	if s := r[1].([]any); s[0] != int64(7) {
		t.Errorf("struct: %v", r[1])
	}
	if ts := r[2].(time.Time); ts.UnixMilli() != 1_700_000_000_123 {
		t.Errorf("timestamp: %v", r[2])
	}
	if r[3] != nil {
		t.Errorf("null decimal: %v", r[3])
	}
}
