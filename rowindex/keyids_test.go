package rowindex

import (
	"context"
	"io"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/ariadne-go/ariadne/store"
)

// TestKeyIDBuildMatchesRuns builds row indexes over files with null keys
// of every int type (runs of equal keys, some across row-group
// boundaries, nulls between and inside them) three ways: on the key-id
// path (asserted through BuildStats.KeyIDs), on the run path (key ids
// turned off), and under a budget that holds the first file's ids but not
// all of them, so that the key-id path stops mid-scan and the partitioned
// key-id path scans again. All three must write the same data-file tables and the same
// fragments, byte for byte; the build that scanned again counts the reads
// of the scan stopped. A string key never takes the key-id path.
func TestKeyIDBuildMatchesRuns(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	lake, err := store.Open(ctx, "file://"+filepath.Join(dir, "lake"))
	if err != nil {
		t.Fatal(err)
	}
	nk := writeNullKeys(t, ctx, lake)
	noKeyIDs := func(c *buildConfig) { c.noKeyIDs = true }
	// The files hold 1,000, 1,137 and 1,274 rows (3,411), ≈40 distinct
	// keys each: a sort budget (half of so small a memory) of 28,500
	// bytes holds what the first two files let one expect (3,000 and
	// 3,205 rows at 8 bytes) but not the ids of all 3,411 rows with the
	// keys (≈30,000 bytes): the path stops at the third file.
	const stopsMidScan = 2 * 28500
	for _, key := range []string{"i", "i32", "day", "ts", "ms", "i8", "u", "s"} {
		for _, kind := range []Kind{KindHash, KindSorted} {
			t.Run(key+"/"+string(kind), func(t *testing.T) {
				def := Definition{Name: "r", Key: key, Kind: kind}
				build := func(folder string, opts ...BuildOption) (store.Store, *Manifest, BuildStats) {
					return buildIn(t, filepath.Join(dir, "ix", key, string(kind), folder), def, lake, nk, opts...)
				}
				idIdx, ids, idSt := build("ids")
				if want := key != "s"; idSt.KeyIDs != want {
					t.Fatalf("key-id path %v, want %v", idSt.KeyIDs, want)
				}
				runIdx, runs, runSt := build("runs", noKeyIDs)
				if runSt.KeyIDs {
					t.Fatal("key ids turned off, yet taken")
				}
				sameBuild(t, idIdx, ids, runIdx, runs)
				midIdx, mid, midSt := build("mid", WithMemory(stopsMidScan))
				if want := key != "s"; midSt.KeyIDs != want || (midSt.Partitions > 0) != want {
					t.Fatalf("a budget short of the second file's ids: key ids %v, %d partitions; want the partitioned path %v", midSt.KeyIDs, midSt.Partitions, want)
				}
				if midSt.Files != len(nk) || midSt.Entries != idSt.Entries {
					t.Fatalf("after the key-id path stopped: %d files, %d entries; want %d, %d", midSt.Files, midSt.Entries, len(nk), idSt.Entries)
				}
				// The stopped scan read the first two files: its reads
				// count, beside the next path's.
				if midSt.Requests <= runSt.Requests || midSt.BytesRead <= runSt.BytesRead {
					t.Fatalf("a build that scanned again counts %d requests, %d bytes; the run path alone %d, %d", midSt.Requests, midSt.BytesRead, runSt.Requests, runSt.BytesRead)
				}
				sameBuild(t, idIdx, ids, midIdx, mid)
			})
		}
	}
}

// TestKeyIDLocate: the binned group table finds, for every row of a build,
// the row group that two binary searches over files and their groups find
// (the code before it), over files left out (no groups), empty files and
// empty row groups among groups of many sizes.
func TestKeyIDLocate(t *testing.T) {
	rgStarts := [][]int64{
		{0, 7, 7, 100, 101}, // an empty group at 7
		nil,                 // a file left out
		{0},                 // one group
		{0, 0, 5000, 5003},  // an empty first group
		{0, 1, 2, 3, 4, 5},  // tiny groups
		{0, 12000, 24000},   // large groups
	}
	rows := []int64{150, 0, 9, 5010, 9, 30000}
	s := &keyIDSource{rgStarts: rgStarts, f: -1, starts: make([]int64, len(rows)+1)}
	for f, n := range rows {
		s.starts[f+1] = s.starts[f] + n
	}
	s.index()
	// want is locate as it was: the first file ending after p, the last of
	// its groups starting at or before p.
	want := func(p int64) (f, g int, lo, hi int64) {
		f = sort.Search(len(s.starts)-1, func(i int) bool { return s.starts[i+1] > p })
		rs := s.rgStarts[f]
		g = sort.Search(len(rs), func(i int) bool { return rs[i] > p-s.starts[f] }) - 1
		lo, hi = s.starts[f]+rs[g], s.starts[f+1]
		if g+1 < len(rs) {
			hi = s.starts[f] + rs[g+1]
		}
		return
	}
	for _, order := range []string{"forward", "backward"} {
		for i := range s.starts[len(rows)] {
			p := i
			if order == "backward" {
				p = s.starts[len(rows)] - 1 - i
			}
			s.locate(p)
			f, g, lo, hi := want(p)
			if s.f != f || s.g != g || s.lo != lo || s.hi != hi {
				t.Fatalf("%s: row %d: file %d group %d [%d, %d), want file %d group %d [%d, %d)", order, p, s.f, s.g, s.lo, s.hi, f, g, lo, hi)
			}
		}
	}
}

