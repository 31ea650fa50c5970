package fileindex

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/delta"
	"github.com/ariadne-go/ariadne/index"
	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/internal/testfixture"
	"github.com/ariadne-go/ariadne/metadata"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/store"
)

var csvHeader = map[string]string{"header": "true"}

// table1Index is §8.8's "Update index" setup with the given definitions,
// indexed over table1_part0/1.
func table1Index(t testing.TB, setup func(ix *index.Index) error) *testIndex {
	t.Helper()
	ti := newTestIndex(t, "t1", schemaT1S, "csv", csvHeader, setup)
	newTestIndexer(t, ti, 500000).index(t, ti, dataURI(t, "table1_part0.csv"), dataURI(t, "table1_part1.csv"))
	return ti
}

func temporalIndex(t testing.TB) *testIndex {
	t.Helper()
	ti := newTestIndex(t, "tmp", schemaTemporal, "csv", csvHeader, func(ix *index.Index) error {
		return ix.AddTemporalIndex(context.Background(), "Id", "UpdatedAt")
	})
	newTestIndexer(t, ti, 500000).index(t, ti, dataURI(t, "temporal_part0.csv"), dataURI(t, "temporal_part1.csv"))
	return ti
}

func regularIdVersionValue(ix *index.Index) error {
	ctx := context.Background()
	for _, c := range []string{"Id", "Version", "Value"} {
		if err := ix.AddIndex(ctx, c); err != nil {
			return err
		}
	}
	return nil
}

const (
	p0 = "table1_part0.csv"
	p1 = "table1_part1.csv"
	t0 = "temporal_part0.csv"
	t1 = "temporal_part1.csv"
)

