package rowindex

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/store"
)

// lostReplyStore lands every manifest write but reports failure: err itself
// (a reply lost on the network), or ErrPrecondition (an SDK retry whose
// first try had landed).
type lostReplyStore struct {
	store.Store
	err error
}

func (s *lostReplyStore) NewWriter(ctx context.Context, key string, opts *store.WriteOptions) (store.Writer, error) {
	w, err := s.Store.NewWriter(ctx, key, opts)
	if err != nil || !strings.Contains(key, "/_manifest/") {
		return w, err
	}
	return &lostReplyWriter{Writer: w, err: s.err}, nil
}

type lostReplyWriter struct {
	store.Writer
	err error
}

func (w *lostReplyWriter) Close() error {
	if err := w.Writer.Close(); err != nil {
		return err
	}
	return w.err
}

// TestUncertainCommitKeepsFragments: when a manifest commit lands but
// reports failure, Update and Compact must not delete the fragments the
// landed manifest lists: the row index stays readable, and every listed
// fragment exists.
func TestUncertainCommitKeepsFragments(t *testing.T) {
	ctx := context.Background()
	for _, failure := range []error{errors.New("connection reset"), store.ErrPrecondition} {
		t.Run(fmt.Sprint(failure), func(t *testing.T) {
			dir := t.TempDir()
			data, uris, _ := testLake(t, dir, true)
			res := StoreResolver{data}
			idx, _ := store.Open(ctx, "file://"+filepath.Join(dir, "idx"))
			if _, _, err := Create(ctx, idx, Definition{Name: "u", Key: "user_id"}, res, uris[:2]); err != nil {
				t.Fatal(err)
			}
			lost := &lostReplyStore{Store: idx, err: failure}
			if _, _, err := Update(ctx, lost, "u", res, uris); err == nil {
				t.Fatal("Update reported success through a lost reply")
			}
			check := func(stage string) {
				t.Helper()
				ri, err := Open(ctx, idx, "u", Options{Resolver: res})
				if err != nil {
					t.Fatal(err)
				}
				var listed []string
				for _, f := range ri.Manifest().Fragments {
					listed = append(listed, f.Path)
				}
				slices.Sort(listed)
				onDisk := fragmentFiles(t, ctx, idx, "u")
				for _, p := range listed {
					if !slices.Contains(onDisk, p) {
						t.Fatalf("%s: the manifest lists fragment %s, which was deleted", stage, p)
					}
				}
				if len(ri.Manifest().Files) != len(uris) {
					t.Fatalf("%s: %d files listed, want %d (the commit landed)", stage, len(ri.Manifest().Files), len(uris))
				}
				k := hot(0)
				kb, _ := EncodeKey(k)
				r, err := ri.Lookup(ctx, Query{Key: k})
				if err != nil {
					t.Fatalf("%s: %v", stage, err)
				}
				checkRows(t, stage, r.Rows, fullScan(t, dir, uris, "user_id", kb, kb))
			}
			check("after Update")
			if _, err := Compact(ctx, lost, "u"); err == nil {
				t.Fatal("Compact reported success through a lost reply")
			}
			check("after Compact")
		})
	}
}

