package ariadne_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne"
	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/internal/playsfixture"
	"github.com/ariadne-go/ariadne/rowindex"
)

// openLake generates the plays lake with its first n files indexed and
// opens its store through the face.
func openLake(t *testing.T, n int) (*playsfixture.PlaysLake, *ariadne.Index) {
	t.Helper()
	ctx := context.Background()
	lake, err := playsfixture.Plays(ctx, t.TempDir(), n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lake.Close() })
	st, err := ariadne.Open(ctx, lake.StoreURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ix, err := st.Index(ctx, playsfixture.PlaysIndex)
	if err != nil {
		t.Fatal(err)
	}
	return lake, ix
}

func TestLookupValueModel(t *testing.T) {
	ctx := context.Background()
	lake, ix := openLake(t, 4)
	// The same rows served from cover columns and read from the data files
	// carry the same values, and render the same JSON.
	cov, err := ix.Lookup(ctx, ariadne.LookupRequest{Column: "user_id", Key: lake.Hot, Columns: []string{"user_id", "ts", "duration_ms"}})
	if err != nil {
		t.Fatal(err)
	}
	read, err := ix.Lookup(ctx, ariadne.LookupRequest{Column: "user_id", Key: strconv.FormatInt(lake.Hot, 10), Columns: []string{"user_id", "ts", "duration_ms", "track_uri"}})
	if err != nil {
		t.Fatal(err)
	}
	if !cov.Plan.Covered || cov.Plan.Data.Requests != 0 || read.Plan.Covered {
		t.Fatalf("plans: covered %+v, read %+v", cov.Plan, read.Plan)
	}
	if len(cov.Rows) < 10 || len(cov.Rows) != len(read.Rows) {
		t.Fatalf("%d covered rows, %d read rows", len(cov.Rows), len(read.Rows))
	}
	for i := range cov.Rows {
		c, r := cov.Rows[i], read.Rows[i]
		if c.File != r.File || c.Row != r.Row || !c.Covered || r.Covered {
			t.Fatalf("row %d: %+v vs %+v", i, c, r)
		}
		if _, ok := c.Values["ts"].(time.Time); !ok {
			t.Fatalf("covered ts is %T", c.Values["ts"])
		}
		for _, col := range []string{"user_id", "ts", "duration_ms"} {
			cj, _ := json.Marshal(c.Values[col])
			rj, _ := json.Marshal(r.Values[col])
			if string(cj) != string(rj) {
				t.Fatalf("row %d column %s: covered %s, read %s", i, col, cj, rj)
			}
		}
		if r.Values["user_id"] != lake.Hot || r.Key != lake.Hot {
			t.Fatalf("row %d: key %v (%T)", i, r.Values["user_id"], r.Values["user_id"])
		}
	}
	if len(cov.Aggregates) != 1 || cov.Aggregates[0].Values["count"] != int64(len(cov.Rows)) {
		t.Fatalf("aggregates %+v for %d rows", cov.Aggregates, len(cov.Rows))
	}
}

func TestLookupTypedKeys(t *testing.T) {
	ctx := context.Background()
	_, ix := openLake(t, 2)
	for _, k := range []any{"u1", 3.5, true, time.Now()} {
		_, err := ix.Lookup(ctx, ariadne.LookupRequest{Column: "user_id", Key: k})
		if !errors.Is(err, aerr.ErrInvalidArgument) {
			t.Errorf("key %v (%T): %v, want invalid argument", k, k, err)
		}
	}
	if _, err := ix.Lookup(ctx, ariadne.LookupRequest{Column: "ts", Key: 12}); !errors.Is(err, aerr.ErrInvalidArgument) {
		t.Errorf("int key on a timestamp column: %v", err)
	}
	if _, err := ix.Lookup(ctx, ariadne.LookupRequest{Column: "track_uri", Key: "x"}); !errors.Is(err, rowindex.ErrNotFound) {
		t.Errorf("no row index: %v", err)
	}
	if _, err := ix.Lookup(ctx, ariadne.LookupRequest{Column: "user_id"}); !errors.Is(err, rowindex.ErrBadQuery) {
		t.Errorf("no key: %v", err)
	}
	if _, err := ix.Lookup(ctx, ariadne.LookupRequest{Column: "user_id", Low: 1, High: 2}); !errors.Is(err, rowindex.ErrBadQuery) {
		t.Errorf("range on a hash row index: %v", err)
	}
}