// TestLocate runs lookups against indexes of the §8 data files. Each case
// names the expected files; the cases pin routing, AND/OR, nulls and the
// Spark 3.5 literal coercion (§5.5 step 3).
func TestLocate(t *testing.T) {
	regular := table1Index(t, regularIdVersionValue)
	ranged := table1Index(t, func(ix *index.Index) error {
		ctx := context.Background()
		if err := ix.AddRangeIndex(ctx, "Id"); err != nil {
			return err
		}
		if err := ix.AddRangeIndex(ctx, "Value"); err != nil {
			return err
		}
		return ix.AddIndex(ctx, "Version")
	})
	bloomed := table1Index(t, func(ix *index.Index) error {
		ctx := context.Background()
		if err := ix.AddBloomIndex(ctx, "Id", 0.01); err != nil {
			return err
		}
		return ix.AddIndex(ctx, "Version")
	})
	temporal := temporalIndex(t)
	indexes := map[string]*testIndex{"regular": regular, "range": ranged, "bloom": bloomed, "temporal": temporal}

	for _, tc := range []struct {
		index string
		q     Query
		want  []string
	}{
		// §8.8 "Update index": string literals match ints; AND across columns.
		{"regular", Query{"Version": {"3"}, "Id": {"1"}}, []string{p1}},
		{"regular", Query{"Value": {4.5}}, []string{p0}},
		{"regular", Query{"Value": {-1}}, nil},
		{"regular", Query{"Id": {1}}, []string{p0, p1}},
		{"regular", Query{"Id": {2, 4}}, []string{p0, p1}},
		{"regular", Query{"Id": {2}, "Version": {3}}, nil},
		// Numeric widening: an int literal matches a double, a double an int.
		{"regular", Query{"Value": {4}}, []string{p0, p1}},
		{"regular", Query{"Value": {int64(9)}}, []string{p1}},
		{"regular", Query{"Id": {4.0}}, []string{p1}},
		{"regular", Query{"Id": {4.5}}, nil},
		{"regular", Query{"Id": {int8(2)}}, []string{p0}},
		// Text comparison with a string among the values: "4.0" is not "4".
		{"regular", Query{"Id": {"4.0"}}, nil},
		{"regular", Query{"Id": {"04"}}, nil},
		{"regular", Query{"Value": {"4.5"}}, []string{p0}},
		{"regular", Query{"Value": {"4.50"}}, nil},
		{"regular", Query{"Value": {"9", 8.0}}, nil},          // text: "9" ≠ "9.0", "8.0" absent
		{"regular", Query{"Value": {"x", 9.0}}, []string{p1}}, // text: "9.0" = "9.0"
		{"regular", Query{"Value": {"9.0"}}, []string{p1}},
		// Nulls are dropped; a column left with none empties the result.
		{"regular", Query{"Id": {nil, 2}}, []string{p0}},
		{"regular", Query{"Id": {nil}}, nil},
		{"regular", Query{"Id": {nil}, "Version": {1}}, nil},
		{"regular", Query{"Id": {}}, nil},
		{"regular", Query{}, nil},
		// §8.11: ranges are inclusive; string literals are cast.
		{"range", Query{"Id": {4}}, []string{p1}},
		{"range", Query{"Id": {1}}, []string{p0, p1}},
		{"range", Query{"Id": {"4"}}, []string{p1}},
		{"range", Query{"Id": {2.5}}, []string{p0, p1}},
		{"range", Query{"Id": {3.5}}, []string{p1}},
		{"range", Query{"Id": {5, 0}}, nil},
		{"range", Query{"Id": {"x"}}, nil},
		{"range", Query{"Id": {nil}}, nil},
		{"range", Query{"Value": {9}}, []string{p1}},
		{"range", Query{"Value": {2.5}}, []string{p1}},
		{"range", Query{"Id": {4}, "Version": {1}}, []string{p1}},
		{"range", Query{"Id": {4}, "Version": {99}}, nil},
		// §8.10: bloom values are not coerced (1.0 renders "1.0").
		{"bloom", Query{"Id": {1, 2}}, []string{p0, p1}},
		{"bloom", Query{"Id": {2}}, []string{p0}},
		{"bloom", Query{"Id": {int64(4)}}, []string{p1}},
		{"bloom", Query{"Id": {"4"}}, []string{p1}},
		{"bloom", Query{"Id": {4.0}}, nil},
		{"bloom", Query{"Id": {999999, 888888}}, nil},
		{"bloom", Query{"Id": {nil}}, nil},
		{"bloom", Query{"Id": {2}, "Version": {2}}, []string{p0}},
		{"bloom", Query{"Id": {2}, "Version": {3}}, nil},
		// §3.7: per key only the file with its newest version.
		{"temporal", Query{"Id": {1}}, []string{t1}},
		{"temporal", Query{"Id": {2}}, []string{t1}},
		{"temporal", Query{"Id": {3}}, []string{t0}},
		{"temporal", Query{"Id": {1, 3}}, []string{t0, t1}},
		{"temporal", Query{"Id": {5}}, []string{t1}},
		{"temporal", Query{"Id": {"4"}}, []string{t0}},
		{"temporal", Query{"Id": {6, nil}}, nil},
	} {
		t.Run(fmt.Sprintf("%s/%v", tc.index, tc.q), func(t *testing.T) {
			got, err := indexes[tc.index].fi.Locate(context.Background(), tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(bases(got), tc.want) && !(len(got) == 0 && tc.want == nil) {
				t.Errorf("got %v, want %v", bases(got), tc.want)
			}
			for _, u := range got {
				if !strings.HasPrefix(u, "file:///") {
					t.Errorf("located %q, want the indexed URI", u)
				}
			}
		})
	}
}

func TestLocateErrors(t *testing.T) {
	ctx := context.Background()
	ti := table1Index(t, func(ix *index.Index) error { return ix.AddIndex(ctx, "Id") })
	for _, tc := range []struct {
		name string
		q    Query
		kind *aerr.Kind
	}{
		{"nil query", nil, aerr.ErrInvalidArgument},
		{"unknown column", Query{"Nope": {1}}, aerr.ErrColumnNotFound},
		{"schema column without index", Query{"Value": {1}}, aerr.ErrColumnNotFound},
		{"incomparable literal", Query{"Id": {true}}, aerr.ErrInvalidArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ti.fi.Locate(ctx, tc.q)
			if !errors.Is(err, tc.kind) {
				t.Fatalf("err = %v, want %v", err, tc.kind)
			}
		})
	}
	// Registered after the last update: typed error, not an empty answer.
	if err := ti.ix.AddIndex(ctx, "Version"); err != nil {
		t.Fatal(err)
	}
	fi := New(ti.ix, Options{})
	if _, err := fi.Locate(ctx, Query{"Version": {1}}); !errors.Is(err, aerr.ErrColumnNotFound) {
		t.Fatalf("unbuilt column: err = %v", err)
	}
}

