package rowindex

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ariadne-go/ariadne/internal/lakegen"
	"github.com/ariadne-go/ariadne/store"
)

// TestLocateKeysMatchesLookups: the batched LocateKeys gives, for every
// key, exactly the rows the key's own Lookup gives (hash and sorted
// indexes, hot, cold, repeated and absent keys, aggregates stored beside
// the entries), without reading a data file.
func TestLocateKeysMatchesLookups(t *testing.T) {
	for _, kind := range []Kind{KindHash, KindSorted} {
		t.Run(string(kind), func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			data, uris, _ := testLake(t, dir, kind == KindSorted)
			idx, err := store.Open(ctx, "file://"+filepath.Join(dir, "indexes", "plays"))
			if err != nil {
				t.Fatal(err)
			}
			def := Definition{Name: "by_user", Key: "user_id", Kind: kind, Aggregates: []Aggregate{{Op: "count"}}}
			if _, _, err := Create(ctx, idx, def, StoreResolver{data}, uris); err != nil {
				t.Fatal(err)
			}
			// Lookups through the point path; LocateKeys through it, or
			// through resident groups after Warm.
			plain, err := Open(ctx, idx, "by_user", Options{Resolver: StoreResolver{data}, ResidentBytes: -1})
			if err != nil {
				t.Fatal(err)
			}
			// Resident groups: none, about half (the budget of half of
			// what all take), all.
			all, err := Open(ctx, idx, "by_user", Options{Resolver: StoreResolver{data}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := all.Warm(ctx); err != nil {
				t.Fatal(err)
			}
			checkAllResident(t, all)
			allBytes, allGroups := all.resident.stats()
			if allGroups < 2 {
				t.Fatalf("%d groups: too few to make some resident", allGroups)
			}
			for _, budget := range []int64{-1, allBytes / 2, 0} {
				t.Run(fmt.Sprintf("resident_bytes=%d", budget), func(t *testing.T) {
					ri, err := Open(ctx, idx, "by_user", Options{Resolver: StoreResolver{data}, ResidentBytes: budget})
					if err != nil {
						t.Fatal(err)
					}
					if _, err := ri.Warm(ctx); err != nil {
						t.Fatal(err)
					}
					switch _, n := ri.resident.stats(); {
					case budget < 0 && n != 0, budget == 0 && n != allGroups, budget > 0 && (n == 0 || n == allGroups):
						t.Fatalf("%d of %d groups resident with a budget of %d", n, allGroups, budget)
					}
					locateMatchesLookups(t, ctx, ri, plain)
				})
			}
		})
	}
}

// locateMatchesLookups checks ri.LocateKeys of hot, cold, repeated and
// absent keys against each key's Lookup through plain.
func locateMatchesLookups(t *testing.T, ctx context.Context, ri, plain *RowIndex) {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, 4))
	keys := []any{lakegen.UserID(0), lakegen.UserID(1), int64(12345), int64(-1)}
	for range 300 {
		keys = append(keys, lakegen.UserID(uint64(rng.IntN(2000))))
	}
	keys = append(keys, lakegen.UserID(0)) // repeated
	runs, cost, err := ri.LocateKeys(ctx, keys)
	if err != nil {
		t.Fatal(err)
	}
	got := make([][]string, len(keys))
	for _, r := range runs {
		for i := range r.N {
			got[r.Key] = append(got[r.Key], fmt.Sprintf("%s/%d/%d", r.File, r.RowGroup, r.Row+i))
		}
	}
	var total int
	for i, k := range keys {
		res, err := plain.Lookup(ctx, Query{Key: k, Columns: []string{"user_id"}})
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, r := range res.Rows {
			man, _ := ri.snapshot()
			var start int64
			for _, fe := range man.Files {
				if fe.URI == r.File {
					start = fe.RowGroupStarts[r.RowGroup]
				}
			}
			want = append(want, fmt.Sprintf("%s/%d/%d", r.File, r.RowGroup, r.Row-start))
		}
		slices.Sort(want)
		slices.Sort(got[i])
		if !slices.Equal(got[i], want) {
			t.Fatalf("key %v: LocateKeys gave %d rows, Lookup %d\n got %v\nwant %v", k, len(got[i]), len(want), got[i], want)
		}
		total += len(want)
	}
	if total < 1000 {
		t.Fatalf("only %d rows for %d keys: the test shows little", total, len(keys))
	}
	if len(got[2])+len(got[3]) != 0 {
		t.Fatal("absent keys found")
	}
	t.Logf("%d keys, %d rows, %d runs; cost %+v", len(keys), total, len(runs), cost)
}