func TestLookupRangeAndFilter(t *testing.T) {
	ctx := context.Background()
	lake, ix := openLake(t, 4)
	all, err := ix.Lookup(ctx, ariadne.LookupRequest{Column: "user_id", Key: lake.Hot, Columns: []string{"ts", "duration_ms"}})
	if err != nil {
		t.Fatal(err)
	}
	// A range of timestamps, given as ISO-8601 text, on the sorted row
	// index: the hot user's rows in it are those of the full lookup in it.
	lo, hi := all.Rows[1].Values["ts"].(time.Time), all.Rows[len(all.Rows)-2].Values["ts"].(time.Time)
	rng, err := ix.Lookup(ctx, ariadne.LookupRequest{Column: "ts", Low: lo.Format(time.RFC3339Nano), High: hi,
		Columns: []string{"ts", "user_id"}, Where: []ariadne.Filter{{Column: "user_id", Op: "=", Value: strconv.FormatInt(lake.Hot, 10)}}})
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, r := range all.Rows {
		if ts := r.Values["ts"].(time.Time); !ts.Before(lo) && !ts.After(hi) {
			want++
		}
	}
	if len(rng.Rows) != want || want == 0 {
		t.Fatalf("range: %d rows, want %d", len(rng.Rows), want)
	}
	// A hash row index on ts that sorts first by name: the range still
	// takes the sorted one (named ts, like its column), one key takes the
	// first by name, and RowIndex picks by name (a range on the hash one
	// is a bad query).
	rngReq := ariadne.LookupRequest{Column: "ts", Low: lo.Format(time.RFC3339Nano), High: hi, Columns: []string{"ts", "user_id"},
		Where: []ariadne.Filter{{Column: "user_id", Op: "=", Value: strconv.FormatInt(lake.Hot, 10)}}}
	if _, _, err := ix.AddRowIndex(ctx, ariadne.RowIndexDefinition{Name: "0_ts_hash", Key: "ts", Kind: rowindex.KindHash}); err != nil {
		t.Fatal(err)
	}
	again, err := ix.Lookup(ctx, rngReq)
	if err != nil || again.RowIndex != rng.RowIndex || len(again.Rows) != want {
		t.Fatalf("range beside a hash row index: %v, %+v", err, again)
	}
	one, err := ix.Lookup(ctx, ariadne.LookupRequest{Column: "ts", Key: lo})
	if err != nil || one.RowIndex != "0_ts_hash" || len(one.Rows) == 0 { // the first by name, though one is named ts
		t.Fatalf("one key: %v, %+v", err, one)
	}
	named, err := ix.Lookup(ctx, ariadne.LookupRequest{RowIndex: rng.RowIndex, Key: lo})
	if err != nil || named.RowIndex != rng.RowIndex || len(named.Rows) != len(one.Rows) {
		t.Fatalf("by name: %v, %+v", err, named)
	}
	rngReq.RowIndex = "0_ts_hash"
	if _, err := ix.Lookup(ctx, rngReq); !errors.Is(err, rowindex.ErrBadQuery) {
		t.Fatalf("range on the hash row index named: %v", err)
	}
	// A filter on a cover column.
	flt, err := ix.Lookup(ctx, ariadne.LookupRequest{Column: "user_id", Key: lake.Hot, Columns: []string{"duration_ms"},
		Where: []ariadne.Filter{{Column: "duration_ms", Op: ">=", Value: 200000}}})
	if err != nil {
		t.Fatal(err)
	}
	want = 0
	for _, r := range all.Rows {
		if r.Values["duration_ms"].(int64) >= 200000 {
			want++
		}
	}
	if len(flt.Rows) != want {
		t.Fatalf("filter: %d rows, want %d", len(flt.Rows), want)
	}
}

func TestLookupBatchPages(t *testing.T) {
	ctx := context.Background()
	lake, ix := openLake(t, 4)
	// Keys with rows, one without, the hot key repeated.
	keys := []any{lake.Hot, int64(-5), "2147483647", lake.Hot}
	full, err := ix.Lookup(ctx, ariadne.LookupRequest{Column: "user_id", Keys: keys, Columns: []string{"user_id", "duration_ms"}})
	if err != nil {
		t.Fatal(err)
	}
	if full.Cursor != "" || len(full.Rows) == 0 {
		t.Fatalf("full batch: %d rows, cursor %q", len(full.Rows), full.Cursor)
	}
	var paged []ariadne.Row
	req := ariadne.LookupRequest{Column: "user_id", Keys: keys, Columns: []string{"user_id", "duration_ms"}, Limit: 7}
	for pages := 0; ; pages++ {
		res, err := ix.Lookup(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Rows) == 0 || len(res.Rows) > 7 {
			t.Fatalf("page %d: %d rows", pages, len(res.Rows))
		}
		paged = append(paged, res.Rows...)
		if res.Cursor == "" {
			break
		}
		req.Cursor = res.Cursor
	}
	if !slices.EqualFunc(paged, full.Rows, func(a, b ariadne.Row) bool { return a.File == b.File && a.Row == b.Row }) {
		t.Fatalf("pages hold %d rows, the full batch %d", len(paged), len(full.Rows))
	}
	for _, bad := range []string{"b1.!!", "b1.eyJpIjo5OX0", "garbage", "eyJrIjoiQUFBIn0"} {
		req.Cursor = bad
		if _, err := ix.Lookup(ctx, req); !errors.Is(err, rowindex.ErrBadQuery) {
			t.Errorf("cursor %q: %v", bad, err)
		}
	}
}

