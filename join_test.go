package ariadne_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/ariadne-go/ariadne"
	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/rowindex"
)

// rowsJSON renders rows' values of cols as sorted JSON lines, so that two
// paths' answers compare as multisets.
func rowsJSON(t *testing.T, rows []map[string]any, cols []string) []string {
	t.Helper()
	var out []string
	for _, r := range rows {
		m := map[string]any{}
		for _, c := range cols {
			m[c] = r[c]
		}
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	slices.Sort(out)
	return out
}

func TestJoinMatchesLookup(t *testing.T) {
	ctx := context.Background()
	lake, ix := openLake(t, 4)
	cols := []string{"user_id", "ts", "track_uri", "duration_ms"}
	// Keys typed by the column: a Go integer and a JSON number.
	j, err := ix.Join(ctx, ariadne.JoinRequest{Keys: map[string][]any{"user_id": {lake.Hot, json.Number("2654435762")}}, Select: cols})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if !slices.Equal(j.Columns(), cols) {
		t.Fatalf("join columns %v", j.Columns())
	}
	var joined []map[string]any
	for j.Next() {
		if _, ok := j.Values()[0].(int64); !ok {
			t.Fatalf("user_id is %T", j.Values()[0])
		}
		joined = append(joined, j.Record())
	}
	if err := j.Err(); err != nil {
		t.Fatal(err)
	}
	st := j.Stats()
	if st.FilesLocated == 0 || st.FilesLocated > len(lake.Files) || len(j.Files()) != st.FilesLocated {
		t.Fatalf("join stats %+v, files %v", st, j.Files())
	}
	// The same rows, with the same JSON values, as the row index serves.
	var looked []map[string]any
	for _, k := range []any{lake.Hot, "2654435762"} {
		res, err := ix.Lookup(ctx, ariadne.LookupRequest{Column: "user_id", Key: k, Columns: cols})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res.Rows {
			looked = append(looked, r.Values)
		}
	}
	a, b := rowsJSON(t, joined, cols), rowsJSON(t, looked, cols)
	if len(a) < 10 || !slices.Equal(a, b) {
		t.Fatalf("join gave %d rows, lookup %d; first %v vs %v", len(a), len(b), a[:min(1, len(a))], b[:min(1, len(b))])
	}
}

func TestJoinOuterAndErrors(t *testing.T) {
	ctx := context.Background()
	_, ix := openLake(t, 2)
	// A left join keeps a key no file holds, with nulls on the index side;
	// a key column the index does not have rides along.
	j, err := ix.Join(ctx, ariadne.JoinRequest{Keys: map[string][]any{"user_id": {int64(-7)}, "tag": {"x"}}, On: []string{"user_id"},
		How: "left", Select: []string{"user_id", "track_uri"}})
	if err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	for j.Next() {
		got = append(got, j.Record())
	}
	j.Close()
	if j.Err() != nil || len(got) != 1 || got[0]["user_id"] != int64(-7) || got[0]["tag"] != "x" || got[0]["track_uri"] != nil {
		t.Fatalf("left join of an absent key: %v, %v", got, j.Err())
	}
	for name, req := range map[string]ariadne.JoinRequest{
		"wrong key type":  {Keys: map[string][]any{"user_id": {"u1"}}},
		"ragged key set":  {Keys: map[string][]any{"user_id": {1, 2}, "tag": {"x"}}, On: []string{"user_id"}},
		"no key set":      {},
		"bad join type":   {Keys: map[string][]any{"user_id": {1}}, How: "sideways"},
		"no index column": {Keys: map[string][]any{"track_uri": {"t"}}},
	} {
		if _, err := ix.Join(ctx, req); !errors.Is(err, aerr.ErrInvalidArgument) {
			t.Errorf("%s: %v, want an invalid argument", name, err)
		}
	}
}

func TestRowIndexOperations(t *testing.T) {
	ctx := context.Background()
	lake, ix := openLake(t, 2)
	info, st, err := ix.AddRowIndex(ctx, ariadne.RowIndexDefinition{Key: "track_uri", Cover: []string{"user_id"}})
	if err != nil {
		t.Fatal(err)
	}
	if info.Name != "track_uri" || info.Kind != "hash" || info.Files != 2 || st.Files != 2 || info.Entries == 0 {
		t.Fatalf("add: %+v, %+v", info, st)
	}
	if _, _, err := ix.AddRowIndex(ctx, ariadne.RowIndexDefinition{Key: "track_uri"}); !errors.Is(err, rowindex.ErrExists) {
		t.Fatalf("adding it twice: %v", err)
	}
	// AddRowIndexWith checks its engine before reading anything (the Spark
	// build itself: interop's TestSparkEngineRowIndex); duckdb is the local build.
	for _, o := range []ariadne.AddRowIndexOptions{{Engine: "flink"}, {Engine: ariadne.EngineSpark}} {
		if _, _, err := ix.AddRowIndexWith(ctx, ariadne.RowIndexDefinition{Key: "user_id"}, o); !errors.Is(err, aerr.ErrInvalidArgument) {
			t.Errorf("engine %+v: %v, want an invalid argument", o, err)
		}
	}
	if _, st, err := ix.AddRowIndexWith(ctx, ariadne.RowIndexDefinition{Name: "u_local", Key: "user_id"}, ariadne.AddRowIndexOptions{Engine: ariadne.EngineDuckDB}); err != nil || st.Files != 2 || st.EngineFilesRead != 0 {
		t.Fatalf("local build through AddRowIndexWith: %+v, %v", st, err)
	}
	if err := ix.DropRowIndex(ctx, "u_local"); err != nil {
		t.Fatal(err)
	}
	// Served at once by the same handle.
	one, err := ix.Lookup(ctx, ariadne.LookupRequest{Column: "user_id", Key: lake.Hot, Columns: []string{"track_uri"}, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	track := one.Rows[0].Values["track_uri"]
	res, err := ix.Lookup(ctx, ariadne.LookupRequest{Column: "track_uri", Key: track, Columns: []string{"user_id"}})
	if err != nil || len(res.Rows) == 0 || !res.Plan.Covered {
		t.Fatalf("lookup on the new row index: %v rows, %v", res, err)
	}
	// Two more files tracked: the row indexes take them in, and a
	// compaction merges their fragments.
	if err := lake.AddFiles(ctx, lake.Files[2:]...); err != nil {
		t.Fatal(err)
	}
	builds, err := ix.UpdateRowIndexes(ctx, nil)
	if err != nil || builds["track_uri"].Files != 2 || builds["user_id"].Files != 2 {
		t.Fatalf("update: %+v, %v", builds, err)
	}
	d, err := ix.DescribeRowIndex(ctx, "track_uri")
	if err != nil || d.Files != 4 || d.Fragments < 2 || d.Version <= info.Version {
		t.Fatalf("describe after update: %+v, %v", d, err)
	}
	comp, err := ix.CompactRowIndexes(ctx)
	if err != nil || comp["track_uri"].FragmentsAfter >= comp["track_uri"].FragmentsBefore || comp["track_uri"].EntriesAfter != d.Entries {
		t.Fatalf("compact: %+v, %v", comp, err)
	}
	desc, err := ix.Describe(ctx)
	if err != nil || len(desc.RowIndexes) != 3 {
		t.Fatalf("describe: %+v, %v", desc, err)
	}
	for _, r := range desc.RowIndexes {
		if r.Name == "track_uri" && (r.Version != comp["track_uri"].Version || r.Files != 4) {
			t.Fatalf("describe serves %+v, compacted to %+v", r, comp["track_uri"])
		}
	}
	if err := ix.DropRowIndex(ctx, "track_uri"); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Lookup(ctx, ariadne.LookupRequest{Column: "track_uri", Key: track}); !errors.Is(err, rowindex.ErrNotFound) {
		t.Fatalf("lookup after drop: %v", err)
	}
	if err := ix.DropRowIndex(ctx, "track_uri"); !errors.Is(err, rowindex.ErrNotFound) {
		t.Fatalf("drop twice: %v", err)
	}
	if err := ix.DropRowIndex(ctx, "../x"); !errors.Is(err, aerr.ErrInvalidArgument) {
		t.Fatalf("drop of a path-like name: %v", err)
	}
}

func TestLookupRowsStreamsPages(t *testing.T) {
	ctx := context.Background()
	lake, ix := openLake(t, 4)
	all, err := ix.Lookup(ctx, ariadne.LookupRequest{Column: "user_id", Key: lake.Hot, Columns: []string{"ts"}})
	if err != nil {
		t.Fatal(err)
	}
	req := ariadne.LookupRequest{Column: "user_id", Keys: []any{lake.Hot, int64(2654435762)}, Columns: []string{"ts"}, Limit: 50}
	n, pages := 0, 0
	for {
		it, err := ix.LookupRows(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		k := 0
		for it.Next() {
			k++
		}
		it.Close()
		if it.Err() != nil || k > 50 {
			t.Fatalf("page %d: %d rows, %v", pages, k, it.Err())
		}
		n, pages = n+k, pages+1
		if it.Cursor() == "" {
			break
		}
		req.Cursor = it.Cursor()
	}
	two, err := ix.Lookup(ctx, ariadne.LookupRequest{Column: "user_id", Key: 2654435762, Columns: []string{"ts"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := len(all.Rows) + len(two.Rows); n != want || pages != (want+49)/50 {
		t.Fatalf("%d rows in %d pages, want %d", n, pages, want)
	}
}

// TestLookupRowsValues: Values gives the current row's values in column
// order, equal to Row's map, for covered rows and rows read from data files,
// whichever of the two is asked first.
func TestLookupRowsValues(t *testing.T) {
	ctx := context.Background()
	lake, ix := openLake(t, 4)
	for _, cols := range [][]string{{"duration_ms", "ts", "user_id"}, {"track_uri", "ts"}, nil} {
		it, err := ix.LookupRows(ctx, ariadne.LookupRequest{Column: "user_id", Key: lake.Hot, Columns: cols, Limit: 20})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for it.Next() {
			var vals []any
			var row ariadne.Row
			if n%2 == 0 {
				vals, row = it.Values(), it.Row()
			} else {
				row, vals = it.Row(), it.Values()
			}
			names := it.Columns()
			if len(vals) != len(names) || len(row.Values) != len(names) || (cols != nil && !slices.Equal(names, cols)) {
				t.Fatalf("columns %v: %d values, row %v", names, len(vals), row.Values)
			}
			for j, c := range names {
				a, _ := json.Marshal(vals[j])
				b, _ := json.Marshal(row.Values[c])
				if string(a) != string(b) || vals[j] == nil {
					t.Fatalf("row %d column %s: Values %s, Row %s", n, c, a, b)
				}
			}
			n++
		}
		if err := it.Err(); err != nil || n != 20 {
			t.Fatalf("columns %v: %d rows, %v", cols, n, err)
		}
		it.Close()
	}
}