// TestRankByRadix: a sorted row index's keys ranked by the radix sort are
// ranked as the comparison sort ranks them (rankKeys without it), for
// distinct keys of narrow and wide spreads, one key, and spreads too wide
// to pack beside the ids (left to the comparison sort), at the edge of
// the packed word too.
func TestRankByRadix(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, c := range []struct {
		n      int
		spread uint64
		packed bool
	}{{1, 1, true}, {2, 3, true}, {1000, 1 << 20, true}, {5000, 1 << 40, true}, {300, 5000, true}, {1000, 1 << 63, false},
		// 1,024 ids take 10 bits: a spread of 54 bits fills the word
		// exactly, 55 would overflow it.
		{1024, 1 << 54, true}, {1024, 1 << 55, false}} {
		seen := map[uint64]bool{}
		var vals []uint64
		base := rng.Uint64() >> 1
		for len(vals) < c.n {
			v := base + rng.Uint64N(c.spread)
			if !seen[v] {
				seen[v] = true
				vals = append(vals, v)
			}
		}
		keys, rank, ok := rankByRadix(vals)
		if ok != c.packed {
			t.Fatalf("%d keys over %d: packed %v", c.n, c.spread, ok)
		}
		if !ok {
			continue
		}
		want := slices.Sorted(slices.Values(vals))
		if !slices.Equal(keys, want) {
			t.Fatalf("%d keys over %d: not in order", c.n, c.spread)
		}
		for id, v := range vals {
			if keys[rank[id]] != v {
				t.Fatalf("%d keys over %d: key %d ranked %d, which holds %d", c.n, c.spread, v, rank[id], keys[rank[id]])
			}
		}
	}
}

// TestKeyIDWriteToMatchesAdd: a key-id source that feeds a fragment writer
// a key at a time (writeTo) writes the same fragment files, byte for byte,
// with the same key directories, as its entries added one at a time (next
// and add), for both kinds: over ≈2M rows in ≈1.8M runs (more than a
// fragment file holds, so fragments are cut at a key boundary), a hot key
// of ≈150k runs (row groups cut inside it), runs of several rows, runs
// that end at a row group's end, null keys, and a key started by next
// before writeTo takes over.
func TestKeyIDWriteToMatchesAdd(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(21, 22))
	const files, groupRows = 7, 12_000
	fileRows := []int64{300_000, 12_000, 1, 420_000, 250_000, 500_000, 518_000}
	keysOf := make([][]int64, files) // -1: null
	for f, n := range fileRows {
		ks := make([]int64, n)
		for r := range ks {
			switch x := rng.IntN(100); {
			case r > 0 && x < 8:
				ks[r] = ks[r-1] // a run of several rows
			case x < 15:
				ks[r] = 77 // the hot key
			case x < 16:
				ks[r] = -1
			default:
				ks[r] = int64(rng.IntN(400_000)) - 200_000
			}
		}
		keysOf[f] = ks
	}
	source := func(kind Kind) *keyIDSource {
		k := newKeyIDs(1<<30, files)
		for f, n := range fileRows {
			fe := &FileEntry{ID: int32(f + 3), Rows: n}
			for s := int64(0); s < n; s += groupRows {
				fe.RowGroupStarts = append(fe.RowGroupStarts, s)
			}
			if err := k.openFile(f, fe, KeyInt); err != nil {
				t.Fatal(err)
			}
			for _, s := range fe.RowGroupStarts {
				var ik intKeys
				m := int(min(groupRows, n-s))
				for _, v := range keysOf[f][s : s+int64(m)] {
					ik.vals = append(ik.vals, intWord(v))
					ik.nulls = append(ik.nulls, v == -1)
				}
				if err := k.addGroup(f, s, &ik, m); err != nil {
					t.Fatal(err)
				}
			}
		}
		return k.source(kind, BucketFNV1aMix)
	}
	for _, kind := range []Kind{KindHash, KindSorted} {
		write := func(bulk bool, memLimit int64) ([]FragmentEntry, store.Store, int64) {
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
			w.inMemory, w.memLimit = true, memLimit
			s := source(kind)
			var n int64
			if bulk {
				// Into the first keys and a few runs of the next one an
				// entry at a time, then a key at a time.
				for range 1000 {
					e, err := s.next()
					if err != nil {
						t.Fatal(err)
					}
					if err := w.add(e); err != nil {
						t.Fatal(err)
					}
					n++
				}
				if s.at == s.from[s.r+1] {
					t.Fatal("the test stops next at the end of a key")
				}
				if err := s.writeTo(w, func(k int64) error { n += k; return nil }); err != nil {
					t.Fatal(err)
				}
			} else {
				for {
					e, err := s.next()
					if err == io.EOF {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
					if err := w.add(e); err != nil {
						t.Fatal(err)
					}
					n++
				}
			}
			frags, _, err := w.close()
			if err != nil {
				t.Fatal(err)
			}
			return frags, st, n
		}
		one, ost, on := write(false, 0)
		bulk, bst, bn := write(true, 0)
		if on != bn || len(one) < 2 {
			t.Fatalf("%s: %d entries in %d fragments an entry at a time, %d a key at a time", kind, on, len(one), bn)
		}
		sameFragments(t, kind, one, ost, bulk, bst)
		// Groups past 256 KiB of a fragment spooled: the hot key's in
		// their one-key form (spoolOneKey), the others' in full.
		spooled, sst, sn := write(true, 256<<10)
		if sn != on {
			t.Fatalf("%s: %d entries spooled, %d held", kind, sn, on)
		}
		sameFragments(t, kind, one, ost, spooled, sst)
		t.Logf("%s: %d entries, %d fragments, %d groups in the first", kind, on, len(one), len(one[0].Groups))
	}
}