func TestLocateWithoutMainTable(t *testing.T) {
	ctx := context.Background()
	ti := newTestIndex(t, "empty", schemaT1S, "csv", csvHeader, func(ix *index.Index) error { return ix.AddIndex(ctx, "Id") })
	got, err := ti.fi.Locate(ctx, Query{"Id": {1}})
	if err != nil || len(got) != 0 {
		t.Fatalf("got %v, %v; want no files", got, err)
	}
	// The first update creates the table; the same FileIndex sees it.
	newTestIndexer(t, ti, 500000).index(t, ti, dataURI(t, p0))
	got, err = ti.fi.Locate(ctx, Query{"Id": {1}})
	if err != nil || !slices.Equal(bases(got), []string{p0}) {
		t.Fatalf("after update: got %v, %v", got, err)
	}
}

// TestLocateSeesNewVersions: views are per Delta version, so a query after
// an update sees it, and an upsert replaces a file's values.
func TestLocateSeesNewVersions(t *testing.T) {
	ctx := context.Background()
	ti := newTestIndex(t, "v", schemaT1S, "csv", csvHeader, func(ix *index.Index) error { return ix.AddIndex(ctx, "Id") })
	x := newTestIndexer(t, ti, 500000)
	x.index(t, ti, dataURI(t, p0))
	if got, _ := ti.fi.Locate(ctx, Query{"Id": {4}}); len(got) != 0 {
		t.Fatalf("before: %v", got)
	}
	x.index(t, ti, dataURI(t, p1))
	if got, _ := ti.fi.Locate(ctx, Query{"Id": {4}}); !slices.Equal(bases(got), []string{p1}) {
		t.Fatalf("after: %v", got)
	}
	// Re-index p0 with other values (an upsert by filename).
	writeMain(t, ti, x.mainType, [][]any{{dataURI(t, p0), []any{int32(42)}, int64(1)}})
	if got, _ := ti.fi.Locate(ctx, Query{"Id": {2}}); len(got) != 0 {
		t.Fatalf("old value still located: %v", got)
	}
	if got, _ := ti.fi.Locate(ctx, Query{"Id": {42}}); !slices.Equal(bases(got), []string{p0}) {
		t.Fatalf("new value: %v", got)
	}
	if n := len(ti.fi.views.views); n > maxCachedViews {
		t.Fatalf("%d views cached, want ≤ %d", n, maxCachedViews)
	}
}

