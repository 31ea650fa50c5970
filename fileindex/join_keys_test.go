package fileindex

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"testing"

	"github.com/ariadne-go/ariadne/index"
	"github.com/ariadne-go/ariadne/schema"
)

// TestJoinDirectWithoutDuckDB checks that a join the row index answers
// directly takes no database (its keys stay in Go), that every way of
// leaving the direct answer — a stale row index found before any row went out,
// a row index that does not answer — still gets the keys into DuckDB and
// the rows of the full path, and that the handle's footer cache leaves
// each join's request and byte counts its own: a second join reads no
// footers, two at once each count what one alone does.
func TestJoinDirectWithoutDuckDB(t *testing.T) {
	ctx := context.Background()
	uris, _ := pqJoinLake(t, t.TempDir(), 3)
	ti := newTestIndex(t, "pqheld", pqJoinSchema, "parquet", nil, func(ix *index.Index) error {
		return ix.AddIndex(ctx, "id")
	})
	if _, err := ti.ix.AddFiles(ctx, uris...); err != nil {
		t.Fatal(err)
	}
	if _, err := ti.fi.Update(ctx, UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	long := []schema.Type{schema.Long}
	type run struct {
		cols, rows []string
		st         JoinStats
		tookDB     bool
	}
	join := func(fi *FileIndex, ks KeySource, opts JoinOptions) run {
		r, err := fi.Join(ctx, ks, []string{"id"}, Inner, opts)
		if err != nil {
			t.Fatal(err)
		}
		var rows []string
		for {
			b, err := r.Next(ctx)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, row := range b {
				rows = append(rows, fmt.Sprint(row))
			}
		}
		slices.Sort(rows)
		// Once the rows are read: a stale row index's fallback takes the
		// database while they stream.
		took := r.db != nil
		st := r.Stats()
		cols := r.Schema().Names()
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		return run{cols, rows, st, took}
	}
	for _, tc := range []struct {
		name string
		keys func() KeySource
	}{
		{"one key", func() KeySource { return keys("id", long, []any{int64(7)}) }},
		{"twice and null", func() KeySource {
			return keys("id", long, []any{int64(7)}, []any{nil}, []any{int64(9)}, []any{int64(7)})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			full := join(ti.fi, tc.keys(), JoinOptions{force: PathFull})
			if len(full.rows) < 2 || !full.tookDB {
				t.Fatalf("full path: %d rows, database %v", len(full.rows), full.tookDB)
			}
			same := func(what string, got run, direct, tookDB bool) {
				t.Helper()
				if got.st.Direct != direct || got.tookDB != tookDB {
					t.Fatalf("%s: direct %v database %v, want %v %v (%+v)", what, got.st.Direct, got.tookDB, direct, tookDB, got.st)
				}
				if !slices.Equal(got.cols, full.cols) || !slices.Equal(got.rows, full.rows) {
					t.Fatalf("%s: %v %v, want %v %v", what, got.cols, got.rows, full.cols, full.rows)
				}
			}
			idle := len(ti.fi.joinDBs.idle)
			same("direct", join(ti.fi, tc.keys(), JoinOptions{Rows: &oracleLocator{}}), true, false)
			if n := len(ti.fi.joinDBs.idle); n != idle {
				t.Fatalf("the direct answer changed the pool: %d idle databases, were %d", n, idle)
			}
			stale := join(ti.fi, tc.keys(), JoinOptions{Rows: &oracleLocator{shift: true}})
			same("stale row index", stale, false, true)
			if stale.st.Path == PathRowIndex {
				t.Fatalf("stale row index kept: %+v", stale.st)
			}
			same("no row index answer", join(ti.fi, tc.keys(), JoinOptions{Rows: noLocator{}}), false, true)
		})
	}

	// Counts per join with the footer cache: a fresh handle's first join
	// opens the files, its second reads only pages; another fresh handle
	// counts the first join's figures again, and concurrent joins on one
	// handle each count exactly one join's reads.
	ks := func() KeySource { return keys("id", long, []any{int64(7)}, []any{int64(9)}) }
	fi := New(ti.ix, Options{})
	first := join(fi, ks(), JoinOptions{Rows: &oracleLocator{}})
	second := join(fi, ks(), JoinOptions{Rows: &oracleLocator{}})
	if !first.st.Direct || !second.st.Direct || !slices.Equal(first.rows, second.rows) {
		t.Fatalf("joins differ: %+v %+v", first.st, second.st)
	}
	if !(second.st.Requests > 0 && second.st.Requests < first.st.Requests && second.st.Bytes > 0 && second.st.Bytes < first.st.Bytes) {
		t.Fatalf("first join %d requests %d bytes, second %d %d: the second must read pages only", first.st.Requests, first.st.Bytes, second.st.Requests, second.st.Bytes)
	}
	if again := join(New(ti.ix, Options{}), ks(), JoinOptions{Rows: &oracleLocator{}}); again.st.Requests != first.st.Requests || again.st.Bytes != first.st.Bytes {
		t.Fatalf("a fresh handle's join: %d requests %d bytes, the first %d %d", again.st.Requests, again.st.Bytes, first.st.Requests, first.st.Bytes)
	}
	var wg sync.WaitGroup
	got := make([]run, 4)
	for i := range got {
		wg.Go(func() { got[i] = join(fi, ks(), JoinOptions{Rows: &oracleLocator{}}) })
	}
	wg.Wait()
	for _, g := range got {
		if g.st.Requests != second.st.Requests || g.st.Bytes != second.st.Bytes || !slices.Equal(g.rows, second.rows) {
			t.Fatalf("concurrent join: %d requests %d bytes, one alone %d %d", g.st.Requests, g.st.Bytes, second.st.Requests, second.st.Bytes)
		}
	}
}

// noLocator never answers.
type noLocator struct{}

func (noLocator) LocateRows(context.Context, string, []any, []string, bool) (LocatedRows, string, error) {
	return LocatedRows{}, "no row index", nil
}
