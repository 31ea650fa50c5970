package ariadne

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/ariadne-go/ariadne/internal/playsfixture"
	"github.com/ariadne-go/ariadne/rowindex"
	"github.com/ariadne-go/ariadne/store"
)

// manifestReads counts the reads of row index manifests (objects under a
// _manifest/ folder) through a store.
type manifestReads struct {
	store.Store
	mu    *sync.Mutex
	reads map[string]int
}

func (s manifestReads) NewRangeReader(ctx context.Context, key string, off, n int64) (io.ReadCloser, error) {
	if strings.Contains(key, "/_manifest/") {
		s.mu.Lock()
		s.reads[key]++
		s.mu.Unlock()
	}
	return s.Store.NewRangeReader(ctx, key, off, n)
}

// TestFirstLookupReadsManifestOnce: a fresh process's first lookup lists
// the row indexes and opens the one it needs from the manifest the listing
// read — every manifest read once, not again by the open — with the same
// rows as a handle opened by name; a listing that opens nothing keeps no
// manifest; once a row index is open, a refresh reads its newest manifest
// again.
func TestFirstLookupReadsManifestOnce(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	reads := map[string]int{}
	lake, ix := wrappedPlays(t, func(s store.Store) store.Store { return manifestReads{s, &mu, reads} })
	res, err := ix.Lookup(ctx, LookupRequest{Column: "user_id", Key: lake.Hot})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) == 0 {
		t.Fatal("no rows for the hot key")
	}
	mu.Lock()
	if len(reads) == 0 {
		t.Fatal("no manifest read")
	}
	for key, n := range reads {
		if n != 1 {
			t.Errorf("%s read %d times by a fresh process's first lookup, want once", key, n)
		}
	}
	clear(reads)
	mu.Unlock()

	// The same rows as a handle that read its manifest itself.
	st2, err := Open(ctx, lake.StoreURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st2.Close() })
	ix2, err := st2.Index(ctx, playsfixture.PlaysIndex)
	if err != nil {
		t.Fatal(err)
	}
	// A listing that opens nothing (describe, a store's list of indexes)
	// decodes the manifests' heads and keeps none.
	if _, err := ix2.RowIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	ix2.mu.Lock()
	kept := len(ix2.listedMans)
	ix2.mu.Unlock()
	if kept != 0 {
		t.Fatalf("a listing for no open kept %d manifests", kept)
	}
	if _, err := ix2.rowIndex(ctx, "user_id"); err != nil { // opened by name: no manifest kept
		t.Fatal(err)
	}
	res2, err := ix2.Lookup(ctx, LookupRequest{Column: "user_id", Key: lake.Hot})
	if err != nil {
		t.Fatal(err)
	}
	if len(res2.Rows) != len(res.Rows) {
		t.Fatalf("%d rows, %d through the listed manifest", len(res2.Rows), len(res.Rows))
	}

	// An open row index refreshes from its newest manifest.
	if err := ix.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if reads["indexes/"+playsfixture.PlaysIndex+"/row_indexes/user_id/_manifest/latest.json"] == 0 {
		t.Errorf("a refresh of the open row index read no manifest: %v", reads)
	}
}

// TestDamagedRowIndexFailsOnlyItsOwn: a row index whose newest manifest's
// head decodes but whose body does not fails its own lookups (ErrCorrupt),
// not those of the index's other row indexes — also for a fresh process,
// whose listing reads the manifests whole.
func TestDamagedRowIndexFailsOnlyItsOwn(t *testing.T) {
	ctx := context.Background()
	lake, ix := wrappedPlays(t, func(s store.Store) store.Store { return s })
	want, err := ix.Lookup(ctx, LookupRequest{Column: "user_id", Key: lake.Hot})
	if err != nil {
		t.Fatal(err)
	}
	root, err := store.Open(ctx, lake.StoreURL)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	dir := "indexes/" + playsfixture.PlaysIndex + "/row_indexes/ts/_manifest/"
	damaged := 0
	for info, err := range root.List(ctx, store.ListOptions{Prefix: dir}) {
		if err != nil {
			t.Fatal(err)
		}
		b, err := store.ReadAll(ctx, root, info.Key)
		if err != nil {
			t.Fatal(err)
		}
		// Still JSON, the head intact; the fragments not a list.
		b = []byte(strings.Replace(string(b), `"fragments":[`, `"fragments":"damaged","was":[`, 1))
		if err := store.WriteAll(ctx, root, info.Key, b, nil); err != nil {
			t.Fatal(err)
		}
		damaged++
	}
	if damaged == 0 {
		t.Fatal("no manifest of row index ts")
	}
	st, err := Open(ctx, lake.StoreURL)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ix2, err := st.Index(ctx, playsfixture.PlaysIndex)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ix2.Lookup(ctx, LookupRequest{Column: "user_id", Key: lake.Hot})
	if err != nil {
		t.Fatalf("lookup on user_id beside a damaged row index: %v", err)
	}
	if len(got.Rows) != len(want.Rows) {
		t.Fatalf("lookup on user_id beside a damaged row index: %d rows, want %d", len(got.Rows), len(want.Rows))
	}
	if _, err := ix2.Lookup(ctx, LookupRequest{Column: "ts", Range: true}); !errors.Is(err, rowindex.ErrCorrupt) {
		t.Fatalf("lookup on the damaged row index: %v, want ErrCorrupt", err)
	}
}
