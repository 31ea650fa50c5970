package fileindex

import (
	"context"
	"fmt"
	"testing"

	"github.com/ariadne-go/ariadne/index"
	"github.com/ariadne-go/ariadne/schema"
)

// TestStats: §5.13 over table1 (§8.0 facts) and over hand-written null
// cells, which are ignored.
func TestStats(t *testing.T) {
	ctx := context.Background()
	empty := newTestIndex(t, "s0", schemaT1S, "csv", csvHeader, func(ix *index.Index) error { return ix.AddIndex(ctx, "Id") })
	st, err := empty.fi.Stats(ctx)
	if err != nil || st == nil || len(st) != 0 {
		t.Fatalf("no table: %v, %v", st, err)
	}

	// Bloom and range columns are not storage columns: no row.
	ti := table1Index(t, func(ix *index.Index) error {
		if err := ix.AddIndex(ctx, "Id"); err != nil {
			return err
		}
		if err := ix.AddIndex(ctx, "Version"); err != nil {
			return err
		}
		return ix.AddRangeIndex(ctx, "Value")
	})
	st, err = ti.fi.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// P0: Id {1,2,3}, Version {1,2}, Value {5,3,4,4.5}; P1: Id {4,3,1},
	// Version {1,2,3}, Value {2,9,4,5}.
	want := []string{
		"[Id 2 3 3 3.0 3 0.0]",
		"[Version 2 2 3 2.5 2 0.7]",
	}
	checkStats(t, st, want)

	// Null cells (large sets) are ignored; a single cell has no deviation.
	hand := newTestIndex(t, "s1", schemaT1S, "csv", csvHeader, func(ix *index.Index) error {
		if err := ix.AddIndex(ctx, "Id"); err != nil {
			return err
		}
		return ix.AddIndex(ctx, "Version")
	})
	main := &schema.Struct{Fields: []schema.Field{
		{Name: "filename", Type: schema.String, Nullable: true},
		{Name: "Id", Type: &schema.Array{Element: schema.Integer, ContainsNull: true}, Nullable: true},
		{Name: "Version", Type: &schema.Array{Element: schema.Integer, ContainsNull: true}, Nullable: true},
		{Name: "file_size", Type: schema.Long, Nullable: true},
	}}
	ints := func(n int) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = int32(i)
		}
		return out
	}
	writeMain(t, hand, main, [][]any{
		{"a", ints(1), nil, int64(1)},
		{"b", ints(2), nil, int64(1)},
		{"c", nil, ints(5), int64(1)},
		{"d", ints(6), nil, int64(1)},
	})
	st, err = hand.fi.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Id sizes 1, 2, 6: mean 3.0, sample sd sqrt(7) = 2.6458 → 2.6, median 2.
	checkStats(t, st, []string{"[Id 4 1 6 3.0 2 2.6]", "[Version 4 5 5 5.0 5 <nil>]"})
}

func checkStats(t *testing.T, st []ColumnStats, want []string) {
	t.Helper()
	if len(st) != len(want) {
		t.Fatalf("got %d rows, want %d", len(st), len(want))
	}
	for i, s := range st {
		row := s.Row()
		if len(row) != len(StatsSchema().Fields) {
			t.Fatalf("row %v does not fit the schema", row)
		}
		if got := fmt.Sprint(row); got != want[i] {
			t.Errorf("row %d = %s, want %s", i, got, want[i])
		}
	}
}
