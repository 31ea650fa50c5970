package rowindex

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

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
						kind == KindHash && g.BucketLo <= bucketOf(kb) && bucketOf(kb) <= g.BucketHi {
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
