package rowindex

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"

	"github.com/ariadne-go/ariadne/store"
)

// TestDropFencesStaleWriters: a writer that loaded a row index before a Drop
// cannot commit over the Drop, nor over a Create of the same name after it.
// Before Drop committed a tombstone it deleted the whole manifest log, the
// next Create started again at version 1, and a stale Update's commit of
// version 2 succeeded: the newest manifest was the dropped index's, whose
// fragments the Drop had deleted.
func TestDropFencesStaleWriters(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	data, uris, _ := testLake(t, dir, false)
	idx, _ := store.Open(ctx, "file://"+filepath.Join(dir, "idx"))
	res := StoreResolver{data}
	def := Definition{Name: "u", Key: "user_id"}
	m1, _, err := Create(ctx, idx, def, res, uris[:2])
	if err != nil {
		t.Fatal(err)
	}
	// An Update that loaded version 1 and built its fragments, not yet
	// committed: what it would commit, and what it would rebase.
	stale := m1.clone()
	stale.Version++
	if err := Drop(ctx, idx, "u"); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, idx, "u", Options{Resolver: res}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Open after Drop: %v", err)
	}
	if defs, err := List(ctx, idx); err != nil || len(defs) != 0 {
		t.Fatalf("List after Drop: %v, %v", defs, err)
	}
	if frags := fragmentFiles(t, ctx, idx, "u"); len(frags) != 0 {
		t.Fatalf("fragments left by Drop: %v", frags)
	}
	if err := Drop(ctx, idx, "u"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second Drop: %v", err)
	}
	if _, _, err := Update(ctx, idx, "u", res, uris); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Update of a dropped row index: %v", err)
	}
	// The tombstone is the only manifest left, and a format-3 build refuses it.
	var keys []string
	for info, err := range idx.List(ctx, store.ListOptions{Prefix: manifestDir("u")}) {
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, info.Key)
	}
	if len(keys) != 1 || keys[0] != manifestKey("u", 2) {
		t.Fatalf("manifests after Drop: %v", keys)
	}
	b, err := store.ReadAll(ctx, idx, keys[0])
	if err != nil {
		t.Fatal(err)
	}
	var tomb Manifest
	if err := json.Unmarshal(b, &tomb); err != nil || !tomb.Dropped || tomb.FormatVersion != 4 {
		t.Fatalf("tombstone %s: %v", b, err)
	}

	// Created again over the same first two files: the same file ids, so
	// only the incarnation tells the stale Update's base from it.
	m2, _, err := Create(ctx, idx, def, res, uris[:2])
	if err != nil {
		t.Fatal(err)
	}
	if m2.Version != 3 || m2.CreatedAt != 3 || m2.NextFileID != m1.NextFileID || m2.FormatVersion != 4 {
		t.Fatalf("Create after Drop: version %d, created at %d, next file id %d (was %d), format %d", m2.Version, m2.CreatedAt, m2.NextFileID, m1.NextFileID, m2.FormatVersion)
	}
	if err := commitManifest(ctx, idx, stale); !errors.Is(err, ErrConcurrentUpdate) {
		t.Fatalf("stale commit over the tombstone: %v", err)
	}
	if _, ok := rebase(m2, m1, stale); ok {
		t.Fatal("a stale Update rebased onto another incarnation of the name")
	}
	// The new incarnation is served, and updates as usual.
	cur, err := loadManifest(ctx, idx, "u", new(meter))
	if err != nil || cur.Version != m2.Version || cur.CreatedAt != m2.CreatedAt {
		t.Fatalf("newest after re-Create: %+v, %v", cur, err)
	}
	m3, _, err := Update(ctx, idx, "u", res, uris)
	if err != nil || m3.Version != 4 || m3.CreatedAt != 3 || len(m3.Files) != len(uris) {
		t.Fatalf("Update of the new incarnation: %+v, %v", m3, err)
	}
	ri, err := Open(ctx, idx, "u", Options{Resolver: res})
	if err != nil {
		t.Fatal(err)
	}
	if ri.Manifest().Version != m3.Version {
		t.Fatalf("Open serves version %d, want %d", ri.Manifest().Version, m3.Version)
	}
}