// TestVacuumDeletesOnlyOrphans: after a Compact whose commit landed with a
// lost reply (its old fragments stay behind) and a stray fragment, Vacuum
// keeps everything younger than the retention, then deletes exactly the
// fragments the newest manifest does not list; lookups are unchanged.
func TestVacuumDeletesOnlyOrphans(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	data, uris, _ := testLake(t, dir, true)
	res := StoreResolver{data}
	idx, _ := store.Open(ctx, "file://"+filepath.Join(dir, "idx"))
	if _, _, err := Create(ctx, idx, Definition{Name: "u", Key: "user_id"}, res, uris[:2]); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Update(ctx, idx, "u", res, uris); err != nil {
		t.Fatal(err)
	}
	if _, err := Compact(ctx, &lostReplyStore{Store: idx, err: errors.New("timeout")}, "u"); err == nil {
		t.Fatal("Compact reported success through a lost reply")
	}
	if err := store.WriteAll(ctx, idx, folderOf("u")+"fragments/stray.parquet", []byte("PAR1"), nil); err != nil {
		t.Fatal(err)
	}
	_, listed, _ := listing(t, ctx, idx, "u", res)
	if got := len(fragmentFiles(t, ctx, idx, "u")); got != len(listed)+3 {
		t.Fatalf("%d fragment files, want the %d listed + 2 replaced + 1 stray", got, len(listed))
	}
	r, err := Vacuum(ctx, idx, "u", time.Hour)
	if err != nil || len(r.Deleted) != 0 || r.Kept != 3 {
		t.Fatalf("retain 1h: %+v, %v; want nothing deleted, 3 kept", r, err)
	}
	all, err := VacuumAll(ctx, idx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r := all["u"]; len(r.Deleted) != 3 || r.Bytes == 0 {
		t.Fatalf("retain 0: %+v; want the 3 orphans deleted", r)
	}
	if got := fragmentFiles(t, ctx, idx, "u"); !slices.Equal(got, listed) {
		t.Fatalf("fragment files %v, want exactly the listed %v", got, listed)
	}
	ri, err := Open(ctx, idx, "u", Options{Resolver: res})
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := EncodeKey(hot(0))
	got, err := ri.Lookup(ctx, Query{Key: hot(0)})
	if err != nil {
		t.Fatal(err)
	}
	checkRows(t, "after vacuum", got.Rows, fullScan(t, dir, uris, "user_id", kb, kb))
}

// TestLookupOnEmptyIndex: a row index created before any data file is
// indexed answers every lookup, typed or text, with no rows and no reads.
func TestLookupOnEmptyIndex(t *testing.T) {
	ctx := context.Background()
	idx, _ := store.Open(ctx, "mem://")
	if _, _, err := Create(ctx, idx, Definition{Name: "u", Key: "user_id", Kind: KindSorted}, StoreResolver{idx}, nil); err != nil {
		t.Fatal(err)
	}
	ri, err := Open(ctx, idx, "u", Options{Resolver: StoreResolver{idx}})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []Query{{KeyText: "42"}, {Key: int64(42)}, {LowText: "1", HighText: "9", Range: true}} {
		r, err := ri.Lookup(ctx, q)
		if err != nil || len(r.Rows) != 0 || r.Plan.Requests() != 0 {
			t.Fatalf("%+v: %v rows, %d requests, %v", q, len(r.Rows), r.Plan.Requests(), err)
		}
	}
}

// TestManifestCopy: each commit leaves a copy of the newest manifest
// beside the log, which a reader takes in the listing's round instead of
// reading the listed version after it — only when the copy is of the
// listed version: a copy behind the log (a racing commit's, or a failed
// write's) or a damaged one is passed over and the version read.
func TestManifestCopy(t *testing.T) {
	ctx := context.Background()
	_, _, data, idx := snappyLake(t)
	v1, err := store.ReadAll(ctx, idx, manifestKey("k", 1))
	if err != nil {
		t.Fatal(err)
	}
	if c, err := store.ReadAll(ctx, idx, latestCopyKey("k")); err != nil || string(c) != string(v1) {
		t.Fatalf("after Create the copy is %d bytes (%v), the manifest %d", len(c), err, len(v1))
	}
	// A second version, committed as every writer commits.
	ri, err := Open(ctx, idx, "k", Options{Resolver: StoreResolver{data}})
	if err != nil {
		t.Fatal(err)
	}
	next := ri.Manifest().clone()
	next.Version++
	if err := commitManifest(ctx, idx, next); err != nil {
		t.Fatal(err)
	}
	v2, err := store.ReadAll(ctx, idx, manifestKey("k", 2))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		copy     []byte // nil: none
		readsLog bool   // the reader reads version 2 itself
	}{
		{"current copy", v2, false},
		{"copy behind the log", v1, true},
		{"damaged copy", append([]byte(nil), v2[:len(v2)/2]...), true},
		{"no copy", nil, true},
	} {
		if err := idx.Delete(ctx, latestCopyKey("k"), nil); err != nil && !errors.Is(err, store.ErrNotExist) {
			t.Fatal(err)
		}
		if tc.copy != nil {
			if err := store.WriteAll(ctx, idx, latestCopyKey("k"), tc.copy, nil); err != nil {
				t.Fatal(err)
			}
		}
		tr := store.NewTrace()
		ri, err := Open(ctx, store.NewTraced(idx, "index", tr), "k", Options{Resolver: StoreResolver{data}})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if v := ri.Manifest().Version; v != 2 {
			t.Fatalf("%s: opened version %d, want 2", tc.name, v)
		}
		spans, _ := tr.Spans()
		read := false
		for _, sp := range spans {
			read = read || sp.Key == manifestKey("k", 2)
		}
		if read != tc.readsLog {
			t.Fatalf("%s: version 2 read from the log: %v, want %v:\n%s", tc.name, read, tc.readsLog, tr)
		}
	}
}
