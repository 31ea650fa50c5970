package rowindex

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/internal/testfixture"

	"github.com/ariadne-go/ariadne/internal/lakegen"
	"github.com/ariadne-go/ariadne/store"
)

// TestHotKeyInArrivalOrder covers the key that dominates real traffic: in
// arrival order its rows are scattered over every page of every file, one
// entry per row, more entries than one fragment row group holds. Its groups
// are split inside the key; lookups, pages of a limit and the iterator must
// still return exactly the full scan's rows, and a limited lookup must stop
// reading entries early.
func TestHotKeyInArrivalOrder(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	data, err := store.Open(ctx, "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	// ZipfS 1.2, ZipfV 1: the top user holds ≈19 % of the rows (≈37k of
	// ≈195k), far more than the ≈12,800 entries of a split group.
	files, err := lakegen.Generate(ctx, data, lakegen.Config{
		Seed: 3, TargetBytes: 8 << 20, Days: 2, FilesPerDay: 2, Users: 100_000, ZipfS: 1.2, ZipfV: 1, Tracks: 500,
		RowGroupRows: 12_000, PageBytes: 8 << 10, Prefix: "lake/",
	})
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, f := range files {
		uris = append(uris, f.Key)
	}
	top := lakegen.UserID(0)
	kb, _ := EncodeKey(top)
	want := fullScan(t, dir, uris, "user_id", kb, kb)
	if len(want) < 2*fragmentSplitBytes/41 {
		t.Fatalf("the top key has %d rows: too few to split a group", len(want))
	}
	for _, kind := range []Kind{KindSorted, KindHash} {
		t.Run(string(kind), func(t *testing.T) {
			idx, err := store.Open(ctx, "file://"+filepath.Join(dir, "indexes", string(kind)))
			if err != nil {
				t.Fatal(err)
			}
			man, _, err := Create(ctx, idx, Definition{Name: "u", Key: "user_id", Kind: kind}, StoreResolver{data}, uris)
			if err != nil {
				t.Fatal(err)
			}
			holding := 0
			for _, fr := range man.Fragments {
				for _, g := range fr.Groups {
					if kind == KindSorted && bytes.Compare(g.KeyLo, kb) <= 0 && bytes.Compare(kb, g.KeyHi) <= 0 ||
						kind == KindHash && g.BucketLo <= man.BucketHash.bucket(kb) && man.BucketHash.bucket(kb) <= g.BucketHi {
						holding++
					}
				}
			}
			if holding < 2 {
				t.Fatalf("%d groups hold the top key: its entries were not split", holding)
			}
			ri, err := Open(ctx, idx, "u", Options{Resolver: StoreResolver{data}})
			if err != nil {
				t.Fatal(err)
			}
			res, err := ri.Lookup(ctx, Query{Key: top})
			if err != nil {
				t.Fatal(err)
			}
			checkRows(t, "whole key", res.Rows, want)
			allIndexReads := res.Plan.Index.Requests // cold: the fragment tail (footer and offset index, one read) and every group holding the key
			all := res.Plan.Entries                  // runs: about one per row in arrival order
			if all < len(want)/2 || all > len(want) {
				t.Fatalf("plan: %d entries for %d rows", all, len(want))
			}

			// Pages of 5,000 rows, each continuing from the cursor.
			var paged []Row
			cur := ""
			for {
				res, err := ri.Lookup(ctx, Query{Key: top, Limit: 5000, Cursor: cur})
				if err != nil {
					t.Fatal(err)
				}
				paged = append(paged, res.Rows...)
				if res.Cursor == "" {
					break
				}
				cur = res.Cursor
			}
			checkRows(t, "paged", paged, want)

			// A small limit reads (cold) and decodes the first group of the
			// key, not all of them.
			ri.DropCache()
			res, err = ri.Lookup(ctx, Query{Key: top, Limit: 100, Columns: []string{"ts"}})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Rows) != 100 || res.Cursor == "" {
				t.Fatalf("limit 100: %d rows, cursor %q", len(res.Rows), res.Cursor)
			}
			if res.Plan.Entries > all/2 || res.Plan.Index.Requests != 2 || allIndexReads < 3 {
				t.Fatalf("limit 100 read %d of the key's %d entries in %d index reads (whole key: %d)", res.Plan.Entries, all,
					res.Plan.Index.Requests, allIndexReads)
			}

			// The iterator streams the same rows.
			it, err := ri.Iter(ctx, Query{Key: top})
			if err != nil {
				t.Fatal(err)
			}
			var streamed []Row
			for it.Next() {
				streamed = append(streamed, it.Row())
			}
			if err := it.Err(); err != nil {
				t.Fatal(err)
			}
			checkRows(t, "iterator", streamed, want)
		})
	}
}

