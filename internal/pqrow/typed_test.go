package pqrow

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/schema"
	"github.com/parquet-go/parquet-go"
)

type typedRow struct {
	L   *int64    `parquet:"l,optional"`
	I   int32     `parquet:"i"`
	U   uint32    `parquet:"u"`
	S   *string   `parquet:"s,optional"`
	P   string    `parquet:"p"`
	D   int32     `parquet:"d,date"`
	TMs time.Time `parquet:"tms,timestamp(millisecond)"`
	TNs time.Time `parquet:"tns,timestamp(nanosecond)"`
	TUs time.Time `parquet:"tus,optional,timestamp(microsecond)"`
	B   int32     `parquet:"b"`
}

var typedSchema = &schema.Struct{Fields: []schema.Field{
	{Name: "l", Type: schema.Long, Nullable: true},
	{Name: "i", Type: schema.Integer, Nullable: true},
	{Name: "u", Type: schema.Long, Nullable: true},
	{Name: "s", Type: schema.String, Nullable: true},
	{Name: "p", Type: schema.String, Nullable: true},
	{Name: "d", Type: schema.Date, Nullable: true},
	{Name: "tms", Type: schema.Timestamp, Nullable: true},
	{Name: "tns", Type: schema.Timestamp, Nullable: true},
	{Name: "tus", Type: schema.Timestamp, Nullable: true},
	{Name: "b", Type: schema.Byte, Nullable: true},
	{Name: "missing", Type: schema.Integer, Nullable: true},
}}

