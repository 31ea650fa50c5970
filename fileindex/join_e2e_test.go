package fileindex

import (
	"context"
	"slices"
	"testing"

	"github.com/ariadne-go/ariadne/index"
	"github.com/ariadne-go/ariadne/schema"
)

// End-to-end tests: the build side's Update, then this side's Locate and
// Join, over the §8 data files.

// updatedIndex creates an index, tracks the files and runs Update.
func updatedIndex(t *testing.T, schemaJSON string, setup func(ix *index.Index) error, files ...string) *testIndex {
	t.Helper()
	ctx := context.Background()
	ti := newTestIndex(t, "e2e", schemaJSON, "csv", csvHeader, setup)
	uris := make([]string, len(files))
	for i, f := range files {
		uris[i] = dataURI(t, f)
	}
	if _, err := ti.ix.AddFiles(ctx, uris...); err != nil {
		t.Fatal(err)
	}
	if _, err := ti.fi.Update(ctx, UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	return ti
}

// TestUpdateThenLocate is §8.8 "Update index" end to end.
func TestUpdateThenLocate(t *testing.T) {
	ctx := context.Background()
	ti := updatedIndex(t, schemaT1S, regularIdVersionValue, p0, p1)
	for _, tc := range []struct {
		q    Query
		want []string
	}{
		{Query{"Version": {"3"}, "Id": {"1"}}, []string{p1}},
		{Query{"Value": {4.5}}, []string{p0}},
		{Query{"Value": {-1}}, nil},
	} {
		got, err := ti.fi.Locate(ctx, tc.q)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(bases(got), tc.want) && !(len(got) == 0 && tc.want == nil) {
			t.Errorf("%v: got %v, want %v", tc.q, bases(got), tc.want)
		}
	}
	st, err := ti.fi.Stats(ctx)
	if err != nil || len(st) != 3 || st[0].FileCount != 2 {
		t.Fatalf("stats: %+v, %v", st, err)
	}
}

// TestJoinComputedEndToEnd is §8.8 "computed_index": table3 indexed on
// Category = substring(Id, 1, 4), joined with table4 rows.
func TestJoinComputedEndToEnd(t *testing.T) {
	ctx := context.Background()
	const table3 = `{"type":"struct","fields":[{"name":"Id","type":"string","nullable":true,"metadata":{}},{"name":"Value","type":"double","nullable":true,"metadata":{}}]}`
	ti := updatedIndex(t, table3, func(ix *index.Index) error {
		return ix.AddComputedIndex(ctx, "Category", "substring(Id, 1, 4)")
	}, "table3_part0.csv", "table3_part1.csv")
	str3 := []schema.Type{schema.String, schema.String, schema.String}
	for _, tc := range []struct {
		key  []any
		on   []string
		rows int
	}{
		{[]any{"cat1_3", "Ok", "cat1"}, []string{"Category"}, 3},
		{[]any{"cat4_1", "Bad", "cat4"}, []string{"Category"}, 2},
		{[]any{"cat1_3", "Ok", "cat1"}, []string{"Category", "Id"}, 1},
		{[]any{"cat4_1", "Bad", "cat4"}, []string{"Category", "Id"}, 1},
	} {
		r, err := ti.fi.Join(ctx, keys("Id,Status,Category", str3, tc.key), tc.on, Inner, JoinOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cols, rows := drain(t, r)
		if len(rows) != tc.rows {
			t.Errorf("%v on %v: %d rows %v (columns %v), want %d", tc.key, tc.on, len(rows), rows, cols, tc.rows)
		}
	}
}
