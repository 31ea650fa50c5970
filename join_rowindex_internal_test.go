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

// TestRowLocatorStatsConcurrently checks that the row locator's freshness
// check stats every located file, several at once but no more than its
// bound, and still refuses the row index when one file (not the first)
// changed since it was indexed, naming it; with a bound of one it stats
// them one after another.
func TestRowLocatorStatsConcurrently(t *testing.T) {
	ctx := context.Background()
	lake, err := playsfixture.Plays(ctx, t.TempDir(), 4)
	if err != nil {
		t.Fatal(err)
	}
	defer lake.Close()
	counts := &statCounts{delay: 30 * time.Millisecond}
	st, err := Open(ctx, lake.StoreURL, WithStoreWrap(func(s store.Store) store.Store { return statCounter{s, counts} }))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ix, err := st.Index(ctx, playsfixture.PlaysIndex)
	if err != nil {
		t.Fatal(err)
	}
	files := lake.Files[:4]
	keys := []any{lake.Hot}
	for _, bound := range []int{1, 2, 3} {
		loc := &joinRowLocator{ix: ix, force: true, stats: bound}
		counts.take()
		rows, why, err := loc.LocateRows(ctx, "user_id", keys, files, true)
		if err != nil || rows == nil {
			t.Fatalf("bound %d: fresh files: rows %v, %q, %v", bound, rows, why, err)
		}
		if n, most := counts.take(); n != len(files) || most != bound {
			t.Fatalf("bound %d: %d stats, %d at once; want %d, %d", bound, n, most, len(files), bound)
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
	for _, bound := range []int{1, 3, 0} {
		loc := &joinRowLocator{ix: ix, force: true, stats: bound}
		counts.take()
		rows, why, err := loc.LocateRows(ctx, "user_id", keys, files, true)
		if err != nil || rows != nil || !strings.Contains(why, "changed since indexed: "+files[2]) {
			t.Fatalf("bound %d: changed file: rows %v, %q, %v", bound, rows, why, err)
		}
		if n, _ := counts.take(); n != len(files) {
			t.Fatalf("bound %d: %d stats, want %d", bound, n, len(files))
		}
	}
}
