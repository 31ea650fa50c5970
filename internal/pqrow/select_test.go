package pqrow

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/ariadne-go/ariadne/schema"
	"github.com/parquet-go/parquet-go"
)

type selRow struct {
	ID   *int64   `parquet:"id,optional"`
	Name string   `parquet:"name"`
	Tags []string `parquet:"tags,list"`
}

var selSchema = &schema.Struct{Fields: []schema.Field{
	{Name: "id", Type: schema.Long, Nullable: true},
	{Name: "name", Type: schema.String, Nullable: true},
	{Name: "tags", Type: &schema.Array{Element: schema.String, ContainsNull: true}, Nullable: true},
	{Name: "missing", Type: schema.Integer, Nullable: true},
}}

// selFile writes 1,000 rows in row groups of 300 and pages of a few rows,
// with page indexes (files without them are covered by fileindex's join
// tests, on files DuckDB writes).
func selFile(t *testing.T, seed uint64, sorted bool) *File {
	t.Helper()
	b := selFileBytes(t, seed, sorted)
	f, err := OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// selFileBytes is selFile's file, as bytes.
func selFileBytes(t *testing.T, seed uint64, sorted bool) []byte {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	rows := make([]selRow, 1000)
	for i := range rows {
		if rng.IntN(8) > 0 {
			id := int64(rng.IntN(200))
			if sorted {
				id = int64(i / 5)
			}
			rows[i].ID = &id
		}
		rows[i].Name = fmt.Sprintf("n%03d", rng.IntN(300))
		for range rng.IntN(4) {
			rows[i].Tags = append(rows[i].Tags, fmt.Sprint("t", rng.IntN(9)))
		}
	}
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[selRow](&buf, parquet.PageBufferSize(64), parquet.MaxRowsPerRowGroup(300))
	for i := 0; i < len(rows); i += 7 {
		if _, err := w.Write(rows[i:min(i+7, len(rows))]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestMatchAndReadRowsAt checks MatchRows and ReadRowsAt against a full
// read filtered in Go, for integer and string keys, sorted and unsorted
// files, and random row selections.
func TestMatchAndReadRowsAt(t *testing.T) {
	ctx := context.Background()
	for _, sorted := range []bool{true, false} {
		f := selFile(t, 3, sorted)
		if sorted {
			// Page indexes read at once, or per chunk as needed.
			if err := f.LoadPageIndex(); err != nil {
				t.Fatal(err)
			}
		}
		var all []Row
		for r, err := range f.Rows(ctx, selSchema, ReadOptions{}) {
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, r)
		}
		// Row group of each row, and its index within it.
		type pos struct {
			rg  int
			row int64
		}
		var at []pos
		for gi, g := range f.pf.RowGroups() {
			for r := range g.NumRows() {
				at = append(at, pos{gi, r})
			}
		}
		for _, tc := range []struct {
			col  int
			keys []any
		}{
			{0, []any{int64(3), int64(150), int64(100000), nil}},
			{0, []any{int32(7)}},
			{1, []any{"n001", "n150", "zzz"}},
		} {
			ks, err := NewKeySet(tc.keys)
			if err != nil {
				t.Fatal(err)
			}
			var st ScanStats
			ms, err := f.MatchRows(ctx, selSchema.Fields[tc.col], ReadOptions{}, ks, &st)
			if err != nil {
				t.Fatal(err)
			}
			var want, got []Row
			for i, r := range all {
				if r[tc.col] == nil {
					continue
				}
				k := r[tc.col]
				if _, ok := k.(string); !ok {
					k, _ = AsInt64(k)
				}
				if _, ok := ks.ints[asInt(k)]; ok && tc.col == 0 {
					want = append(want, all[i])
				} else if s, ok := k.(string); ok {
					if _, ok := ks.strs[s]; ok {
						want = append(want, all[i])
					}
				}
			}
			for _, m := range ms {
				// The key column comes from the match, not a second read.
				rows, err := f.ReadMatch(ctx, selSchema, ReadOptions{}, m, selSchema.Fields[tc.col].Name)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, rows...)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("sorted=%v keys %v: got %d rows, want %d\n%v\n%v", sorted, tc.keys, len(got), len(want), got, want)
			}
			if st.RowsMatched != int64(len(want)) || st.Pages == 0 {
				t.Errorf("stats %+v", st)
			}
			if sorted && tc.col == 0 && (st.PagesSkipped == 0 || st.RowGroupsSkipped == 0) {
				t.Errorf("sorted file: nothing skipped: %+v", st)
			}
		}
		// Random selections.
		rng := rand.New(rand.NewPCG(9, 9))
		for range 20 {
			byGroup := map[int][]int64{}
			var want []Row
			for i := range all {
				if rng.IntN(10) == 0 {
					byGroup[at[i].rg] = append(byGroup[at[i].rg], at[i].row)
					want = append(want, all[i])
				}
			}
			var got []Row
			for g := range f.NumRowGroups() {
				rows, err := f.ReadRowsAt(ctx, selSchema, ReadOptions{}, g, byGroup[g])
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, rows...)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("random selection: got %d rows, want %d", len(got), len(want))
			}
		}
	}
}

func asInt(v any) int64 {
	i, _ := AsInt64(v)
	return i
}
