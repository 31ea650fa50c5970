package ariadne_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ariadne-go/ariadne"
	"github.com/ariadne-go/ariadne/internal/playsfixture"
)

// joinAll runs req and returns its columns, rows as sorted JSON lines and
// stats.
func joinAll(t *testing.T, ix *ariadne.Index, req ariadne.JoinRequest) ([]string, []string, ariadne.JoinStats) {
	t.Helper()
	j, err := ix.Join(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	var rows []map[string]any
	for j.Next() {
		rows = append(rows, j.Record())
	}
	if err := j.Err(); err != nil {
		t.Fatal(err)
	}
	return j.Columns(), rowsJSON(t, rows, j.Columns()), j.Stats()
}

// rowIndexPathAllowed is when the join's prefilter (and so the row-index
// path) applies: the index side's unmatched rows are not in the result.
func rowIndexPathAllowed(how string, indexLeft bool) bool {
	switch how {
	case "inner", "semi":
		return true
	case "left", "anti":
		return !indexLeft
	case "right":
		return indexLeft
	}
	return false
}

// TestJoinRowIndexPath runs the join matrix (every join type, index on
// either side, with and without a selection) with keys hot, absent, null
// and ordinary through the row index on user_id (forced, and auto) and
// without it: the same columns and rows, on the plays lake's Parquet files.
func TestJoinRowIndexPath(t *testing.T) {
	lake, ix := openLake(t, 4)
	other := lake.Hot
	// Another user with rows: the first key of a lookup on the ts index.
	one, err := ix.Lookup(context.Background(), ariadne.LookupRequest{Column: "ts", Range: true, Columns: []string{"user_id"}, Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range one.Rows {
		if u := r.Values["user_id"].(int64); u != lake.Hot {
			other = u
			break
		}
	}
	keySets := map[string]map[string][]any{
		"hot absent null":     {"user_id": {lake.Hot, int64(-7), nil, other}, "tag": {"h", "a", "n", "o"}},
		"absent only":         {"user_id": {int64(-7), int64(-8)}},
		"null only":           {"user_id": {nil}},
		"repeated with a tag": {"user_id": {other, other, lake.Hot}, "tag": {"x", "y", nil}},
	}
	selects := map[string][]string{"all": nil, "select": {"duration_ms", "user_id", "track_uri"}}
	taken := 0
	for kname, keys := range keySets {
		for _, how := range []string{"inner", "left", "right", "full", "semi", "anti"} {
			for _, left := range []bool{false, true} {
				for sname, sel := range selects {
					name := strings.Join([]string{kname, how, map[bool]string{true: "index left", false: "keys left"}[left], sname}, "/")
					t.Run(name, func(t *testing.T) {
						req := ariadne.JoinRequest{Keys: keys, On: []string{"user_id"}, How: how, IndexOnLeft: left, Select: sel, RowIndex: "off"}
						wc, wr, ws := joinAll(t, ix, req)
						if ws.Path == "rowindex" {
							t.Fatalf("off took the row index: %+v", ws)
						}
						for _, mode := range []string{"force", "auto"} {
							req.RowIndex = mode
							gc, gr, gs := joinAll(t, ix, req)
							if !slices.Equal(gc, wc) || !slices.Equal(gr, wr) {
								t.Fatalf("%s: columns %v, %d rows; without the row index %v, %d rows\n%v\n%v", mode, gc, len(gr), wc, len(wr), gr, wr)
							}
							want := rowIndexPathAllowed(how, left) && mode == "force" && gs.FilesLocated > 0
							if want && (gs.Path != "rowindex" || !strings.Contains(gs.Plan, "row index user_id")) {
								t.Fatalf("%s: path %q, plan %q; want the row index", mode, gs.Path, gs.Plan)
							}
							if !rowIndexPathAllowed(how, left) && gs.Path == "rowindex" {
								t.Fatalf("%s: took the row index for a %s join: %+v", mode, how, gs)
							}
							if gs.Path == "rowindex" {
								taken++
								if gs.RowsScanned != 0 || gs.FilesLocated < 1 || gs.RowsLoaded == 0 && len(gr) > 0 && how == "inner" {
									t.Fatalf("%s: stats %+v", mode, gs)
								}
							}
						}
					})
				}
			}
		}
	}
	if taken == 0 {
		t.Fatal("no join took the row index")
	}
	if _, err := ix.Join(context.Background(), ariadne.JoinRequest{Keys: keySets["absent only"], RowIndex: "sometimes"}); err == nil {
		t.Fatal("a bad row index mode was accepted")
	}
}

// TestJoinRowIndexStale: a data file added (indexed by the file index,
// not yet by the row index) or rewritten after the row index was built
// makes the join leave the row index and read the located files, with the
// same answer as without it; once the row index is updated it serves
// again.
func TestJoinRowIndexStale(t *testing.T) {
	ctx := context.Background()
	lake, ix := openLake(t, 2)
	keys := map[string][]any{"user_id": {lake.Hot}}
	req := ariadne.JoinRequest{Keys: keys, Select: []string{"user_id", "ts", "track_uri"}, RowIndex: "force"}
	_, before, st := joinAll(t, ix, req)
	if st.Path != "rowindex" {
		t.Fatalf("fresh row index not used: %+v", st)
	}

	// A file the row index does not hold yet.
	if err := lake.AddFiles(ctx, lake.Files[3]); err != nil {
		t.Fatal(err)
	}
	if err := lake.UpdateFileIndex(ctx); err != nil {
		t.Fatal(err)
	}
	// A fresh handle (a new process) sees the new file index version.
	st2, err := ariadne.Open(ctx, lake.StoreURL)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	ix, err = st2.Index(ctx, playsfixture.PlaysIndex)
	if err != nil {
		t.Fatal(err)
	}
	_, got, st := joinAll(t, ix, req)
	req.RowIndex = "off"
	_, want, _ := joinAll(t, ix, req)
	req.RowIndex = "force"
	if st.Path == "rowindex" || !strings.Contains(st.Plan, "missing located file") || !slices.Equal(got, want) || len(got) <= len(before) {
		t.Fatalf("added file: path %q plan %q, %d rows, want %d (before %d)", st.Path, st.Plan, len(got), len(want), len(before))
	}

	// Updated, the row index serves again.
	if _, err := ix.UpdateRowIndexes(ctx, nil); err != nil {
		t.Fatal(err)
	}
	_, got, st = joinAll(t, ix, req)
	if st.Path != "rowindex" || !slices.Equal(got, want) {
		t.Fatalf("updated row index: path %q plan %q, %d rows, want %d", st.Path, st.Plan, len(got), len(want))
	}

	// A located file rewritten in place (another file's bytes).
	b, err := os.ReadFile(strings.TrimPrefix(lake.Files[0], "file://"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(strings.TrimPrefix(lake.Files[1], "file://"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, got, st = joinAll(t, ix, req)
	req.RowIndex = "off"
	_, want, _ = joinAll(t, ix, req)
	req.RowIndex = "force"
	if st.Path == "rowindex" || !strings.Contains(st.Plan, "changed since indexed") || !slices.Equal(got, want) {
		t.Fatalf("rewritten file: path %q plan %q, %d rows, want %d", st.Path, st.Plan, len(got), len(want))
	}
}

// TestJoinRowIndexAutoDirect: in auto mode the row index's 5 % share limit
// holds for joins whose rows go into DuckDB, not for a plain inner join the
// rows read answer directly (they stream to the caller without DuckDB), and
// both answer as without the row index.
func TestJoinRowIndexAutoDirect(t *testing.T) {
	_, ix := openLake(t, 4)
	// Many users: every user of the rows a range lookup returns.
	res, err := ix.Lookup(context.Background(), ariadne.LookupRequest{Column: "ts", Range: true, Columns: []string{"user_id"}, Limit: 5000})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	var users []any
	for _, r := range res.Rows {
		if u := r.Values["user_id"].(int64); !seen[u] {
			seen[u] = true
			users = append(users, u)
		}
	}
	keys := map[string][]any{"user_id": users}
	for _, how := range []string{"inner", "semi"} {
		req := ariadne.JoinRequest{Keys: keys, On: []string{"user_id"}, How: how, RowIndex: "off"}
		wc, wr, _ := joinAll(t, ix, req)
		req.RowIndex = "auto"
		gc, gr, gs := joinAll(t, ix, req)
		if !slices.Equal(gc, wc) || !slices.Equal(gr, wr) || len(gr) == 0 {
			t.Fatalf("%s: columns %v, %d rows; without the row index %v, %d rows", how, gc, len(gr), wc, len(wr))
		}
		if direct := how == "inner"; (gs.Path == "rowindex") != direct || !direct && !strings.Contains(gs.Plan, "% limit") {
			t.Fatalf("%s: path %q plan %q", how, gs.Path, gs.Plan)
		}
	}
}
