package rowindex

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/ariadne-go/ariadne/store"
)

// TestFragmentWriterInMemory: a fragment writer writes each fragment as
// parquet-go's Writer.WriteRows writes its groups' entries put in stored
// order by toDiskRef (the writer builds its groups' columns as entries come
// and gathers a sorted one's in data-file order). One that keeps its groups in
// memory (inMemory, the key-id build's) writes the same fragment files,
// byte for byte, with the same key directories, as one that spools them to
// a file, for both kinds, over entries with long keys, covers and hot keys
// cut inside (several row groups per fragment). A writer whose held groups
// reach its bound (memLimit) spools the fragment's further groups after the
// held ones: a fragment is cut only at a bucket or key boundary, so a hot
// one would otherwise be held whole, however large; it too writes the same
// bytes, holding no more than the bound and a group.
func TestFragmentWriterInMemory(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(11, 12))
	var es []entry
	for i := range 40000 {
		k, _ := EncodeKey(int64(rng.IntN(3000)))
		if i%7 == 0 {
			k, _ = EncodeKey(string(bytes.Repeat([]byte{byte('a' + rng.IntN(26))}, 1+rng.IntN(40))))
		}
		if i%5 == 0 {
			k, _ = EncodeKey(int64(42)) // a hot key
		}
		var cover []byte
		if i%3 == 0 {
			cover = bytes.Repeat([]byte{byte(i)}, rng.IntN(30))
		}
		es = append(es, entry{Key: k, File: int32(rng.IntN(9)), RG: int32(rng.IntN(4)), Row: int64(rng.IntN(50000)), N: int64(1 + rng.IntN(3)), Cover: cover})
	}
	for _, kind := range []Kind{KindHash, KindSorted} {
		for i := range es {
			es[i].Bucket = 0
			if kind != KindSorted {
				es[i].Bucket = BucketFNV1aMix.bucket(es[i].Key)
			}
		}
		slices.SortFunc(es, func(a, b entry) int { return compareEntries(&a, &b) })
		es = slices.CompactFunc(es, func(a, b entry) bool { return compareEntries(&a, &b) == 0 })
		write := func(inMemory bool, memLimit int64) ([]FragmentEntry, store.Store) {
			dir := t.TempDir()
			st, err := store.Open(ctx, "file://"+filepath.Join(dir, "idx"))
			if err != nil {
				t.Fatal(err)
			}
			tmp, err := newSpillDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer tmp.remove()
			w := newFragmentWriter(ctx, st, "ri", kind, tmp)
			w.inMemory, w.memLimit = inMemory, memLimit
			var peak int64
			for i := range es {
				if err := w.add(&es[i]); err != nil {
					t.Fatal(err)
				}
				peak = max(peak, w.memBytes)
			}
			if inMemory && memLimit == 0 && w.spool != nil {
				t.Fatal("in-memory writer opened a spool file")
			}
			if memLimit > 0 && (peak > memLimit+fragmentSplitBytes || w.spool == nil) {
				t.Fatalf("bounded in-memory writer held %d bytes of groups (bound %d), spool %v", peak, memLimit, w.spool != nil)
			}
			frags, _, err := w.close()
			if err != nil {
				t.Fatal(err)
			}
			return frags, st
		}
		spooled, sst := write(false, 0)
		asWriteRows(t, kind, es, spooled, sst)
		for _, memLimit := range []int64{0, 64 << 10} {
			held, hst := write(true, memLimit)
			sameFragments(t, kind, spooled, sst, held, hst)
		}
	}
}

