package rowindex

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/ariadne-go/ariadne/internal/lakegen"
	"github.com/ariadne-go/ariadne/store"
)

// testLake generates a small lake (a few MB) into a file store under dir.
func testLake(t *testing.T, dir string, sorted bool) (store.Store, []string, []lakegen.File) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	files, err := lakegen.Generate(ctx, st, lakegen.Config{
		Seed: 7, TargetBytes: 3 << 20, Days: 3, FilesPerDay: 2, Users: 2000, Tracks: 500,
		Sorted: sorted, RowGroupRows: 4000, PageBytes: 8 << 10, Prefix: "lake/",
	})
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, f := range files {
		uris = append(uris, f.Key)
	}
	return st, uris, files
}

func TestLookupMatchesFullScan(t *testing.T) {
	for _, sorted := range []bool{true, false} {
		t.Run(fmt.Sprintf("sorted=%v", sorted), func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			data, uris, files := testLake(t, dir, sorted)
			idx, err := store.Open(ctx, "file://"+filepath.Join(dir, "indexes", "plays"))
			if err != nil {
				t.Fatal(err)
			}
			def := Definition{Name: "by_user", Key: "user_id", Kind: KindHash,
				Cover: []string{"duration_ms"}, Aggregates: []Aggregate{{Op: "count"}, {Op: "sum", Column: "duration_ms"}}}
			man, bs, err := Create(ctx, idx, def, StoreResolver{data}, uris)
			if err != nil {
				t.Fatal(err)
			}
			var rows int64
			for _, f := range files {
				rows += f.Rows
			}
			if bs.Rows != rows || man.Entries() == 0 {
				t.Fatalf("build scanned %d rows, lake has %d; %d entries", bs.Rows, rows, man.Entries())
			}
			t.Logf("build: %+v; index %d bytes = %.2f%% of data", bs, man.IndexBytes(), 100*float64(man.IndexBytes())/float64(man.DataBytes()))
			ri, err := Open(ctx, idx, "by_user", Options{Resolver: StoreResolver{data}})
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(1, 2))
			keys := []int64{lakegen.UserID(0), lakegen.UserID(1), lakegen.UserID(5)} // hot
			for range 12 {
				keys = append(keys, lakegen.UserID(uint64(rng.IntN(2000)))) // mostly cold
			}
			keys = append(keys, 12345, -1) // absent
			for _, k := range keys {
				kb, _ := EncodeKey(k)
				want := fullScan(t, dir, uris, "user_id", kb, kb)
				res, err := ri.Lookup(ctx, Query{Key: k})
				if err != nil {
					t.Fatalf("lookup %d: %v", k, err)
				}
				checkRows(t, fmt.Sprintf("key %d", k), res.Rows, want)
				if len(want) == 0 {
					if res.Plan.Data.Requests != 0 || len(res.Aggregates) != 0 {
						t.Fatalf("absent key %d: plan %+v, aggregates %v", k, res.Plan, res.Aggregates)
					}
					continue
				}
				if len(res.Aggregates) != 1 || res.Aggregates[0].Values["count"] != int64(len(want)) {
					t.Fatalf("key %d: aggregates %+v, want count %d", k, res.Aggregates, len(want))
				}
				if res.Plan.Data.Misses != 0 {
					t.Fatalf("key %d: %d reads fell through the prefetched ranges", k, res.Plan.Data.Misses)
				}
			}
		})
	}
}

func TestUnknownNameAndBadQuery(t *testing.T) {
	ctx := context.Background()
	idx, _ := store.Open(ctx, "mem://")
	if _, err := Open(ctx, idx, "nope", Options{}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Open of a missing row index: %v", err)
	}
}