// TestPageCache: a page enters the cache on its second decode (pageCache.admit),
// so the third lookup of a key is served from decoded pages with no data read
// and the same rows; without a page cache every lookup reads again.
func TestPageCache(t *testing.T) {
	ctx := context.Background()
	for _, pageCache := range []int64{0, -1} {
		t.Run(fmt.Sprintf("PageCacheBytes=%d", pageCache), func(t *testing.T) {
			dir := t.TempDir()
			data, uris, _ := testLake(t, dir, false)
			idx, err := store.Open(ctx, "file://"+filepath.Join(dir, "indexes", "plays"))
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := Create(ctx, idx, Definition{Name: "u", Key: "user_id"}, StoreResolver{data}, uris); err != nil {
				t.Fatal(err)
			}
			ri, err := Open(ctx, idx, "u", Options{Resolver: StoreResolver{data}, PageCacheBytes: pageCache})
			if err != nil {
				t.Fatal(err)
			}
			// A light key: few enough pages to fill the cache.
			k := hot(1500)
			kb, _ := EncodeKey(k)
			want := fullScan(t, dir, uris, "user_id", kb, kb)
			if len(want) == 0 {
				t.Fatal("the key has no rows")
			}
			first, err := ri.Lookup(ctx, Query{Key: k})
			if err != nil {
				t.Fatal(err)
			}
			checkRows(t, "first", first.Rows, want)
			if first.Plan.Data.Pages == 0 || first.Plan.Data.PageHits != 0 {
				t.Fatalf("first lookup: %d pages decoded, %d page hits", first.Plan.Data.Pages, first.Plan.Data.PageHits)
			}
			second, err := ri.Lookup(ctx, Query{Key: k})
			if err != nil {
				t.Fatal(err)
			}
			checkRows(t, "second", second.Rows, want)
			if second.Plan.Data.Requests == 0 || second.Plan.Data.Pages != first.Plan.Data.Pages || second.Plan.Data.PageHits != 0 {
				t.Fatalf("second lookup (pages decoded once are not cached): %d data requests, %d pages decoded, %d page hits (first decoded %d)",
					second.Plan.Data.Requests, second.Plan.Data.Pages, second.Plan.Data.PageHits, first.Plan.Data.Pages)
			}
			again, err := ri.Lookup(ctx, Query{Key: k})
			if err != nil {
				t.Fatal(err)
			}
			checkRows(t, "again", again.Rows, want)
			if pageCache >= 0 {
				if again.Plan.Data.Requests != 0 || again.Plan.Data.Pages != 0 || again.Plan.Data.PageHits != first.Plan.Data.Pages {
					t.Fatalf("repeated lookup: %d data requests, %d pages decoded, %d page hits (first decoded %d)",
						again.Plan.Data.Requests, again.Plan.Data.Pages, again.Plan.Data.PageHits, first.Plan.Data.Pages)
				}
			} else if again.Plan.Data.Requests == 0 || again.Plan.Data.PageHits != 0 {
				t.Fatalf("no page cache: repeated lookup made %d data requests, %d page hits", again.Plan.Data.Requests, again.Plan.Data.PageHits)
			}
		})
	}
}

