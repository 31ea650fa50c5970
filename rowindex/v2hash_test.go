package rowindex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ariadne-go/ariadne/store"
	"github.com/parquet-go/parquet-go"
)

// TestFormatV2HashIndexStillReads opens hash row indexes written by format
// 2 (testdata/v2hash, built at e8fba57 with FNV-1a buckets: an int key with
// a cover column and a string key, over data/a.parquet and b.parquet, ids
// -1500..1499 in arrival order) with this build, which creates hash indexes
// with BucketFNV1aMix: every key, present or absent, must give the rows (and
// LocateKeys the runs) a fresh index over the same files gives, before and
// after an Update (data/c.parquet) and a Compact of the old index, which keep
// its bucket hash and its format version 2.
func TestFormatV2HashIndexStillReads(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata/v2hash")); err != nil {
		t.Fatal(err)
	}
	data, _ := store.Open(ctx, "file://"+filepath.Join(dir, "data"))
	old, _ := store.Open(ctx, "file://"+filepath.Join(dir, "index"))
	res := StoreResolver{data}
	for _, name := range []string{"by_user", "by_name"} {
		t.Run(name, func(t *testing.T) {
			ri, err := Open(ctx, old, name, Options{Resolver: res})
			if err != nil {
				t.Fatal(err)
			}
			if m := ri.Manifest(); m.FormatVersion != 2 || m.BucketHash != BucketFNV1a {
				t.Fatalf("fixture: format %d, bucket hash %q; want 2, FNV-1a", m.FormatVersion, m.BucketHash)
			}
			def := ri.Manifest().Definition
			fresh, _ := store.Open(ctx, "mem://")
			if _, _, err := Create(ctx, fresh, def, res, []string{"a.parquet", "b.parquet"}); err != nil {
				t.Fatal(err)
			}
			want, err := Open(ctx, fresh, name, Options{Resolver: res})
			if err != nil {
				t.Fatal(err)
			}
			if m := want.Manifest(); m.FormatVersion != 3 || m.BucketHash != BucketFNV1aMix {
				t.Fatalf("fresh index: format %d, bucket hash %q; want 3, %q", m.FormatVersion, m.BucketHash, BucketFNV1aMix)
			}
			var keys []any
			moved := 0
			for u := int64(-1502); u < 1502; u++ {
				k := any(u)
				if name == "by_name" {
					k = fmt.Sprintf("user-%d", u)
				}
				keys = append(keys, k)
				enc, _ := EncodeKey(k)
				if BucketFNV1a.bucket(enc) != BucketFNV1aMix.bucket(enc) {
					moved++
				}
			}
			if moved < len(keys)*9/10 {
				t.Fatalf("only %d of %d keys change bucket: the fixture does not tell the hashes apart", moved, len(keys))
			}
			compareAll := func(stage string) {
				t.Helper()
				// Rows through Lookup for every 5th key; runs through
				// LocateKeys for all.
				for i := 0; i < len(keys); i += 5 {
					k := keys[i]
					a, err := ri.Lookup(ctx, Query{Key: k})
					if err != nil {
						t.Fatalf("%s: key %v on the format-2 index: %v", stage, k, err)
					}
					b, err := want.Lookup(ctx, Query{Key: k})
					if err != nil {
						t.Fatal(err)
					}
					if got, want := render(a), render(b); got != want {
						t.Fatalf("%s: key %v: format-2 index gives\n%s\na fresh one\n%s", stage, k, got, want)
					}
				}
				a, _, err := ri.LocateKeys(ctx, keys)
				if err != nil {
					t.Fatal(err)
				}
				b, _, err := want.LocateKeys(ctx, keys)
				if err != nil {
					t.Fatal(err)
				}
				slices.SortFunc(a, cmpRuns)
				slices.SortFunc(b, cmpRuns)
				if !slices.Equal(a, b) {
					t.Fatalf("%s: LocateKeys gives %d runs on the format-2 index, %d on a fresh one", stage, len(a), len(b))
				}
				found := map[int]bool{}
				for _, r := range a {
					found[r.Key] = true
				}
				if len(found) != 3000 {
					t.Fatalf("%s: %d keys found, want 3000", stage, len(found))
				}
			}
			compareAll("as written")
			for _, st := range []store.Store{old, fresh} {
				if _, _, err := Update(ctx, st, name, res, []string{"c.parquet"}); err != nil {
					t.Fatal(err)
				}
			}
			refresh := func() {
				t.Helper()
				for _, h := range []*RowIndex{ri, want} {
					if err := h.Refresh(ctx); err != nil {
						t.Fatal(err)
					}
				}
				if m := ri.Manifest(); m.FormatVersion != 2 || m.BucketHash != BucketFNV1a {
					t.Fatalf("old index: format %d, bucket hash %q; want 2, FNV-1a kept", m.FormatVersion, m.BucketHash)
				}
			}
			refresh()
			if n := len(ri.Manifest().Fragments); n != 2 {
				t.Fatalf("after Update: %d fragments, want 2", n)
			}
			compareAll("after Update")
			if _, err := Compact(ctx, old, name); err != nil {
				t.Fatal(err)
			}
			refresh()
			if n := len(ri.Manifest().Fragments); n != 1 {
				t.Fatalf("after Compact: %d fragments, want 1", n)
			}
			compareAll("after Compact")
		})
	}
}

