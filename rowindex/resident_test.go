package rowindex

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ariadne-go/ariadne/store"
)

// checkAllResident fails unless every group of ri's fragments is resident.
func checkAllResident(t *testing.T, ri *RowIndex) {
	t.Helper()
	man, _ := ri.snapshot()
	groups := 0
	for i := range man.Fragments {
		fr := &man.Fragments[i]
		for gi := range fr.Groups {
			groups++
			if !ri.isResident(fr, gi) {
				t.Fatalf("fragment %s group %d is not resident after Warm", fr.Path, gi)
			}
		}
	}
	if groups == 0 {
		t.Fatal("the index has no groups")
	}
}

// residentFixture writes a row index of 20,000 synthetic entries (keys of
// one to a few entries, aggregates among them) to a memory store.
func residentFixture(t *testing.T, kind Kind) (store.Store, *Manifest) {
	t.Helper()
	return writeTestIndex(t, "rb", kind, syntheticEntries(kind, testHash(kind), true, 20_000))
}

// TestResidentBudget checks that Warm keeps resident groups within
// Options.ResidentBytes: a budget for about half the groups makes some
// resident and not others, and every key's entries are then the same
// whether its group is resident or not; a negative budget makes none.
func TestResidentBudget(t *testing.T) {
	ctx := context.Background()
	for _, kind := range []Kind{KindHash, KindSorted} {
		t.Run(string(kind), func(t *testing.T) {
			st, man := residentFixture(t, kind)
			frs := man.Fragments
			var groups int
			for _, fr := range frs {
				groups += len(fr.Groups)
			}
			if groups < 4 {
				t.Fatalf("%d groups: too few to split", groups)
			}
			whole, err := Open(ctx, st, man.Name, Options{ResidentBytes: -1})
			if err != nil {
				t.Fatal(err)
			}
			none, err := Open(ctx, st, man.Name, Options{ResidentBytes: -1})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := none.Warm(ctx); err != nil {
				t.Fatal(err)
			}
			whole0, err := Open(ctx, st, man.Name, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := whole0.Warm(ctx); err != nil {
				t.Fatal(err)
			}
			checkAllResident(t, whole0) // AutoResidentBytes holds them all
			all, _ := whole0.resident.stats()
			budget := all / 2
			half, err := Open(ctx, st, man.Name, Options{ResidentBytes: budget})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := half.Warm(ctx); err != nil {
				t.Fatal(err)
			}
			if used, _ := half.resident.stats(); used > budget || used == 0 {
				t.Fatalf("resident groups use %d bytes of a %d budget", used, budget)
			}
			resident := 0
			for fi := range frs {
				fr := &frs[fi]
				for gi := range fr.Groups {
					if none.isResident(fr, gi) {
						t.Fatal("a group is resident with ResidentBytes < 0")
					}
					if half.isResident(fr, gi) {
						resident++
					}
					all, err := whole.group(ctx, new(meter), fr, gi)
					if err != nil {
						t.Fatal(err)
					}
					for i := 0; i < len(all); {
						j := i + 1
						for j < len(all) && bytes.Equal(all[j].Key, all[i].Key) {
							j++
						}
						for _, ri := range []*RowIndex{none, half} {
							got, ok, err := ri.groupKey(ctx, new(meter), fr, gi, all[i].Key)
							if err != nil || !ok {
								t.Fatalf("groupKey: %v, %v", ok, err)
							}
							if len(got) != j-i {
								t.Fatalf("group %d key %x: %d entries, want %d", gi, all[i].Key, len(got), j-i)
							}
							for k := range got {
								w := &all[i+k]
								if compareEntries(&got[k], w) != 0 || got[k].N != w.N || !bytes.Equal(got[k].Cover, w.Cover) {
									t.Fatalf("group %d key %x entry %d: got %+v, want %+v", gi, w.Key, k, got[k], *w)
								}
							}
						}
						i = j
					}
				}
			}
			if resident == 0 || resident == groups {
				t.Fatalf("%d of %d groups resident with half the estimate: the budget does not split them", resident, groups)
			}
			t.Logf("%d of %d groups resident in %d bytes", resident, groups, budget)
		})
	}
}

// TestAutoResidentBytes checks the estimate and its bounds against lying
// manifests.
func TestAutoResidentBytes(t *testing.T) {
	for _, c := range []struct {
		entries []int64
		size    int64 // each fragment's
		want    int64
	}{
		{nil, 0, 0},
		{[]int64{1_000, 2_000}, 0, 3_000 * residentBytesPerEntry},
		{[]int64{1_000, 2_000}, 500, 3_000*residentBytesPerEntry + 1_000*residentBytesPerStored},
		{[]int64{-5, 10}, -7, 10 * residentBytesPerEntry},
		{[]int64{math.MaxInt64, math.MaxInt64}, math.MaxInt64, MaxAutoResidentBytes},
		{[]int64{100 << 20}, 0, MaxAutoResidentBytes},
	} {
		m := &Manifest{}
		for _, n := range c.entries {
			m.Fragments = append(m.Fragments, FragmentEntry{Entries: n, Size: c.size})
		}
		if got := AutoResidentBytes(m); got != c.want {
			t.Errorf("AutoResidentBytes(%v) = %d, want %d", c.entries, got, c.want)
		}
	}
}

// TestResidentWarmWhileLookingUp checks that point lookups running while
// Warm makes their groups resident (and while DropCache empties them) get
// the same entries throughout, field by field (run with -race).
func TestResidentWarmWhileLookingUp(t *testing.T) {
	ctx := context.Background()
	for _, kind := range []Kind{KindHash, KindSorted} {
		t.Run(string(kind), func(t *testing.T) {
			st, man := residentFixture(t, kind)
			whole, err := Open(ctx, st, man.Name, Options{ResidentBytes: -1})
			if err != nil {
				t.Fatal(err)
			}
			type probe struct {
				fr   *FragmentEntry
				gi   int
				want []entry
			}
			var probes []probe
			for fi := range man.Fragments {
				fr := &man.Fragments[fi]
				for gi := range fr.Groups {
					all, err := whole.group(ctx, new(meter), fr, gi)
					if err != nil {
						t.Fatal(err)
					}
					for i := 0; i < len(all); i += 37 {
						var want []entry
						for _, e := range all {
							if bytes.Equal(e.Key, all[i].Key) {
								want = append(want, e)
							}
						}
						probes = append(probes, probe{fr, gi, want})
					}
				}
			}
			ri, err := Open(ctx, st, man.Name, Options{})
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			errs := make(chan error, 3)
			for w := range 3 {
				go func() {
					errs <- func() error {
						for i := w; ; i++ {
							select {
							case <-done:
								return nil
							default:
							}
							p := probes[i%len(probes)]
							got, ok, err := ri.groupKey(ctx, new(meter), p.fr, p.gi, p.want[0].Key)
							if err != nil || !ok || len(got) != len(p.want) {
								return fmt.Errorf("key %x: %d entries (%v, %v), want %d", p.want[0].Key, len(got), ok, err, len(p.want))
							}
							for k := range got {
								w := &p.want[k]
								if compareEntries(&got[k], w) != 0 || got[k].N != w.N || !bytes.Equal(got[k].Cover, w.Cover) {
									return fmt.Errorf("key %x entry %d: got %+v, want %+v", w.Key, k, got[k], *w)
								}
							}
						}
					}()
				}()
			}
			for range 3 {
				if _, err := ri.Warm(ctx); err != nil {
					t.Fatal(err)
				}
				ri.DropCache()
			}
			if _, err := ri.Warm(ctx); err != nil {
				t.Fatal(err)
			}
			checkAllResident(t, ri)
			close(done)
			for range 3 {
				if err := <-errs; err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestNewResidentGroup builds resident groups from entries in lookup
// order (keys out of byte order, as a hash index stores them), with row
// numbers that fit 32 bits and ones that do not, and finds every key.
func TestNewResidentGroup(t *testing.T) {
	k := func(s string) []byte { return []byte(s) }
	for _, tc := range []struct {
		name      string
		es        []entry
		fixedKeys bool  // every key as long: no key offsets
		rowWidth  uint8 // bits a row number takes
	}{
		{"narrow", []entry{
			{Key: k("m"), File: 1, RG: 0, Row: 7, N: 2, Cover: k("c1")},
			{Key: k("m"), File: 2, RG: 3, Row: 0, N: 1},
			{Key: k("b"), File: 0, RG: 1, Row: math.MaxUint32, N: 1, Cover: k("c3")},
			{Key: k("z"), File: 4, RG: 0, Row: 12, N: 5},
		}, true, 32},
		{"row past 32 bits", []entry{
			{Key: k("q"), File: 1, RG: 0, Row: 1 << 40, N: 1},
			{Key: k("a"), File: 2, RG: 3, Row: 3, N: 9},
		}, true, 40},
		{"negative run (an aggregate's)", []entry{
			{Key: k("q"), File: aggFile, RG: aggRG, Row: 0, N: -1, Cover: k("agg")},
			{Key: k("q"), File: 2, RG: 3, Row: 3, N: 9},
		}, true, 2},
		{"extremes", []entry{
			{Key: k("long key"), File: math.MinInt32, RG: math.MaxInt32, Row: math.MinInt64, N: math.MaxInt64},
			{Key: k("k"), File: math.MaxInt32, RG: math.MinInt32, Row: math.MaxInt64, N: math.MinInt64},
			{Key: k("k"), File: 0, RG: 0, Row: -1, N: 0},
		}, false, 64},
		{"one value a column", []entry{
			{Key: k("x"), File: 5, RG: 2, Row: 9, N: 1},
		}, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, ok := newResidentGroup(tc.es)
			if !ok {
				t.Fatal("not resident")
			}
			if (g.keyEnds == nil) != tc.fixedKeys || g.row.width != tc.rowWidth {
				t.Fatalf("fixed-width keys %v, row width %d; want %v, %d", g.keyEnds == nil, g.row.width, tc.fixedKeys, tc.rowWidth)
			}
			want := map[string][]entry{}
			for _, e := range tc.es {
				want[string(e.Key)] = append(want[string(e.Key)], e)
			}
			for key, w := range want {
				got := g.find([]byte(key), 7)
				if len(got) != len(w) {
					t.Fatalf("key %q: %d entries, want %d", key, len(got), len(w))
				}
				for i := range w {
					w[i].Bucket = 7
					if compareEntries(&got[i], &w[i]) != 0 || got[i].N != w[i].N || !bytes.Equal(got[i].Cover, w[i].Cover) {
						t.Fatalf("key %q entry %d: got %+v, want %+v", key, i, got[i], w[i])
					}
				}
			}
			for _, absent := range []string{"", "0", "c", "n", "zz"} {
				if got := g.find([]byte(absent), 0); got != nil {
					t.Fatalf("absent key %q: %v", absent, got)
				}
			}
		})
	}
	// A hot key: more entries than find unpacks at a time, between two
	// other keys, some with covers.
	var es []entry
	es = append(es, entry{Key: k("a"), File: 3, Row: 1, N: 1})
	for i := range 1000 {
		e := entry{Key: k("h"), File: int32(i % 7), RG: int32(i % 3), Row: int64(i * 13), N: int64(1 + i%5)}
		if i%9 == 0 {
			e.Cover = []byte(fmt.Sprint(i))
		}
		es = append(es, e)
	}
	es = append(es, entry{Key: k("z"), File: 1, Row: 5, N: 2, Cover: k("zc")})
	g, ok := newResidentGroup(es)
	if !ok {
		t.Fatal("hot key: not resident")
	}
	for _, key := range []string{"a", "h", "z"} {
		var want []entry
		for _, e := range es {
			if string(e.Key) == key {
				want = append(want, e)
			}
		}
		got := g.find([]byte(key), 0)
		if len(got) != len(want) {
			t.Fatalf("hot key group, key %q: %d entries, want %d", key, len(got), len(want))
		}
		for i := range want {
			if compareEntries(&got[i], &want[i]) != 0 || got[i].N != want[i].N || !bytes.Equal(got[i].Cover, want[i].Cover) {
				t.Fatalf("hot key group, key %q entry %d: got %+v, want %+v", key, i, got[i], want[i])
			}
		}
	}
	// A key's entries apart is not lookup order: refused.
	if _, ok := newResidentGroup([]entry{{Key: k("a")}, {Key: k("b")}, {Key: k("a")}}); ok {
		t.Fatal("a key's entries apart: made resident")
	}
}

// TestResidentSkipsDamagedGroup: with one group's pages damaged (footer
// intact), Warm succeeds, that group alone is not resident, its keys'
// lookups report the damage as a *FragmentError, and every other group is
// resident and answers.
func TestResidentSkipsDamagedGroup(t *testing.T) {
	ctx := context.Background()
	st, man := residentFixture(t, KindHash)
	fr := &man.Fragments[0]
	if len(fr.Groups) < 3 {
		t.Fatalf("%d groups in the first fragment: too few", len(fr.Groups))
	}
	clean, err := Open(ctx, st, man.Name, Options{ResidentBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	keyOf := func(gi int) []byte {
		es, err := clean.group(ctx, new(meter), fr, gi)
		if err != nil || len(es) == 0 {
			t.Fatalf("group %d: %d entries, %v", gi, len(es), err)
		}
		return es[len(es)/2].Key
	}
	const bad = 1
	badKey, goodKey := keyOf(bad), keyOf(bad+1)
	fk := folderOf(man.Name) + fr.Path
	b, err := store.ReadAll(ctx, st, fk)
	if err != nil {
		t.Fatal(err)
	}
	g := fr.Groups[bad]
	for i := range int64(256) {
		b[g.Offset+g.Length/2-128+i] ^= byte(0x5a + i)
	}
	if err := store.WriteAll(ctx, st, fk, b, nil); err != nil {
		t.Fatal(err)
	}
	ri, err := Open(ctx, st, man.Name, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ri.Warm(ctx); err != nil {
		t.Fatalf("warm: %v", err)
	}
	for fi := range man.Fragments {
		f := &man.Fragments[fi]
		for gi := range f.Groups {
			if want := fi != 0 || gi != bad; ri.isResident(f, gi) != want {
				t.Fatalf("fragment %d group %d resident: %v, want %v", fi, gi, !want, want)
			}
		}
	}
	var fe *FragmentError
	if _, _, err := ri.groupKey(ctx, new(meter), fr, bad, badKey); !errors.As(err, &fe) || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a key of the damaged group: %v, want a *FragmentError", err)
	}
	if es, ok, err := ri.groupKey(ctx, new(meter), fr, bad+1, goodKey); err != nil || !ok || len(es) == 0 {
		t.Fatalf("a key of the next group: %d entries, %v, %v", len(es), ok, err)
	}
}

// TestResidentRefresh: a Refresh of the handle to a version whose
// fragments were compacted drops the old fragments' resident groups, and a
// Warm makes the new ones resident.
func TestResidentRefresh(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	data, uris, _ := testLake(t, dir, false)
	idx, err := store.Open(ctx, "file://"+filepath.Join(dir, "indexes", "plays"))
	if err != nil {
		t.Fatal(err)
	}
	def := Definition{Name: "by_user", Key: "user_id", Kind: KindHash}
	if _, _, err := Create(ctx, idx, def, StoreResolver{data}, uris[:len(uris)/2]); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Update(ctx, idx, def.Name, StoreResolver{data}, uris[len(uris)/2:]); err != nil {
		t.Fatal(err)
	}
	ri, err := Open(ctx, idx, def.Name, Options{Resolver: StoreResolver{data}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ri.Warm(ctx); err != nil {
		t.Fatal(err)
	}
	checkAllResident(t, ri)
	before, _ := ri.resident.stats()
	if _, err := Compact(ctx, idx, def.Name); err != nil {
		t.Fatal(err)
	}
	if err := ri.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if used, n := ri.resident.stats(); n != 0 || used != 0 {
		t.Fatalf("after a Refresh to compacted fragments: %d old groups resident (%d bytes)", n, used)
	}
	if _, err := ri.Warm(ctx); err != nil {
		t.Fatal(err)
	}
	checkAllResident(t, ri)
	if after, _ := ri.resident.stats(); after > before+before/4 {
		t.Fatalf("resident bytes %d after compaction, %d before", after, before)
	}
}

// TestResidentEntryStream: a point lookup whose every candidate group is
// resident loads its entries on the caller's goroutine (newEntryStream's
// resident path); others read and decode as before. Both give every key
// the entries of an index with nothing resident, also with a budget that
// keeps about three quarters of the groups (groups are made resident in
// manifest order: the second fragment's are split).
func TestResidentEntryStream(t *testing.T) {
	ctx := context.Background()
	for _, kind := range []Kind{KindHash, KindSorted} {
		t.Run(string(kind), func(t *testing.T) {
			// Two fragments, a key's entries split between them (the
			// stream merges them).
			st, _ := store.Open(ctx, "mem://")
			man := &Manifest{Version: 1, Definition: Definition{Name: "rs", Key: "k", Kind: kind}, BucketHash: testHash(kind)}
			es := syntheticEntries(kind, testHash(kind), true, 20_000)
			// A hot key: in each fragment more entries than a stream
			// unpacks of a resident group at a time (residentPart).
			hot, _ := EncodeKey(int64(1)) // synthetic keys are multiples of 3
			var hotBucket int32
			if kind == KindHash {
				hotBucket = testHash(kind).bucket(hot)
			}
			for i := range 3 * residentPart {
				es = append(es, entry{Bucket: hotBucket, Key: hot, File: int32(10 + i%7), Row: int64(2 * i), N: 1})
			}
			slices.SortFunc(es, func(a, b entry) int { return compareEntries(&a, &b) })
			var halves [2][]entry
			for i, e := range es {
				halves[i%2] = append(halves[i%2], e)
			}
			for _, h := range halves {
				frs, _, err := writeFragments(ctx, st, man.Name, kind, h)
				if err != nil {
					t.Fatal(err)
				}
				man.Fragments = append(man.Fragments, frs...)
			}
			if err := commitManifest(ctx, st, man); err != nil {
				t.Fatal(err)
			}
			none, err := Open(ctx, st, man.Name, Options{ResidentBytes: -1})
			if err != nil {
				t.Fatal(err)
			}
			whole, err := Open(ctx, st, man.Name, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := whole.Warm(ctx); err != nil {
				t.Fatal(err)
			}
			all, _ := whole.resident.stats()
			part, err := Open(ctx, st, man.Name, Options{ResidentBytes: all * 3 / 4})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := part.Warm(ctx); err != nil {
				t.Fatal(err)
			}
			stream := func(ri *RowIndex, key []byte) (es []entry, fast bool) {
				t.Helper()
				before := ri.residentStreams.Load()
				s, err := ri.newEntryStream(ctx, new(meter), man, key, key, false, false)
				if err != nil {
					t.Fatal(err)
				}
				fast = ri.residentStreams.Load() > before
				for {
					e, ok, err := s.next()
					if err != nil {
						t.Fatal(err)
					}
					if !ok {
						return es, fast
					}
					es = append(es, e)
				}
			}
			var keys [][]byte
			for fi := range man.Fragments {
				fr := &man.Fragments[fi]
				for gi := range fr.Groups {
					es, err := none.group(ctx, new(meter), fr, gi)
					if err != nil {
						t.Fatal(err)
					}
					for i := 0; i < len(es); i += 97 {
						keys = append(keys, es[i].Key)
					}
				}
			}
			keys = append(keys, hot)
			// A resident hot key's stream unpacks its entries a part at a
			// time: after a few, most are still packed.
			if s, err := whole.newEntryStream(ctx, new(meter), man, hot, hot, false, false); err != nil {
				t.Fatal(err)
			} else {
				for range 10 {
					if _, ok, err := s.next(); !ok || err != nil {
						t.Fatalf("hot key: %v, %v", ok, err)
					}
				}
				packed := 0
				for _, c := range s.h {
					packed += c.rest.to - c.rest.at
				}
				if packed < residentPart {
					t.Fatalf("hot key: %d entries still packed after 10 of %d read, want at least %d", packed, 3*residentPart, residentPart)
				}
			}
			paths := map[bool]int{}
			for _, key := range keys {
				want, fast := stream(none, key)
				if fast || len(want) == 0 {
					t.Fatalf("key %x: %d entries, resident path %v with nothing resident", key, len(want), fast)
				}
				for name, ri := range map[string]*RowIndex{"whole": whole, "part": part} {
					got, fast := stream(ri, key)
					if name == "whole" && !fast {
						t.Fatalf("key %x: not on the resident path with every group resident", key)
					}
					if name == "part" {
						paths[fast]++
					}
					if len(got) != len(want) {
						t.Fatalf("%s: key %x: %d entries, want %d", name, key, len(got), len(want))
					}
					for k := range got {
						if compareEntries(&got[k], &want[k]) != 0 || got[k].N != want[k].N {
							t.Fatalf("%s: key %x entry %d: got %+v, want %+v", name, key, k, got[k], want[k])
						}
					}
				}
			}
			if paths[true] == 0 || paths[false] == 0 {
				t.Fatalf("part resident: %d keys on the resident path, %d not: want both", paths[true], paths[false])
			}
			t.Logf("%d fragments, %d keys; part resident: %v", len(man.Fragments), len(keys), paths)
		})
	}
}

// TestPackedInts: every width from 0 to 64, values across word boundaries,
// read back as packed.
func TestPackedInts(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 44))
	for width := 0; width <= 64; width++ {
		for _, n := range []int{1, 2, 63, 64, 65, 1000} {
			// The least value, so that base+d does not pass MaxInt64.
			span := uint64(math.MaxUint64)
			if width < 64 {
				span = 1<<width - 1
			}
			base := int64(r.Uint64())
			if span > 0 {
				base = int64(uint64(1)<<63 + r.Uint64N(math.MaxUint64-span+1))
			}
			vs := make([]int64, n)
			for i := range vs {
				var d uint64
				if width > 0 {
					d = r.Uint64() >> (64 - width)
				}
				vs[i] = int64(uint64(base) + d)
			}
			vs[r.IntN(n)] = base
			p := packInts(n, func(i int) int64 { return vs[i] })
			if int(p.width) > width {
				t.Fatalf("width %d, n %d: packed in %d bits", width, n, p.width)
			}
			for i, v := range vs {
				if got := p.get(i); got != v {
					t.Fatalf("width %d, n %d: value %d is %d, want %d", width, n, i, got, v)
				}
			}

		}
	}
}

// BenchmarkResidentFind: the entries of a hot key (8,000 in the group,
// as a group of the top key of the 1 GB arrival-order lake holds) and of a
// light key.
func BenchmarkResidentFind(b *testing.B) {
	var es []entry
	for u := range 2000 {
		es = append(es, entry{Key: binary.BigEndian.AppendUint64(nil, uint64(u)), File: int32(u % 100), Row: int64(u * 97), N: 1})
	}
	hot := binary.BigEndian.AppendUint64(nil, 5000)
	for i := range 8000 {
		es = append(es, entry{Key: hot, File: int32(i % 100), RG: int32(i % 27), Row: int64(i*31) % 12000, N: int64(1 + i%3)})
	}
	g, ok := newResidentGroup(es)
	if !ok {
		b.Fatal("not resident")
	}
	for _, key := range [][]byte{hot, es[777].Key} {
		b.Run(fmt.Sprintf("entries=%d", len(g.find(key, 0))), func(b *testing.B) {
			for b.Loop() {
				g.find(key, 0)
			}
		})
	}
}