// TestLookupHonoursCancellation: a cancelled context stops a lookup with the
// context's error, never with a FileChangedError or partial rows.
func TestLookupHonoursCancellation(t *testing.T) {
	fx := newFixture(t, false, Definition{Name: "u", Key: "user_id"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := fx.ri.Lookup(ctx, Query{Key: hot(0)})
	if !errors.Is(err, context.Canceled) || res != nil {
		t.Fatalf("lookup with a cancelled context: %v, %v", res, err)
	}
	var fce *FileChangedError
	if errors.As(err, &fce) {
		t.Fatalf("cancellation reported as a changed file: %v", err)
	}
}

// TestBuildRefusesNonParquet: a file that never was Parquet (a JSON marker
// swept up with a folder) is ErrNotParquet at build time, not "changed
// since indexing", and nothing is committed.
func TestBuildRefusesNonParquet(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	data, uris, _ := testLake(t, dir, false)
	if err := store.WriteAll(ctx, data, "lake/lake.json", []byte(`{"version": 3}`), nil); err != nil {
		t.Fatal(err)
	}
	idx, err := store.Open(ctx, "file://"+filepath.Join(dir, "indexes", "plays"))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = Create(ctx, idx, Definition{Name: "u", Key: "user_id"}, StoreResolver{data}, append(uris, "lake/lake.json"))
	var npe *NotParquetError
	if !errors.Is(err, ErrNotParquet) || !errors.As(err, &npe) || errors.Is(err, ErrDataFileChanged) || npe.URI != "lake/lake.json" {
		t.Fatalf("build over a JSON file: %v", err)
	}
	if _, err := Open(ctx, idx, "u", Options{}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a failed build left a row index: %v", err)
	}
}

// TestBuildRefusesLyingFile: a data file whose pages contradict its footer
// (parquet-testing's ARROW-GH-47662, and files whose footers were
// rewritten to lie about rows, nulls and min/max) is refused with
// aerr.ErrCorruptDataFile naming it; no row index is left, and a build
// over the same truthful file succeeds.
func TestBuildRefusesLyingFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	data, err := store.Open(ctx, "file://"+filepath.Join(dir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	idx, err := store.Open(ctx, "file://"+filepath.Join(dir, "indexes", "x"))
	if err != nil {
		t.Fatal(err)
	}
	b47662, err := os.ReadFile(testfixture.BadData47662())
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string][]byte{"ARROW-GH-47662.parquet": b47662}
	for _, lie := range testfixture.Lies {
		cases["lie-"+lie+".parquet"] = testfixture.Lying(t, 3000, lie)
	}
	for name, b := range cases {
		key := "id"
		if strings.HasPrefix(name, "ARROW") {
			key = "flba_field"
		}
		if err := store.WriteAll(ctx, data, name, b, nil); err != nil {
			t.Fatal(err)
		}
		_, _, err := Create(ctx, idx, Definition{Name: "r", Key: key, Cover: coverFor(key)}, StoreResolver{data}, []string{name})
		if aerr.KindOf(err) != aerr.ErrCorruptDataFile || !strings.Contains(err.Error(), name) || !errors.Is(err, pqrow.ErrCorrupt) {
			t.Errorf("%s: %v, want a corrupt data file error naming it", name, err)
		}
		if _, err := Open(ctx, idx, "r", Options{}); !errors.Is(err, ErrNotFound) {
			t.Fatalf("%s: a refused build left a row index: %v", name, err)
		}
	}
	if err := store.WriteAll(ctx, data, "ok.parquet", testfixture.Lying(t, 3000, testfixture.LieNone), nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Create(ctx, idx, Definition{Name: "r", Key: "id", Cover: []string{"name"}}, StoreResolver{data}, []string{"ok.parquet"}); err != nil {
		t.Fatalf("truthful file: %v", err)
	}
}

// coverFor covers the name column of the lying files, so that its pages
// are decoded (and checked) too.
func coverFor(key string) []string {
	if key == "id" {
		return []string{"name"}
	}
	return nil
}
