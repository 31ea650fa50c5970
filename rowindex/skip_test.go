package rowindex

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/ariadne-go/ariadne/internal/lakegen"
	"github.com/ariadne-go/ariadne/store"
)

// TestFileWithoutKeyColumnSkipped: a data file without the key column is
// left out of the row index with its reason recorded (manifest, build
// stats) while the other files are indexed and found; later updates do
// not fail on it nor read it again; removing it forgets it; a build where
// no file has the key fails with ErrBadKeyColumn (a misspelt key).
func TestFileWithoutKeyColumnSkipped(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	data, uris, _ := testLake(t, dir, false)
	type noKey struct {
		Track string `parquet:"track_id"`
	}
	if err := parquet.WriteFile(filepath.Join(dir, "lake", "nokey.parquet"), []noKey{{"a"}, {"b"}}); err != nil {
		t.Fatal(err)
	}
	const bad = "lake/nokey.parquet"
	idx, err := store.Open(ctx, "file://"+filepath.Join(dir, "indexes", "plays"))
	if err != nil {
		t.Fatal(err)
	}
	def := Definition{Name: "by_user", Key: "user_id", Kind: KindHash}
	// The first build over some files, the bad one among them.
	man, st, err := Create(ctx, idx, def, StoreResolver{data}, []string{uris[0], bad})
	if err != nil {
		t.Fatal(err)
	}
	if st.Files != 1 || len(st.Skipped) != 1 || st.Skipped[0].URI != bad || !strings.Contains(st.Skipped[0].Reason, `column "user_id": no such column`) {
		t.Fatalf("create: %d files, skipped %+v", st.Files, st.Skipped)
	}
	if len(man.Skipped) != 1 || len(man.Files) != 1 {
		t.Fatalf("manifest: files %d, skipped %+v", len(man.Files), man.Skipped)
	}
	// Later updates index the other files and do not read the bad one again.
	all := append(slices.Clone(uris), bad)
	man, st, err = Update(ctx, idx, def.Name, StoreResolver{data}, all)
	if err != nil {
		t.Fatalf("update with the skipped file still tracked: %v", err)
	}
	if st.Files != len(uris)-1 || len(st.Skipped) != 0 || len(man.Skipped) != 1 || len(man.Files) != len(uris) {
		t.Fatalf("update: %d files, skipped %+v; manifest %d files, skipped %+v", st.Files, st.Skipped, len(man.Files), man.Skipped)
	}
	ri, err := Open(ctx, idx, def.Name, Options{Resolver: StoreResolver{data}})
	if err != nil {
		t.Fatal(err)
	}
	k := lakegen.UserID(0)
	kb, _ := EncodeKey(k)
	res, err := ri.Lookup(ctx, Query{Key: k})
	if err != nil {
		t.Fatal(err)
	}
	checkRows(t, "after the skip", res.Rows, fullScan(t, dir, uris, "user_id", kb, kb))
	// A bad file added later is skipped by Update as well.
	if err := parquet.WriteFile(filepath.Join(dir, "lake", "nokey2.parquet"), []noKey{{"c"}}); err != nil {
		t.Fatal(err)
	}
	man, st, err = Update(ctx, idx, def.Name, StoreResolver{data}, append(all, "lake/nokey2.parquet"))
	if err != nil || len(st.Skipped) != 1 || len(man.Skipped) != 2 {
		t.Fatalf("update with a new bad file: %v, skipped %+v, manifest %+v", err, st.Skipped, man.Skipped)
	}
	// Removed from the index: forgotten, so that a fixed file is tried again.
	man, _, err = Remove(ctx, idx, def.Name, []string{bad})
	if err != nil || len(man.Skipped) != 1 || man.Skipped[0].URI != "lake/nokey2.parquet" {
		t.Fatalf("remove: %v, skipped %+v", err, man.Skipped)
	}
	// Not one file with the key: an error, nothing created.
	_, _, err = Create(ctx, idx, Definition{Name: "typo", Key: "usr_id", Kind: KindHash}, StoreResolver{data}, uris)
	if !errors.Is(err, ErrBadKeyColumn) {
		t.Fatalf("create on a missing key: %v", err)
	}
	if _, err := Open(ctx, idx, "typo", Options{}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a failed create left a row index: %v", err)
	}
}
