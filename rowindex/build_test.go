package rowindex

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/ariadne-go/ariadne/store"
)

// TestBuildUnderTinyBudget builds each row index twice over real generated
// Parquet, arrival order and bucketed-sorted: once with the default budget
// (every entry sorted in memory) and once with a budget so small that the
// entries go through dozens of spilled runs (and, with covers, a first
// merge pass of maxFanIn runs), aggregate partials spilled in pieces. Both
// must write the same fragments byte for byte, with the same key
// directories, and every entry must decode equal; the temporary folder must
// be gone afterwards.
func TestBuildUnderTinyBudget(t *testing.T) {
	ctx := context.Background()
	defs := []Definition{
		{Name: "h", Key: "user_id", Kind: KindHash},
		{Name: "s", Key: "user_id", Kind: KindSorted},
		{Name: "hc", Key: "user_id", Kind: KindHash, Cover: []string{"duration_ms", "track_uri"},
			Aggregates: []Aggregate{{Op: "count"}, {Op: "sum", Column: "duration_ms"}, {Op: "max", Column: "ts"}, {Op: "count-by", Column: "context"}}},
		{Name: "sc", Key: "track_uri", Kind: KindSorted, Cover: []string{"duration_ms"},
			Aggregates: []Aggregate{{Op: "count"}, {Op: "min", Column: "user_id"}}},
	}
	fannedIn := false
	for _, sorted := range []bool{false, true} {
		dir := t.TempDir()
		data, uris, _ := testLake(t, dir, sorted)
		for _, def := range defs {
			t.Run(fmt.Sprintf("sorted=%v/%s", sorted, def.Name), func(t *testing.T) {
				build := func(folder string, opts ...BuildOption) (*Manifest, store.Store, BuildProgress, BuildStats) {
					idx, err := store.Open(ctx, "file://"+filepath.Join(dir, folder))
					if err != nil {
						t.Fatal(err)
					}
					tmp := t.TempDir()
					var last BuildProgress
					opts = append(opts, WithTempDir(tmp), WithProgress(func(p BuildProgress) { last = p }))
					man, st, err := Create(ctx, idx, def, StoreResolver{data}, uris, opts...)
					if err != nil {
						t.Fatal(err)
					}
					if left, _ := os.ReadDir(tmp); len(left) > 0 {
						t.Errorf("temporary files left: %v", left)
					}
					if last.Phase != "done" || last.Entries != st.Entries || last.FilesDone != len(uris) || last.Fragments != st.Fragments {
						t.Errorf("last progress %+v, stats %+v", last, st)
					}
					return man, idx, last, st
				}
				memMan, memIdx, memProg, memSt := build("mem-" + def.Name)
				if memProg.Runs != 0 {
					t.Fatalf("default budget spilled %d runs", memProg.Runs)
				}
				// Int keys without cover or aggregates take the key-id
				// path (keyids.go) when they fit; under the tiny budget
				// they would take the partitioned one (partitions.go,
				// TestPartitionedBuildMatchesRuns): turned off, so that
				// the tiny build's fragments are the run path's.
				if want := def.Key == "user_id" && len(def.Cover) == 0 && len(def.Aggregates) == 0; memSt.KeyIDs != want {
					t.Fatalf("default budget: key-id path %v, want %v", memSt.KeyIDs, want)
				}
				tinyMan, tinyIdx, tinyProg, tinySt := build("tiny-"+def.Name, WithMemory(64<<10), func(c *buildConfig) { c.noKeyIDs = true })
				if tinySt.KeyIDs {
					t.Fatal("tiny budget took the key-id path")
				}
				t.Logf("%d entries, %d spilled runs (%d bytes)", tinyProg.Entries, tinyProg.Runs, tinyProg.SpillBytes)
				if tinyProg.Runs > maxFanIn {
					fannedIn = true
				}
				if tinyProg.Runs < 5 {
					t.Fatalf("tiny budget spilled only %d runs", tinyProg.Runs)
				}
				if !reflect.DeepEqual(memMan.Files, tinyMan.Files) {
					t.Fatal("data-file tables differ")
				}
				if len(memMan.Fragments) != len(tinyMan.Fragments) {
					t.Fatalf("%d fragments in memory, %d under the tiny budget", len(memMan.Fragments), len(tinyMan.Fragments))
				}
				for i := range memMan.Fragments {
					a, b := memMan.Fragments[i], tinyMan.Fragments[i]
					if a.Entries != b.Entries || a.Size != b.Size || !reflect.DeepEqual(a.Groups, b.Groups) {
						t.Fatalf("fragment %d differs: %d entries, %d bytes against %d, %d (or its key directory)", i, a.Entries, a.Size, b.Entries, b.Size)
					}
					ab, err := store.ReadAll(ctx, memIdx, folderOf(def.Name)+a.Path)
					if err != nil {
						t.Fatal(err)
					}
					bb, err := store.ReadAll(ctx, tinyIdx, folderOf(def.Name)+b.Path)
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(ab, bb) {
						t.Fatalf("fragment %d: bytes differ", i)
					}
				}
				got := decodeAll(t, tinyIdx, tinyMan)
				if int64(len(got)) != tinyProg.Entries || len(got) == 0 {
					t.Fatalf("decoded %d entries, built %d", len(got), tinyProg.Entries)
				}
				aggs := 0
				for i := range got {
					if i > 0 && compareEntries(&got[i-1], &got[i]) >= 0 {
						t.Fatalf("entries %d and %d out of order or duplicated", i-1, i)
					}
					if got[i].RG == aggRG {
						aggs++
					}
				}
				if (aggs > 0) != (len(def.Aggregates) > 0) {
					t.Fatalf("%d aggregate records for %d aggregates", aggs, len(def.Aggregates))
				}
			})
		}
	}
	if !fannedIn {
		t.Errorf("no build spilled more than %d runs: the first merge pass was not exercised", maxFanIn)
	}
}

