package rowindex

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ariadne-go/ariadne/store"
)

// seqHookStore runs hooks[i] just before the (i+1)-th manifest commit
// through it (then nothing).
type seqHookStore struct {
	store.Store
	mu    sync.Mutex
	n     int
	hooks []func()
}

func (h *seqHookStore) NewWriter(ctx context.Context, key string, opts *store.WriteOptions) (store.Writer, error) {
	if strings.Contains(key, "/_manifest/") {
		h.mu.Lock()
		i := h.n
		h.n++
		h.mu.Unlock()
		if i < len(h.hooks) {
			h.hooks[i]()
		}
	}
	return h.Store.NewWriter(ctx, key, opts)
}

// TestUpdateRebasesTwice: an Update that loses its commit to a Compact and
// then, rebased, to a Remove still lands its files and its fragment (the
// second rebase must re-apply onto the first rebase's head, not the version
// Update started from).
func TestUpdateRebasesTwice(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	data, uris, _ := testLake(t, dir, true)
	res := StoreResolver{data}
	idx, _ := store.Open(ctx, "file://"+filepath.Join(dir, "idx"))
	def := Definition{Name: "u", Key: "user_id", Aggregates: []Aggregate{{Op: "count"}}}
	// Three fragments, so that a compaction leaves fewer than Update saw.
	if _, _, err := Create(ctx, idx, def, res, uris[:1]); err != nil {
		t.Fatal(err)
	}
	for i := 2; i <= 3; i++ {
		if _, _, err := Update(ctx, idx, "u", res, uris[:i]); err != nil {
			t.Fatal(err)
		}
	}
	h := &seqHookStore{Store: idx, hooks: []func(){
		func() {
			if _, err := Compact(ctx, idx, "u"); err != nil {
				t.Error(err)
			}
		},
		func() {
			if _, _, err := Remove(ctx, idx, "u", uris[:1]); err != nil {
				t.Error(err)
			}
		},
	}}
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("Update panicked: %v", r)
			}
		}()
		if _, _, err := Update(ctx, h, "u", res, uris); err != nil {
			t.Fatal(err)
		}
	}()
	listed, frags, ri := listing(t, ctx, idx, "u", res)
	if !slices.Equal(listed, uris[1:]) || !slices.Equal(frags, fragmentFiles(t, ctx, idx, "u")) {
		t.Fatalf("files %v (want %v), fragments %v on disk %v", listed, uris[1:], frags, fragmentFiles(t, ctx, idx, "u"))
	}
	for _, k := range []int64{hot(0), hot(1), hot(7)} {
		kb, _ := EncodeKey(k)
		r, err := ri.Lookup(ctx, Query{Key: k})
		if err != nil {
			t.Fatal(err)
		}
		want := fullScan(t, dir, uris[1:], "user_id", kb, kb)
		checkRows(t, "after two rebases", r.Rows, want)
	}
}