func typedFile(t *testing.T, rows []typedRow, opts ...parquet.WriterOption) *File {
	t.Helper()
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[typedRow](&buf, append([]parquet.WriterOption{parquet.PageBufferSize(256), parquet.MaxRowsPerRowGroup(700)}, opts...)...)
	for i := 0; i < len(rows); i += 13 {
		if _, err := w.Write(rows[i:min(i+13, len(rows))]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// typedAsRow converts a typed value back to the row reader's value of t.
func typedAsRow(t schema.Type, v any) any {
	switch t {
	case schema.Date:
		return DateFromDays(int32(v.(int64)))
	case schema.Timestamp:
		return time.UnixMicro(v.(int64)).UTC()
	case schema.Integer:
		return int32(v.(int64))
	case schema.Byte:
		return int8(v.(int64))
	case schema.String:
		return string(v.([]byte))
	}
	return v
}

// TestScanTypedMatchesRows reads every column of files with nulls,
// dictionary and plain pages, several row groups, unsigned and narrow
// integers, dates and timestamps of three units through ScanTyped and
// compares each column's values, in order, with Rows'.
func TestScanTypedMatchesRows(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 7))
	rows := make([]typedRow, 2000)
	base := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	for i := range rows {
		r := &rows[i]
		if rng.IntN(5) > 0 {
			l := rng.Int64N(100) - 50
			r.L = &l
		}
		r.I = rng.Int32N(1000) - 500
		r.U = uint32(rng.Uint32())
		if rng.IntN(4) > 0 {
			s := fmt.Sprint("s", rng.IntN(40))
			r.S = &s
		}
		r.P = fmt.Sprintf("p%05d", rng.IntN(100000))
		r.D = int32(rng.IntN(20000) - 10000)
		r.TMs = base.Add(time.Duration(rng.Int64N(1e15)) - 5e14).Truncate(time.Millisecond)
		r.TNs = base.Add(time.Duration(rng.Int64N(1e15)) - 5e14)
		r.TUs = base.Add(time.Duration(rng.Int64N(1e12))).Truncate(time.Microsecond)
		r.B = rng.Int32N(400) - 200
	}
	for _, dict := range []bool{false, true} {
		opts := []parquet.WriterOption{parquet.DefaultEncoding(&parquet.Plain)}
		if dict {
			opts = []parquet.WriterOption{parquet.DefaultEncoding(&parquet.RLEDictionary)}
		}
		f := typedFile(t, rows, opts...)
		// Byte values outside [-128,127] fail both readers alike.
		fields := typedSchema.Fields
		cols, ok := f.PlanTyped(fields, ReadOptions{})
		if !ok {
			t.Fatalf("dict=%v: not typed", dict)
		}
		err := f.ScanTyped(ctx, cols, func(int, *TypedPage) error { return nil })
		if !errors.Is(err, ErrSchemaMismatch) {
			t.Fatalf("dict=%v: byte column out of range: err %v", dict, err)
		}
		// Without the out-of-range byte column, compare every value.
		fields = slices.Concat(typedSchema.Fields[:9], typedSchema.Fields[10:])
		cols, _ = f.PlanTyped(fields, ReadOptions{})
		got := make([][]any, len(fields))
		sawDict := false
		if err := f.ScanTyped(ctx, cols, func(c int, p *TypedPage) error {
			sawDict = sawDict || p.Dict != nil
			nonNull := []any{}
			n := 0
			if p.Dict != nil {
				n = len(p.Index)
			} else if p.Values != nil {
				n = p.Values.Len()
			}
			for j := range n {
				src, k := p.Values, j
				if p.Dict != nil {
					src, k = p.Dict, int(p.Index[j])
				}
				if cols[c].Kind == TypedBytes {
					nonNull = append(nonNull, typedAsRow(fields[c].Type, bytes.Clone(src.Bytes(k))))
				} else {
					nonNull = append(nonNull, typedAsRow(fields[c].Type, src.Ints[k]))
				}
			}
			if p.Rows != n+p.Nulls {
				t.Fatalf("column %s: page of %d rows, %d values, %d nulls", fields[c].Name, p.Rows, n, p.Nulls)
			}
			got[c] = append(got[c], nonNull...)
			got[c] = append(got[c], fmt.Sprintf("nulls:%d", p.Nulls))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if sawDict != dict {
			t.Fatalf("dictionary pages seen: %v, want %v", sawDict, dict)
		}
		// The same per column from Rows: non-null values in row order;
		// null counts compared in total.
		want := make([][]any, len(fields))
		wantNulls := make([]int, len(fields))
		for row, err := range f.Rows(ctx, &schema.Struct{Fields: fields}, ReadOptions{}) {
			if err != nil {
				t.Fatal(err)
			}
			for c, v := range row {
				if v == nil {
					wantNulls[c]++
				} else {
					want[c] = append(want[c], v)
				}
			}
		}
		for c := range fields {
			var vals []any
			nulls := 0
			for _, v := range got[c] {
				if s, ok := v.(string); ok && len(s) > 6 && s[:6] == "nulls:" {
					var k int
					fmt.Sscan(s[6:], &k)
					nulls += k
					continue
				}
				vals = append(vals, v)
			}
			if nulls != wantNulls[c] || !reflect.DeepEqual(vals, want[c]) {
				t.Fatalf("dict=%v column %s: %d values %d nulls, want %d values %d nulls", dict, fields[c].Name, len(vals), nulls, len(want[c]), wantNulls[c])
			}
		}
	}
}

// TestPlanTypedRefuses leaves nested, repeated and unsupported pairs to the
// row reader.
func TestPlanTypedRefuses(t *testing.T) {
	f := selFile(t, 1, false)
	for _, fd := range []schema.Field{
		{Name: "tags", Type: &schema.Array{Element: schema.String, ContainsNull: true}},
		{Name: "id", Type: schema.Double},
		{Name: "name", Type: schema.Binary},
		{Name: "name", Type: schema.Long}, // mismatch: the row reader reports it
	} {
		if _, ok := f.PlanTyped([]schema.Field{fd}, ReadOptions{}); ok {
			t.Errorf("%s %s planned as typed", fd.Name, fd.Type)
		}
	}
	if _, ok := f.PlanTyped([]schema.Field{{Name: "id", Type: schema.Long}, {Name: "name", Type: schema.String}, {Name: "nope", Type: schema.Long}}, ReadOptions{}); !ok {
		t.Error("id, name and a missing column not typed")
	}
}
