package ariadne

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/internal/playsfixture"
	"github.com/ariadne-go/ariadne/store"
)

// statCounter counts the stats of data files (.parquet) through a store
// and the most in flight at once; each takes a while, as on an object
// store, so that concurrent ones overlap.
type statCounter struct {
	store.Store
	c *statCounts
}

type statCounts struct {
	mu           sync.Mutex
	n, now, most int
	delay        time.Duration
}

func (s statCounter) Stat(ctx context.Context, key string) (store.ObjectInfo, error) {
	if !strings.HasSuffix(key, ".parquet") {
		return s.Store.Stat(ctx, key)
	}
	c := s.c
	c.mu.Lock()
	c.n++
	c.now++
	c.most = max(c.most, c.now)
	c.mu.Unlock()
	time.Sleep(c.delay)
	defer func() {
		c.mu.Lock()
		c.now--
		c.mu.Unlock()
	}()
	return s.Store.Stat(ctx, key)
}

func (c *statCounts) take() (n, most int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, most = c.n, c.most
	c.n, c.most = 0, 0
	return n, most
}

// countedPlays opens the plays lake of 4 files (row index included)
// through a store whose data-file stats counts counts; both close with
// the test.
func countedPlays(t *testing.T, counts *statCounts) (*playsfixture.PlaysLake, *Index) {
	t.Helper()
	return wrappedPlays(t, func(s store.Store) store.Store { return statCounter{s, counts} })
}

// wrappedPlays opens the plays lake of 4 files (row indexes included)
// through a store wrapped by wrap; both close with the test.
func wrappedPlays(t *testing.T, wrap func(store.Store) store.Store) (*playsfixture.PlaysLake, *Index) {
	t.Helper()
	ctx := context.Background()
	lake, err := playsfixture.Plays(ctx, t.TempDir(), 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lake.Close() })
	st, err := Open(ctx, lake.StoreURL, WithStoreWrap(wrap))
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

// TestRowLocatorStatsConcurrently checks that the row locator's freshness
// check stats every located file, several at once but no more than its
// bound, and still refuses the row index when one file (not the first)
// changed since it was indexed, naming it; with a bound of one it stats
// them one after another.
func TestRowLocatorStatsConcurrently(t *testing.T) {
	ctx := context.Background()
	counts := &statCounts{delay: 30 * time.Millisecond}
	lake, ix := countedPlays(t, counts)
	files := lake.Files[:4]
	keys := []any{lake.Hot}
	for _, bound := range []int{1, 2, 3} {
		loc := &joinRowLocator{ix: ix, force: true, stats: bound}
		counts.take()
		rows, why, err := loc.LocateRows(ctx, "user_id", keys, files, true)
		if err != nil || rows.Rows == nil {
			t.Fatalf("bound %d: fresh files: rows %v, %q, %v", bound, rows, why, err)
		}
		if n, most := counts.take(); n != len(files) || most != bound {
			t.Fatalf("bound %d: %d stats, %d at once; want %d, %d", bound, n, most, len(files), bound)
		}
		// What the stats found goes with the rows, for the opens.
		for f := range rows.Rows {
			info, ok := rows.Seen[f]
			fi, err := os.Stat(strings.TrimPrefix(f, "file://"))
			if err != nil || !ok || info.Size != fi.Size() || !info.ModTime.Equal(fi.ModTime()) {
				t.Fatalf("bound %d: %s seen as %+v (%v), want its attributes", bound, f, info, ok)
			}
		}
	}

	// Rewrite the third file with another size.
	path := strings.TrimPrefix(files[2], "file://")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(b, 0), 0o644); err != nil {
		t.Fatal(err)
	}
	// The first file in order that changed decides: with one stat at a
	// time none is made after it; with 3 the fourth may start before the
	// third's ends; with 16 all start at once.
	for _, c := range []struct{ bound, lo, hi int }{{1, 3, 3}, {3, 3, 4}, {0, 4, 4}} {
		loc := &joinRowLocator{ix: ix, force: true, stats: c.bound}
		counts.take()
		rows, why, err := loc.LocateRows(ctx, "user_id", keys, files, true)
		if err != nil || rows.Rows != nil || !strings.Contains(why, "changed since indexed: "+files[2]) {
			t.Fatalf("bound %d: changed file: rows %v, %q, %v", c.bound, rows, why, err)
		}
		if n, _ := counts.take(); n < c.lo || n > c.hi {
			t.Fatalf("bound %d: %d stats, want %d to %d", c.bound, n, c.lo, c.hi)
		}
	}
}

// TestJoinStatsFilesOnce checks that a join through the row index states
// each located file once: the row locator's freshness check does, and the
// files holding rows are opened with what it found (fileindex.LocatedRows
// .Seen), not stated again; on a second join too (footers cached).
func TestJoinStatsFilesOnce(t *testing.T) {
	ctx := context.Background()
	counts := &statCounts{}
	lake, ix := countedPlays(t, counts)
	for run := range 2 {
		counts.take()
		j, err := ix.Join(ctx, JoinRequest{Keys: map[string][]any{"user_id": {lake.Hot}}, RowIndex: JoinRowIndexForce})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for j.Next() {
			n++
		}
		if err := j.Err(); err != nil {
			t.Fatal(err)
		}
		js := j.Stats()
		j.Close()
		stats, _ := counts.take()
		if js.Path != "rowindex" || n == 0 || js.FilesLocated < 2 {
			t.Fatalf("run %d: %d rows, stats %+v: want the row index over several files", run, n, js)
		}
		if stats != js.FilesLocated {
			t.Errorf("run %d: %d stats of data files for %d located files, want one each", run, stats, js.FilesLocated)
		}
	}
}