// cmpRuns orders key runs by key, file, row group and row.
func cmpRuns(x, y KeyRun) int {
	switch {
	case x.Key != y.Key:
		return x.Key - y.Key
	case x.File != y.File:
		if x.File < y.File {
			return -1
		}
		return 1
	case x.RowGroup != y.RowGroup:
		return x.RowGroup - y.RowGroup
	}
	return int(x.Row - y.Row)
}

// TestOldHashUpdateEveryPath: an Update of a hash row index of the old
// bucket hash (BucketFNV1a, formats 1–2) by this build buckets the new
// files' keys by that hash on each build path (the key-id path, the
// partitioned key-id path, the run path), so every key's runs are those
// of a fresh index (BucketFNV1aMix) over the same files, and the manifest
// stays FNV-1a, format 2. TestFormatV2HashIndexStillReads's fixture
// indexes have a cover column or a string key, so its Updates take only
// the run path: with the key-id or partitioned path bucketing by the new
// hash, every test of the package passed.
func TestOldHashUpdateEveryPath(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	lakeDir := filepath.Join(dir, "lake")
	if err := os.MkdirAll(lakeDir, 0o755); err != nil {
		t.Fatal(err)
	}
	var uris []string
	for f := range 4 {
		rows := make([]denseRow, 6_000)
		for i := range rows {
			rows[i].ID = int64((i*7919+f*13)%12_000) - 6_000
		}
		name := fmt.Sprintf("f%d.parquet", f)
		if err := parquet.WriteFile(filepath.Join(lakeDir, name), rows, parquet.MaxRowsPerRowGroup(2_000)); err != nil {
			t.Fatal(err)
		}
		uris = append(uris, name)
	}
	lake, _ := store.Open(ctx, "file://"+lakeDir)
	res := StoreResolver{lake}
	def := Definition{Name: "d", Key: "id", Kind: KindHash}
	fresh, _ := store.Open(ctx, "mem://")
	if _, _, err := Create(ctx, fresh, def, res, uris); err != nil {
		t.Fatal(err)
	}
	want, err := Open(ctx, fresh, def.Name, Options{Resolver: res})
	if err != nil {
		t.Fatal(err)
	}
	var keys []any
	for u := int64(-6_003); u < 6_003; u++ {
		keys = append(keys, u)
	}
	wantRuns, _, err := want.LocateKeys(ctx, keys)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(wantRuns, cmpRuns)
	for _, path := range []struct {
		name string
		opt  BuildOption
		ok   func(st BuildStats) bool
	}{
		{"key ids", func(*buildConfig) {}, func(st BuildStats) bool { return st.KeyIDs && st.Partitions == 0 }},
		{"partitioned", func(c *buildConfig) { c.partitioned = true }, func(st BuildStats) bool { return st.KeyIDs && st.Partitions > 0 }},
		{"runs", func(c *buildConfig) { c.noKeyIDs = true }, func(st BuildStats) bool { return !st.KeyIDs }},
	} {
		t.Run(path.name, func(t *testing.T) {
			old, _ := store.Open(ctx, "mem://")
			// Created as formats 1–2 were: no bucketHash.
			man := &Manifest{Version: 1, Definition: def}
			if _, err := build(ctx, old, man, res, uris[:2], path.opt); err != nil {
				t.Fatal(err)
			}
			if err := commitManifest(ctx, old, man); err != nil {
				t.Fatal(err)
			}
			man, st, err := Update(ctx, old, def.Name, res, uris, path.opt, WithTempDir(t.TempDir()))
			if err != nil {
				t.Fatal(err)
			}
			if !path.ok(st) {
				t.Fatalf("Update took another path: key ids %v, %d partitions", st.KeyIDs, st.Partitions)
			}
			if man.FormatVersion != 2 || man.BucketHash != BucketFNV1a || len(man.Fragments) != 2 {
				t.Fatalf("after Update: format %d, bucket hash %q, %d fragments; want 2, FNV-1a, 2", man.FormatVersion, man.BucketHash, len(man.Fragments))
			}
			ri, err := Open(ctx, old, def.Name, Options{Resolver: res})
			if err != nil {
				t.Fatal(err)
			}
			got, _, err := ri.LocateKeys(ctx, keys)
			if err != nil {
				t.Fatal(err)
			}
			slices.SortFunc(got, cmpRuns)
			if !slices.Equal(got, wantRuns) {
				t.Fatalf("LocateKeys gives %d runs on the FNV-1a index, %d on a fresh one", len(got), len(wantRuns))
			}
			for i := 0; i < len(keys); i += 97 {
				a, err := ri.Lookup(ctx, Query{Key: keys[i]})
				if err != nil {
					t.Fatalf("key %v: %v", keys[i], err)
				}
				b, err := want.Lookup(ctx, Query{Key: keys[i]})
				if err != nil {
					t.Fatal(err)
				}
				if render(a) != render(b) {
					t.Fatalf("key %v: FNV-1a index gives\n%s\na fresh one\n%s", keys[i], render(a), render(b))
				}
			}
		})
	}
}