// decodeAll decodes every entry of a row index (fragment format 2) with
// parquet-go's row reader, in lookup order.
func decodeAll(t *testing.T, idx store.Store, man *Manifest) []entry {
	t.Helper()
	ctx := context.Background()
	var out []entry
	for _, fr := range man.Fragments {
		b, err := store.ReadAll(ctx, idx, folderOf(man.Name)+fr.Path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		cols, err := fragmentColsOf(f.Schema())
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range f.RowGroups() {
			rows := make([]parquet.Row, g.NumRows())
			rr := g.Rows()
			n, err := rr.ReadRows(rows)
			rr.Close()
			if n != len(rows) {
				t.Fatalf("read %d of %d rows: %v", n, len(rows), err)
			}
			es := make([]entry, n)
			var prev *entry
			for i, r := range rows {
				e := &es[i]
				e.Key, e.Cover = bytes.Clone(r[cols.key].ByteArray()), bytes.Clone(r[cols.cover].ByteArray())
				e.File, e.RG, e.N = r[cols.file].Int32(), r[cols.rg].Int32(), r[cols.n].Int64()
				e.Row = impliedRow(prev, e) + r[cols.gap].Int64()
				if man.Kind != KindSorted {
					e.Bucket = man.BucketHash.bucket(e.Key)
				}
				prev = e
			}
			slices.SortFunc(es, func(a, b entry) int { return compareEntries(&a, &b) })
			out = append(out, es...)
		}
	}
	return out
}

// TestBuildRemovesTempOnError: a failed build leaves no temporary files.
func TestBuildRemovesTempOnError(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	data, uris, _ := testLake(t, dir, false)
	idx, err := store.Open(ctx, "file://"+filepath.Join(dir, "idx"))
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	// Files before the missing one are scanned (and spilled) first.
	uris = append(uris[:4:4], "lake/missing.parquet")
	_, _, err = Create(ctx, idx, Definition{Name: "u", Key: "user_id"}, StoreResolver{data}, uris, WithMemory(64<<10), WithTempDir(tmp))
	if err == nil {
		t.Fatal("build over a missing file succeeded")
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("temporary files left after %v: %v", err, left)
	}
}
