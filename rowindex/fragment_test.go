package rowindex

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ariadne-go/ariadne/store"
)

// TestFragmentRoundTrip writes entries through the fragment encoding of each
// kind and reads every row group back: the decoded entries must equal the
// written ones, in lookup order, whatever the stored order and whichever row
// numbers were left implied. The entries mix clustered runs (row numbers
// implied), scattered runs, several files and row groups, and aggregate
// records.
func TestFragmentRoundTrip(t *testing.T) {
	ctx := context.Background()
	sizes := map[string]int64{}
	for _, kind := range []Kind{KindHash, KindSorted} {
		for _, clustered := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/clustered=%v", kind, clustered), func(t *testing.T) {
				es := syntheticEntries(kind, testHash(kind), clustered, 40_000)
				st, man := writeTestIndex(t, "rt", kind, es)
				frs := man.Fragments
				sizes[fmt.Sprint(kind, clustered)] = man.IndexBytes()
				ri, err := Open(ctx, st, man.Name, Options{})
				if err != nil {
					t.Fatal(err)
				}
				var got []entry
				groups := 0
				for i := range frs {
					for gi := range frs[i].Groups {
						g, err := ri.group(ctx, new(meter), &frs[i], gi)
						if err != nil {
							t.Fatal(err)
						}
						got = append(got, g...)
						groups++
					}
				}
				if groups < 2 {
					t.Fatalf("%d row groups: the test must cross group boundaries", groups)
				}
				if len(got) != len(es) {
					t.Fatalf("decoded %d entries, wrote %d", len(got), len(es))
				}
				for i := range es {
					if compareEntries(&got[i], &es[i]) != 0 || got[i].N != es[i].N || string(got[i].Cover) != string(es[i].Cover) {
						t.Fatalf("entry %d: got %+v, want %+v", i, got[i], es[i])
					}
				}
			})
		}
	}
	// A sorted index over clustered files leaves row numbers implied (the
	// scattered entries' 20-bit row numbers cost ≈2.5 bytes each).
	if c, s := sizes["sorted true"], sizes["sorted false"]; c*10 > s*8 {
		t.Errorf("sorted kind: clustered fragments are %d bytes, scattered %d: row numbers are not left implied", c, s)
	}
}

// syntheticEntries returns n sorted entries over 7 files of 2 row groups
// (a hash row index's bucketed by hash): in
// a clustered layout each file holds keys in order with adjacent runs (as a
// file sorted by the key); otherwise runs are scattered.
func syntheticEntries(kind Kind, hash BucketHash, clustered bool, n int) []entry {
	rng := rand.New(rand.NewPCG(7, uint64(n)))
	next := map[[2]int32]int64{}
	var es []entry
	for k := 0; len(es) < n; k++ {
		key, _ := EncodeKey(int64(k * 3))
		b := int32(0)
		if kind == KindHash {
			b = hash.bucket(key)
		}
		if k%5 == 0 {
			es = append(es, entry{Bucket: b, Key: key, File: aggFile, Cover: []byte{byte(k)}})
		}
		for f := range int32(7) {
			if rng.IntN(3) == 0 {
				continue
			}
			rg := int32(rng.IntN(2))
			runLen := int64(1 + rng.IntN(9))
			at := [2]int32{f, rg}
			row := next[at]
			if !clustered {
				row = rng.Int64N(1 << 20)
			}
			next[at] = row + runLen
			es = append(es, entry{Bucket: b, Key: key, File: f, RG: rg, Row: row, N: runLen})
		}
	}
	slices.SortFunc(es, func(a, b entry) int { return compareEntries(&a, &b) })
	return es
}