// TestManifestBucketHashChecks: a manifest is written at the lowest format
// that describes it (3 with the mixed bucket hash, 2 for a sorted index or
// an FNV-1a hash index, which version-2 builds still read), and one this
// build cannot read is refused as corrupt, naming why, not looked up in
// the wrong buckets: an unknown bucket hash, or a newer format version (how
// a version-2 build refuses a format-3 manifest).
func TestManifestBucketHashChecks(t *testing.T) {
	ctx := context.Background()
	st, _ := store.Open(ctx, "mem://")
	for _, c := range []struct {
		name   string
		kind   Kind
		hash   BucketHash
		format int
	}{{"sorted", KindSorted, BucketFNV1a, 2}, {"old", KindHash, BucketFNV1a, 2}, {"mixed", KindHash, BucketFNV1aMix, 3}} {
		man := &Manifest{Version: 1, Definition: Definition{Name: c.name, Key: "k", Kind: c.kind}, BucketHash: c.hash}
		if err := commitManifest(ctx, st, man); err != nil {
			t.Fatal(err)
		}
		got, err := loadManifest(ctx, st, c.name, new(meter))
		if err != nil || got.FormatVersion != c.format || got.BucketHash != c.hash {
			t.Fatalf("%s: %v, format %d, bucket hash %q; want %d, %q", c.name, err, got.FormatVersion, got.BucketHash, c.format, c.hash)
		}
	}
	for name, js := range map[string]string{
		"unknown bucket hash": `{"formatVersion":3,"version":1,"name":"u","key":"k","kind":"hash","bucketHash":"xxh3","files":[],"fragments":[],"nextFileId":0}`,
		"format version 5":    `{"formatVersion":5,"version":1,"name":"f","key":"k","kind":"hash","files":[],"fragments":[],"nextFileId":0}`,
	} {
		var m struct{ Name string }
		_ = json.Unmarshal([]byte(js), &m)
		if err := store.WriteAll(ctx, st, manifestKey(m.Name, 1), []byte(js), nil); err != nil {
			t.Fatal(err)
		}
		_, err := Open(ctx, st, m.Name, Options{})
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), name) {
			t.Fatalf("%s: Open gives %v, want ErrCorrupt naming it", name, err)
		}
	}
}