// TestLocateWarmRequests pins the cost of a warm query: one List of the
// main table's log and nothing else (issue 3 item 4).
func TestLocateWarmRequests(t *testing.T) {
	ctx := context.Background()
	ti := table1Index(t, regularIdVersionValue)
	q := Query{"Id": {1}, "Version": {3}}
	if _, err := ti.fi.Locate(ctx, q); err != nil {
		t.Fatal(err)
	}
	before := ti.root.Snapshot()
	for range 10 {
		if _, err := ti.fi.Locate(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	d := ti.root.Snapshot().Sub(before)
	if d.Total.Requests != 10 || d.List.Requests != 10 {
		t.Fatalf("10 warm queries made %+v, want exactly 10 Lists", d)
	}
}

// TestLocateConcurrent: concurrent first queries share one view and agree.
func TestLocateConcurrent(t *testing.T) {
	ctx := context.Background()
	ti := table1Index(t, regularIdVersionValue)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q, want := Query{"Id": {4}}, []string{p1}
			if i%2 == 0 {
				q, want = Query{"Version": {2}, "Value": {3.0}}, []string{p0}
			}
			got, err := ti.fi.Locate(ctx, q)
			if err == nil && !slices.Equal(bases(got), want) {
				err = fmt.Errorf("query %v: got %v, want %v", q, bases(got), want)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestLocateLargeAndAutoBloom: value sets at or above L live in the large
// table (null inline cell) and are found there; auto-bloom filters narrow
// the large-table scan, and a query no filter admits never touches it.
func TestLocateLargeAndAutoBloom(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	// Three CSV files: big has 50 Ids (large at L = 10), the others few.
	write := func(name string, ids ...int) string {
		var b strings.Builder
		b.WriteString("Id,Version,Value\n")
		for _, id := range ids {
			fmt.Fprintf(&b, "%d,1,1.0\n", id)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return "file://" + p
	}
	var bigIDs []int
	for i := 1000; i < 1050; i++ {
		bigIDs = append(bigIDs, i)
	}
	big := write("big.csv", bigIDs...)
	big2 := write("big2.csv", append(slices.Clone(bigIDs[:20]), 5000, 5001, 5002, 5003, 5004, 5005, 5006, 5007, 5008, 5009)...)
	small := write("small.csv", 1, 2, 1000)
	ti := newTestIndex(t, "large", schemaT1S, "csv", csvHeader, func(ix *index.Index) error { return ix.AddIndex(ctx, "Id") })
	// Register the auto-bloom detection as an update would (§3.9).
	if err := ti.ix.UpdateMetadata(ctx, func(m *metadata.Metadata) (bool, error) {
		m.AutoBloomIndexes = append(m.AutoBloomIndexes, "Id")
		return true, nil
	}); err != nil {
		t.Fatal(err)
	}
	x := newTestIndexer(t, ti, 10)
	x.index(t, ti, big, big2, small)

	largeKey := ti.ix.Paths().LargeIndex("Id")
	for _, tc := range []struct {
		q          []any
		want       []string
		largeReads bool // whether the large table is read at all
	}{
		{[]any{1049}, []string{"big.csv"}, true},
		{[]any{1000}, []string{"big.csv", "big2.csv", "small.csv"}, true},
		{[]any{5005}, []string{"big2.csv"}, true},
		{[]any{2}, []string{"small.csv"}, false}, // no auto-bloom filter admits 2
		{[]any{"1010"}, []string{"big.csv", "big2.csv"}, true},
		{[]any{7777}, nil, false},
	} {
		before := ti.root.Snapshot()
		got, err := ti.fi.Locate(ctx, Query{"Id": tc.q})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(bases(got), tc.want) && !(len(got) == 0 && tc.want == nil) {
			t.Errorf("Id %v: got %v, want %v", tc.q, bases(got), tc.want)
		}
		_ = before
		_ = largeKey
	}
	// Request accounting for the no-candidate case: one List (the main
	// log), nothing under large_indexes.
	before := ti.root.Snapshot()
	if _, err := ti.fi.Locate(ctx, Query{"Id": {7777}}); err != nil {
		t.Fatal(err)
	}
	if d := ti.root.Snapshot().Sub(before); d.Total.Requests != 1 {
		t.Fatalf("a query with no auto-bloom candidate made %+v, want 1 List", d)
	}
	before = ti.root.Snapshot()
	if _, err := ti.fi.Locate(ctx, Query{"Id": {5005}}); err != nil {
		t.Fatal(err)
	}
	if d := ti.root.Snapshot().Sub(before); d.List.Requests != 2 || d.Read.Requests == 0 {
		t.Fatalf("a query with a candidate made %+v, want 2 Lists and reads of the large table", d)
	}
}

// TestLocateFromRows covers the relation form (§5.6): distinct values,
// string casts, range bounding boxes and bounded bloom probes.
func TestLocateFromRows(t *testing.T) {
	ctx := context.Background()
	ranged := table1Index(t, func(ix *index.Index) error {
		if err := ix.AddRangeIndex(ctx, "Id"); err != nil {
			return err
		}
		if err := ix.AddBloomIndex(ctx, "Value", 0.01); err != nil {
			return err
		}
		return ix.AddIndex(ctx, "Version")
	})
	rows := func(cols int, vals ...any) func(yield func([]any, error) bool) {
		return func(yield func([]any, error) bool) {
			for i := 0; i+cols <= len(vals); i += cols {
				if !yield(vals[i:i+cols], nil) {
					return
				}
			}
		}
	}
	seq := func(from, to int) []any {
		var out []any
		for i := from; i <= to; i++ {
			out = append(out, i)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		cols []string
		vals []any
		want []string
	}{
		{"regular", []string{"Version"}, []any{3, 3, nil}, []string{p1}},
		{"regular string cast", []string{"Version"}, []any{"03"}, []string{p1}},
		{"regular only nulls", []string{"Version"}, []any{nil, nil}, nil},
		{"range exact", []string{"Id"}, []any{4, 4}, []string{p1}},
		{"range exact misses gap", []string{"Id"}, append(seq(5, 900), 0), nil},
		// 1,001 values from 5 to 1005: the bounding box [−1, 1005] covers both.
		{"range bounding box", []string{"Id"}, append(seq(5, 1005), -1), []string{p0, p1}},
		// Above the cap the box still covers every value, not only the first 10,000.
		{"range cap keeps box", []string{"Id"}, append(seq(5, 10010), 4), []string{p1}},
		{"bloom", []string{"Value"}, []any{9.0}, []string{p1}},
		{"bloom and regular", []string{"Value", "Version"}, []any{4.5, 3, 2.0, nil}, []string{p1}},
		// More distinct values than a 1% filter can usefully test (458): every
		// non-null filter matches, rather than truncating the values.
		{"bloom beyond useful probes", []string{"Value"}, seq(100, 600), []string{p0, p1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ranged.fi.LocateFromRows(ctx, tc.cols, rows(len(tc.cols), tc.vals...))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(bases(got), tc.want) && !(len(got) == 0 && tc.want == nil) {
				t.Errorf("got %v, want %v", bases(got), tc.want)
			}
		})
	}
	if _, err := ranged.fi.LocateFromRows(ctx, nil, rows(0)); !errors.Is(err, aerr.ErrInvalidArgument) {
		t.Errorf("no columns: %v", err)
	}
	if _, err := ranged.fi.LocateFromRows(ctx, []string{"Value2"}, rows(1, 1)); !errors.Is(err, aerr.ErrColumnNotFound) {
		t.Errorf("unknown column: %v", err)
	}
}

// TestLocateAlpha37 opens the real alpha-37 index (§8.27): the query
// preflight migrates it, then user_id lookups find the source file.
func TestLocateAlpha37(t *testing.T) {
	ctx := context.Background()
	const source = testfixture.Alpha37Source
	cat, _, dir := newTestCatalog(t)
	testfixture.InstallAlpha37(t, dir)
	ix, err := cat.Get(ctx, "alpha37_fixture")
	if err != nil {
		t.Fatal(err)
	}
	fi := New(ix, Options{})
	for _, tc := range []struct {
		id   any
		want []string
	}{
		{100, []string{source}}, {101, []string{source}}, {200, []string{source}}, {int64(100), []string{source}}, {999, nil},
	} {
		got, err := fi.Locate(ctx, Query{"user_id": {tc.id}})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, tc.want) && !(len(got) == 0 && tc.want == nil) {
			t.Errorf("user_id %v: got %v, want %v", tc.id, got, tc.want)
		}
	}
}

// TestLocateNullCellsAndLegacyLarge writes a main table by hand, as the
// Spark library may have left it: null exact and bloom cells, a temporal
// large table, and a large table whose value column carries a legacy name
// (read by position, §3.8).
func TestLocateNullCellsAndLegacyLarge(t *testing.T) {
	ctx := context.Background()
	ti := newTestIndex(t, "hand", schemaTemporal, "csv", csvHeader, func(ix *index.Index) error {
		if err := ix.AddIndex(ctx, "Value"); err != nil {
			return err
		}
		return ix.AddTemporalIndex(ctx, "Id", "UpdatedAt")
	})
	ts := func(s string) time.Time { tm, _ := time.Parse(time.DateTime, s); return tm }
	tsType := &schema.Struct{Fields: []schema.Field{{Name: "value", Type: schema.Integer, Nullable: true}, {Name: "max_ts", Type: schema.Timestamp, Nullable: true}}}
	main := &schema.Struct{Fields: []schema.Field{
		{Name: "filename", Type: schema.String, Nullable: true},
		{Name: "Value", Type: &schema.Array{Element: schema.Double, ContainsNull: true}, Nullable: true},
		{Name: "Id", Type: &schema.Array{Element: tsType, ContainsNull: true}, Nullable: true},
		{Name: "file_size", Type: schema.Long, Nullable: true},
	}}
	writeMain(t, ti, main, [][]any{
		{"s3://b/a", []any{1.5}, []any{[]any{int32(1), ts("2024-01-01 00:00:00")}, []any{int32(2), nil}}, int64(10)},
		{"s3://b/b", nil, nil, int64(20)},
		{"s3://b/c", []any{}, []any{[]any{int32(2), ts("2023-01-01 00:00:00")}, []any{nil, ts("2030-01-01 00:00:00")}}, int64(30)},
	})
	legacy := &schema.Struct{Fields: []schema.Field{{Name: "filename", Type: schema.String, Nullable: true}, {Name: "legacy_name", Type: schema.Double, Nullable: true}}}
	writeTable(t, ti, ti.ix.Paths().LargeIndex("Value"), legacy, [][]any{{"s3://b/b", 7.5}, {"s3://b/b", 8.5}}, false)
	tl := &schema.Struct{Fields: []schema.Field{{Name: "filename", Type: schema.String, Nullable: true}, {Name: "Id", Type: tsType, Nullable: true}}}
	writeTable(t, ti, ti.ix.Paths().LargeIndex("Id"), tl, [][]any{
		{"s3://b/b", []any{int32(1), ts("2025-01-01 00:00:00")}},
		{"s3://b/b", []any{int32(3), nil}},
	}, false)
	for _, tc := range []struct {
		q    Query
		want []string
	}{
		{Query{"Value": {7.5}}, []string{"s3://b/b"}},
		{Query{"Value": {1.5, 8.5}}, []string{"s3://b/a", "s3://b/b"}},
		{Query{"Id": {1}}, []string{"s3://b/b"}},            // the large row is newer
		{Query{"Id": {2}}, []string{"s3://b/c"}},            // a null max_ts ranks last
		{Query{"Id": {3}}, []string{"s3://b/b"}},            // only a null max_ts
		{Query{"Id": {1}, "Value": {1.5}}, nil},             // AND with temporal: the older file is not returned (§9 item 10)
		{Query{"Id": {2}, "Value": {decimal("1.50")}}, nil}, // c holds Id 2's newest, a holds 1.5
	} {
		got, err := ti.fi.Locate(ctx, tc.q)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, tc.want) && !(len(got) == 0 && tc.want == nil) {
			t.Errorf("%v: got %v, want %v", tc.q, got, tc.want)
		}
	}
}

func decimal(s string) pqrow.Decimal {
	d, err := pqrow.ParseDecimal(s, int32(len(s)-strings.IndexByte(s, '.')-1))
	if err != nil {
		panic(err)
	}
	return d
}

var _ = delta.ErrNotATable
var _ = store.ErrNotExist