// sameFragments fails unless two writers' fragments are the same files.
func sameFragments(t *testing.T, kind Kind, spooled []FragmentEntry, sst store.Store, held []FragmentEntry, hst store.Store) {
	t.Helper()
	ctx := context.Background()
	if len(spooled) != len(held) || len(spooled) == 0 {
		t.Fatalf("%s: %d fragments spooled, %d in memory", kind, len(spooled), len(held))
	}
	for i := range spooled {
		a, b := spooled[i], held[i]
		if len(a.Groups) < 3 {
			t.Fatalf("%s: only %d groups: the test does not cut groups", kind, len(a.Groups))
		}
		if a.Entries != b.Entries || a.Size != b.Size || a.TailBytes != b.TailBytes || !reflect.DeepEqual(a.Groups, b.Groups) {
			t.Fatalf("%s: fragment %d differs: %+v against %+v", kind, i, a, b)
		}
		ab, err := store.ReadAll(ctx, sst, folderOf("ri")+a.Path)
		if err != nil {
			t.Fatal(err)
		}
		bb, err := store.ReadAll(ctx, hst, folderOf("ri")+b.Path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(ab, bb) {
			t.Fatalf("%s: fragment %d: bytes differ", kind, i)
		}
	}
}

// asWriteRows fails unless the fragments written from the entries es (in
// order) are, byte for byte, each fragment's groups of es put in stored
// order by toDiskRef and written by Writer.WriteRows (writeRowsFragment).
func asWriteRows(t *testing.T, kind Kind, es []entry, frags []FragmentEntry, st store.Store) {
	t.Helper()
	at := 0
	for i, fr := range frags {
		var groups [][]diskEntry
		var zeros, n int
		for _, g := range fr.Groups {
			ds := toDiskRef(es[at:at+int(g.Rows)], kind)
			at += int(g.Rows)
			for _, d := range ds {
				if d.Gap == 0 {
					zeros++
				}
			}
			n += len(ds)
			groups = append(groups, ds)
		}
		want := writeRowsFragment(t, groups, kind, 2*zeros >= n)
		got, err := store.ReadAll(context.Background(), st, folderOf("ri")+fr.Path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: fragment %d: %d bytes, WriteRows of its entries %d", kind, i, len(got), len(want))
		}
	}
	if at != len(es) {
		t.Fatalf("%s: fragments hold %d entries, want %d", kind, at, len(es))
	}
}

// TestSortedWriterCutsAtKeys: a sorted row index's fragment writer cuts a
// row group at the first key boundary past fragmentRowGroupBytes (or
// inside a key at fragmentSplitBytes), by a model of that rule, over runs
// of keys of 9 bytes (ints, and strings whose 8 bytes after the tag equal
// the int key's before them: only the tag tells them apart) and of other
// widths, one of them between two runs of the same 9-byte key. The writer remembers a 9-byte last key as a tag and a word
// (boundary); a compare that missed the tag, or a width, would cut
// elsewhere.
func TestSortedWriterCutsAtKeys(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(13, 14))
	var es []entry
	for i := range 4000 {
		ik := appendIntKey(nil, int64(i))
		sk := append([]byte{tagBytes}, ik[1:]...) // same word, other tag
		keys := [][]byte{ik, sk}
		if i%9 == 0 {
			// A key of another width between two runs of one 9-byte key
			// (not lookup order, but the rule is the same).
			keys = append(keys, []byte(fmt.Sprintf("%c%0*d", tagBytes, 1+rng.IntN(20), i)), sk)
		}
		for _, k := range keys {
			for range 1 + rng.IntN(40) {
				es = append(es, entry{Key: k, File: int32(rng.IntN(5)), RG: int32(rng.IntN(3)), Row: int64(rng.IntN(1000)), N: 1})
			}
		}
	}
	// A hot key cut inside.
	hot := appendIntKey(nil, 1<<40)
	for range 30000 {
		es = append(es, entry{Key: hot, File: int32(rng.IntN(5)), Row: int64(rng.IntN(1000)), N: 1})
	}
	var want []int64
	var rows, sz int64
	for i := range es {
		if i > 0 && (!bytes.Equal(es[i-1].Key, es[i].Key) && sz >= fragmentRowGroupBytes || sz >= fragmentSplitBytes) {
			want, rows, sz = append(want, rows), 0, 0
		}
		rows, sz = rows+1, sz+es[i].size()
	}
	want = append(want, rows)
	dir := t.TempDir()
	st, err := store.Open(ctx, "file://"+filepath.Join(dir, "idx"))
	if err != nil {
		t.Fatal(err)
	}
	tmp, err := newSpillDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer tmp.remove()
	w := newFragmentWriter(ctx, st, "ri", KindSorted, tmp)
	for i := range es {
		if err := w.add(&es[i]); err != nil {
			t.Fatal(err)
		}
	}
	frags, _, err := w.close()
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, f := range frags {
		for _, g := range f.Groups {
			got = append(got, g.Rows)
		}
	}
	if len(want) < 20 || !slices.Equal(got, want) {
		t.Fatalf("groups of %v rows, want %v", got, want)
	}
}