func TestLocate(t *testing.T) {
	ctx := context.Background()
	lake, ix := openLake(t, 4)
	res, err := ix.Locate(ctx, ariadne.LocateRequest{Keys: map[string][]any{"user_id": {lake.Hot, json.Number("-5")}}, PerKey: true})
	if err != nil {
		t.Fatal(err)
	}
	// The hot user's rows are in one bucket file per day.
	rows, err := ix.Lookup(ctx, ariadne.LookupRequest{Column: "user_id", Key: lake.Hot, Columns: []string{"user_id"}})
	if err != nil {
		t.Fatal(err)
	}
	var holding []string
	for _, r := range rows.Rows {
		if !slices.Contains(holding, r.File) {
			holding = append(holding, r.File)
		}
	}
	slices.Sort(holding)
	if len(holding) == 0 || !slices.Equal(res.Files, holding) || len(res.PerKey) != 2 ||
		!slices.Equal(res.PerKey[0].Files, holding) || len(res.PerKey[1].Files) > 1 {
		t.Fatalf("locate: %+v", res)
	}
	if _, err := ix.Locate(ctx, ariadne.LocateRequest{Keys: map[string][]any{"nope": {1}}}); !errors.Is(err, aerr.ErrColumnNotFound) {
		t.Fatalf("locate on an unindexed column: %v", err)
	}
}

func TestRefreshServesAnotherProcesssUpdate(t *testing.T) {
	ctx := context.Background()
	lake, ix := openLake(t, 2)
	count := func() int {
		res, err := ix.Lookup(ctx, ariadne.LookupRequest{Column: "user_id", Key: lake.Hot, Columns: []string{"user_id"}})
		if err != nil {
			t.Fatal(err)
		}
		return len(res.Rows)
	}
	before, v0 := count(), ix.Versions()["user_id"]
	// Another handle, as another process would, tracks and indexes the
	// other two files.
	other, err := ariadne.Open(ctx, lake.StoreURL)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	oix, err := other.Index(ctx, playsfixture.PlaysIndex)
	if err != nil {
		t.Fatal(err)
	}
	if err := lake.AddFiles(ctx, lake.Files[2:]...); err != nil {
		t.Fatal(err)
	}
	up, err := oix.Update(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if up.File.NewFiles != 2 || up.RowIndexes["user_id"].Files != 2 {
		t.Fatalf("update: %+v", up)
	}
	if n := count(); n != before {
		t.Fatalf("before refresh: %d rows, was %d", n, before)
	}
	// Queries running across the refresh keep working.
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 5 {
				if _, err := ix.Lookup(ctx, ariadne.LookupRequest{Column: "user_id", Key: lake.Hot, Limit: 3}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	if err := ix.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if n, v := count(), ix.Versions()["user_id"]; n <= before || v <= v0 {
		t.Fatalf("after refresh: %d rows (was %d), version %d (was %d)", n, before, v, v0)
	}
}

func TestStoreIndexNames(t *testing.T) {
	ctx := context.Background()
	lake, _ := openLake(t, 1)
	st, err := ariadne.Open(ctx, lake.StoreURL)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	names, err := st.Indexes(ctx)
	if err != nil || !slices.Equal(names, []string{"plays"}) {
		t.Fatalf("indexes %v, %v", names, err)
	}
	for _, n := range []string{"../x", "a/b", "..", ".hidden", ""} {
		if _, err := st.Index(ctx, n); !errors.Is(err, aerr.ErrInvalidArgument) {
			t.Errorf("index name %q: %v", n, err)
		}
	}
	if _, err := st.Index(ctx, "missing"); !errors.Is(err, aerr.ErrIndexNotFound) || ariadne.ErrorKind(err) != "index not found" {
		t.Errorf("missing index: %v", err)
	}
	d, err := func() (*ariadne.Description, error) {
		ix, err := st.Index(ctx, "plays")
		if err != nil {
			return nil, err
		}
		return ix.Describe(ctx)
	}()
	if err != nil || len(d.RowIndexes) != 2 || d.FileCount != 1 {
		t.Fatalf("describe: %+v, %v", d, err)
	}
}

// TestAutoCacheBytes: with no budget set, a row index's cache holds its
// fragments in the three quarters kept for them, within the default and
// the cap.
func TestAutoCacheBytes(t *testing.T) {
	frag := func(sizes ...int64) *rowindex.Manifest {
		m := &rowindex.Manifest{}
		for _, s := range sizes {
			m.Fragments = append(m.Fragments, rowindex.FragmentEntry{Size: s})
		}
		return m
	}
	if got := ariadne.AutoCacheBytes(frag(1 << 20)); got != rowindex.DefaultCacheBytes {
		t.Errorf("small index: %d", got)
	}
	m := frag(150<<20, 103<<20) // the 1 GB benchmark lake's 253 MB
	if got := ariadne.AutoCacheBytes(m); got*3/4 < 253<<20+32<<20 || got > 400<<20 {
		t.Errorf("253 MiB of fragments: budget %d", got)
	}
	if got := ariadne.AutoCacheBytes(frag(10 << 30)); got != ariadne.MaxAutoCacheBytes {
		t.Errorf("10 GiB of fragments: %d", got)
	}
}