// TestFormatV1IndexStillReads opens row indexes written by format 1
// (testdata/v1: a hash row index with cover columns and aggregates and a
// sorted one, over three parquet-testing files) with this build: every key
// must return what a fresh format-2 index over the same files returns, before
// and after an Update that adds a format-2 fragment beside the old one.
func TestFormatV1IndexStillReads(t *testing.T) {
	ctx := context.Background()
	abs, _ := filepath.Abs(parquetTesting)
	if _, err := os.Stat(filepath.Join(abs, "alltypes_plain.parquet")); err != nil {
		t.Skip(err)
	}
	data, _ := store.Open(ctx, "file://"+abs)
	// Work on a copy: Update writes into the index folder.
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata/v1")); err != nil {
		t.Fatal(err)
	}
	old, _ := store.Open(ctx, "file://"+dir)
	fresh, _ := store.Open(ctx, "mem://")
	files := []string{"alltypes_plain.parquet", "alltypes_plain.snappy.parquet", "alltypes_dictionary.parquet"}
	for _, name := range []string{"by_id", "by_int"} {
		t.Run(name, func(t *testing.T) {
			ri, err := Open(ctx, old, name, Options{Resolver: StoreResolver{data}})
			if err != nil {
				t.Fatal(err)
			}
			if v := ri.Manifest().FormatVersion; v != 1 {
				t.Fatalf("fixture manifest has format version %d, want 1", v)
			}
			def := ri.Manifest().Definition
			if _, _, err := Create(ctx, fresh, def, StoreResolver{data}, files); err != nil {
				t.Fatal(err)
			}
			want, err := Open(ctx, fresh, name, Options{Resolver: StoreResolver{data}})
			if err != nil {
				t.Fatal(err)
			}
			compareAll := func() {
				t.Helper()
				for k := int64(-1); k < 12; k++ {
					q := Query{Key: k}
					if len(def.Aggregates) == 0 {
						q = Query{Key: int32(k)}
					}
					a, err := ri.Lookup(ctx, q)
					if err != nil {
						t.Fatalf("key %d on the format-1 index: %v", k, err)
					}
					b, err := want.Lookup(ctx, q)
					if err != nil {
						t.Fatal(err)
					}
					if got, want := render(a), render(b); got != want {
						t.Fatalf("key %d: format-1 index gives\n%s\na fresh one\n%s", k, got, want)
					}
				}
			}
			compareAll()
			// The same from resident groups (format-1 groups, decoded
			// whole before resident groups, now resident too).
			if _, err := ri.Warm(ctx); err != nil {
				t.Fatal(err)
			}
			checkAllResident(t, ri)
			compareAll()
			// An Update by this build adds a format-2 fragment.
			extra := "alltypes_tiny_pages_plain.parquet"
			if _, _, err := Update(ctx, old, name, StoreResolver{data}, []string{extra}); err != nil {
				t.Fatal(err)
			}
			if _, _, err := Update(ctx, fresh, name, StoreResolver{data}, []string{extra}); err != nil {
				t.Fatal(err)
			}
			for _, h := range []*RowIndex{ri, want} {
				if err := h.Refresh(ctx); err != nil {
					t.Fatal(err)
				}
			}
			// Format 2 (fragments of format 2, the old bucket hash kept).
			if m := ri.Manifest(); m.FormatVersion != 2 || m.BucketHash != BucketFNV1a {
				t.Fatalf("after Update: format version %d, bucket hash %q; want 2, FNV-1a", m.FormatVersion, m.BucketHash)
			}
			compareAll() // the old fragments' groups resident, the new one's not
			if _, err := ri.Warm(ctx); err != nil {
				t.Fatal(err)
			}
			checkAllResident(t, ri)
			compareAll()
		})
	}
}

// render prints a result's rows (without their schema pointers) and
// aggregates.
func render(r *Result) string {
	s := ""
	for _, row := range r.Rows {
		s += fmt.Sprintln(row.Key, row.File, row.RowGroup, row.Row, row.Values, row.Covered)
	}
	return s + fmt.Sprint(r.Aggregates)
}

// TestDefaultLevelFragmentsStillRead opens row indexes whose fragments were
// written at parquet-go's default ZSTD level (testdata/v2zstd3: a hash and a
// sorted row index of syntheticEntries(kind, BucketFNV1a, false, 8000), written by
// writeFragments at commit 44a15e8, before fragmentCodec). Every group must
// decode to exactly the entries written, as fragments written now do; and
// the fixture must differ in bytes from what this build writes, or it would
// not be testing an older writer's output.
func TestDefaultLevelFragmentsStillRead(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata/v2zstd3")); err != nil {
		t.Fatal(err)
	}
	old, _ := store.Open(ctx, "file://"+dir)
	for _, kind := range []Kind{KindHash, KindSorted} {
		t.Run(string(kind), func(t *testing.T) {
			es := syntheticEntries(kind, BucketFNV1a, false, 8000)
			fresh, _ := store.Open(ctx, "mem://")
			frs, _, err := writeFragments(ctx, fresh, string(kind), kind, es)
			if err != nil {
				t.Fatal(err)
			}
			man := &Manifest{Version: 1, Definition: Definition{Name: string(kind), Key: "k", Kind: kind}, Fragments: frs}
			if err := commitManifest(ctx, fresh, man); err != nil {
				t.Fatal(err)
			}
			var files [2][]byte
			for i, st := range []store.Store{old, fresh} {
				ri, err := Open(ctx, st, string(kind), Options{})
				if err != nil {
					t.Fatal(err)
				}
				m := ri.Manifest()
				if len(m.Fragments) != 1 || len(m.Fragments[0].Groups) < 2 {
					t.Fatalf("index %d: %d fragments, want one of several groups", i, len(m.Fragments))
				}
				fr := &m.Fragments[0]
				var got []entry
				for gi := range fr.Groups {
					g, err := ri.group(ctx, new(meter), fr, gi)
					if err != nil {
						t.Fatalf("index %d: group %d: %v", i, gi, err)
					}
					got = append(got, g...)
				}
				if len(got) != len(es) {
					t.Fatalf("index %d: decoded %d entries, wrote %d", i, len(got), len(es))
				}
				for j := range es {
					if compareEntries(&got[j], &es[j]) != 0 || got[j].N != es[j].N || string(got[j].Cover) != string(es[j].Cover) {
						t.Fatalf("index %d: entry %d: got %+v, want %+v", i, j, got[j], es[j])
					}
				}
				if files[i], err = store.ReadAll(ctx, st, folderOf(string(kind))+fr.Path); err != nil {
					t.Fatal(err)
				}
			}
			if bytes.Equal(files[0], files[1]) {
				t.Fatal("the fixture's fragment is the bytes this build writes: it does not test older fragments")
			}
		})
	}
}
