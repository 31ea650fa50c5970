package rowindex

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ariadne-go/ariadne/store"
	"github.com/parquet-go/parquet-go"
)

// TestIntBucket: intHash and intBucket are bucket's hash of an int key's
// encoding under both bucket hashes, for keys over the whole range
// (negative ones included) and a dense run around zero.
func TestIntBucket(t *testing.T) {
	vals := []int64{0, 1, -1, 42, -42, 1 << 31, -(1 << 40), 1<<63 - 1, -1 << 63, 123456789}
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 20_000 {
		vals = append(vals, int64(i-10_000), rng.Int64(), -rng.Int64N(1<<40))
	}
	for _, h := range []BucketHash{BucketFNV1a, BucketFNV1aMix} {
		for _, i := range vals {
			key := appendIntKey(nil, i)
			v := binary.BigEndian.Uint64(key[1:])
			if got, want := h.intBucket(v), h.bucket(key); got != want {
				t.Fatalf("%q: key %d: bucket %d, want %d", h, i, got, want)
			}
			f := fnv.New64a()
			f.Write(key)
			if got, want := h.intHash(v), h.finish(f.Sum64()); got != want {
				t.Fatalf("%q: key %d: hash %x, want %x", h, i, got, want)
			}
		}
	}
	// The old hash is FNV-1a's top 16 bits, as formats 1 and 2 wrote.
	if got := BucketFNV1a.bucket([]byte("a")); got != int32(0xaf63dc4c8601ec8c>>48) {
		t.Fatalf("BucketFNV1a of \"a\" = %#x", got)
	}
}

// TestPartitionedBuildMatchesRuns builds row indexes over real files on
// the partitioned key-id path, under budgets that leave the key ids of the
// key-id path out but hold the partitions, and on the run path (key ids
// turned off): the data-file tables and fragments must be the same bytes.
// The lake of six files (several row groups each, Zipf keys) is scanned by
// six workers whose blocks interleave in the partition files; the files
// with null keys of every int type put runs across row-group boundaries.
// The same lake sorted by key checks a sorted row index's bounds from the
// footer. A budget too small for the largest partition goes to the run
// path.
func TestPartitionedBuildMatchesRuns(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	lake, lakeURIs, _ := testLake(t, dir, false)
	nk := writeNullKeys(t, ctx, lake)
	noKeyIDs := func(c *buildConfig) { c.noKeyIDs = true }
	sortedLake, sortedURIs, _ := testLake(t, filepath.Join(dir, "sorted"), true)
	type tc struct {
		name   string
		data   store.Store
		uris   []string
		key    string
		memory int64
		parts  int // the fewest partitions expected; 0: the run path
	}
	// The lake's ≈79,000 rows want ≈630 KB of key ids: a 400 KB budget
	// (200 KB to sort) leaves them out and splits the rows in 64
	// partitions. On the lake sorted by key, a sorted row index takes its
	// bounds from the first file's row groups (the first row group's keys
	// are the file's least: every other row would fall in the last
	// partition, over the budget). The null-key files' 3,411 rows need
	// 27 KB (24 KB by the first file's footer); 46 KB (23 KB to sort)
	// leaves them out for 32 partitions (under FNV-1a alone, the bucket
	// hash of formats 1–2, one held most rows of a hash index: their ≈40
	// keys differ in the last byte, which moves FNV's top 16 bits little).
	// At 800 bytes no partition of them fits.
	cases := []tc{
		{"lake", lake, lakeURIs, "user_id", 400_000, 16},
		{"sorted-lake", sortedLake, sortedURIs, "user_id", 400_000, 16},
		{"nk-i", lake, nk, "i", 46_000, 8},
		{"nk-i32", lake, nk, "i32", 46_000, 8},
		{"nk-ts", lake, nk, "ts", 46_000, 8},
		{"nk-u", lake, nk, "u", 46_000, 8},
		{"nk-tiny", lake, nk, "i", 800, 0},
	}
	for _, c := range cases {
		for _, kind := range []Kind{KindHash, KindSorted} {
			t.Run(c.name+"/"+string(kind), func(t *testing.T) {
				def := Definition{Name: "r", Key: c.key, Kind: kind}
				build := func(folder string, opts ...BuildOption) (store.Store, *Manifest, BuildStats) {
					return buildIn(t, filepath.Join(dir, "ix", c.name, string(kind), folder), def, c.data, c.uris, opts...)
				}
				pIdx, p, pSt := build("parts", WithMemory(c.memory))
				if c.parts == 0 {
					if pSt.KeyIDs || pSt.Partitions != 0 {
						t.Fatalf("a budget no partition fits kept a key-id path (%d partitions)", pSt.Partitions)
					}
				} else if !pSt.KeyIDs || pSt.Partitions < c.parts {
					t.Fatalf("key ids %v, %d partitions; want the partitioned path, at least %d", pSt.KeyIDs, pSt.Partitions, c.parts)
				}
				rIdx, r, rSt := build("runs", noKeyIDs)
				if rSt.KeyIDs {
					t.Fatal("key ids turned off, yet taken")
				}
				if pSt.Entries != rSt.Entries || pSt.Rows != rSt.Rows {
					t.Fatalf("%d entries of %d rows, the run path %d of %d", pSt.Entries, pSt.Rows, rSt.Entries, rSt.Rows)
				}
				sameBuild(t, pIdx, p, rIdx, r)
				t.Logf("%d partitions, %d entries, %d fragments", pSt.Partitions, pSt.Entries, pSt.Fragments)
			})
		}
	}
}

// TestPartitionedBuildStops: a build cancelled while it sorts its
// partitions returns the cancellation before it sorts another, commits no
// manifest, leaves no
// fragment in the index folder and removes its partition files, which
// were in its spill folder under the build's temporary folder and counted
// in its progress.
func TestPartitionedBuildStops(t *testing.T) {
	dir := t.TempDir()
	lake, uris, lakeFiles := testLake(t, dir, false)
	var rows int64
	for _, f := range lakeFiles {
		rows += f.Rows
	}
	for _, kind := range []Kind{KindHash, KindSorted} {
		t.Run(string(kind), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			tmp := t.TempDir()
			idx, err := store.Open(ctx, "file://"+filepath.Join(dir, "ix-stop", string(kind)))
			if err != nil {
				t.Fatal(err)
			}
			var seen []string
			var last BuildProgress
			after := 0 // partitions started after the cancellation
			stopAt := func(c *buildConfig) {
				c.onPartition = func(_ *partitions, i int) {
					if i < 3 {
						return
					}
					if i > 3 {
						after++
						return
					}
					// Partition files, in the build's spill folder.
					spill, _ := filepath.Glob(filepath.Join(tmp, "*", "part*"))
					seen = spill
					cancel()
				}
			}
			_, _, err = Create(ctx, idx, Definition{Name: "r", Key: "user_id", Kind: kind}, StoreResolver{lake}, uris,
				WithMemory(400_000), WithTempDir(tmp), stopAt, WithProgress(func(p BuildProgress) { last = p }))
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("cancelled build: %v", err)
			}
			// Each partition is seconds of work on a large build: none
			// starts once the build is cancelled.
			if after != 0 {
				t.Fatalf("%d partitions started after the cancellation", after)
			}
			// One file holds every partition's blocks.
			if len(seen) != 1 {
				t.Fatalf("%d partition files in the spill folder while sorting: %v", len(seen), seen)
			}
			// A record a row (no key is null; the ids are below 2³²).
			if last.Partitions < 16 || last.SpillBytes != rows*partNarrowBytes {
				t.Fatalf("progress counts %d partitions, %d bytes spilled; want %d bytes", last.Partitions, last.SpillBytes, rows*partNarrowBytes)
			}
			left, err := os.ReadDir(tmp)
			if err != nil || len(left) != 0 {
				t.Fatalf("the build's temporary folder holds %v (%v)", left, err)
			}
			if v, err := latestVersion(context.Background(), idx, "r", new(meter)); err != nil || v != 0 {
				t.Fatalf("manifest version %d (%v) after a cancelled build", v, err)
			}
			var files []string
			filepath.WalkDir(filepath.Join(dir, "ix-stop", string(kind)), func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() && strings.HasSuffix(p, ".parquet") {
					files = append(files, p)
				}
				return nil
			})
			if len(files) != 0 {
				t.Fatalf("fragments left: %v", files)
			}
		})
	}
}

// TestPartitionedBuildFallsBack: when a partition holds more keys than the
// scan's estimate let the build expect (here: the budget shrinks as the
// third partition starts, after fragments of the first two may have been
// written), the build deletes what it stored and the run path builds the
// index: the same bytes as the run path alone, no fragment left over.
func TestPartitionedBuildFallsBack(t *testing.T) {
	dir := t.TempDir()
	lake, uris, _ := testLake(t, dir, false)
	for _, kind := range []Kind{KindHash, KindSorted} {
		t.Run(string(kind), func(t *testing.T) {
			def := Definition{Name: "r", Key: "user_id", Kind: kind}
			shrink := func(c *buildConfig) {
				c.onPartition = func(p *partitions, i int) {
					if i == 2 {
						p.limit = p.parts[i].rows * partPlaceBytes
					}
				}
			}
			build := func(folder string, opts ...BuildOption) (store.Store, *Manifest, BuildStats) {
				return buildIn(t, filepath.Join(dir, "ix-fall", string(kind), folder), def, lake, uris, opts...)
			}
			fIdx, f, fSt := build("fall", WithMemory(400_000), shrink)
			if fSt.KeyIDs || fSt.Partitions != 0 {
				t.Fatalf("key ids %v, %d partitions after a partition outgrew the budget", fSt.KeyIDs, fSt.Partitions)
			}
			rIdx, r, _ := build("runs", func(c *buildConfig) { c.noKeyIDs = true })
			sameBuild(t, fIdx, f, rIdx, r)
			var frags int
			filepath.WalkDir(filepath.Join(dir, "ix-fall", string(kind), "fall"), func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() && strings.HasSuffix(p, ".parquet") {
					frags++
				}
				return nil
			})
			if frags != len(f.Fragments) {
				t.Fatalf("%d fragment files, the manifest lists %d", frags, len(f.Fragments))
			}
		})
	}
}

// TestPartitionedBuildReadPaths: a partition is read once when its (key
// id, row) pairs fit beside its places, else twice; one whose keys outgrow
// the pairs' room while it is read (more than the scan estimated) is read
// again the second way. Each way gives the run path's bytes.
func TestPartitionedBuildReadPaths(t *testing.T) {
	dir := t.TempDir()
	lake, uris, _ := testLake(t, dir, false)
	for _, kind := range []Kind{KindHash, KindSorted} {
		t.Run(string(kind), func(t *testing.T) {
			var parts *partitions
			var limit, grant int64
			paths := func(c *buildConfig) {
				c.onPartition = func(p *partitions, i int) {
					parts = p
					pf := &p.parts[i]
					switch i {
					case 1:
						// The scan's estimate: no more than 64 keys.
						limit, grant = p.limit, p.grant
						clear(p.sketch[i*sketchBits/64 : (i+1)*sketchBits/64])
						k := partKeys(t, p, i)
						if k <= p.keys(i) {
							t.Fatalf("partition %d: %d keys, estimated %d", i, k, p.keys(i))
						}
						p.limit = pf.rows*(partPlaceBytes+partPairBytes) + (k-1)*keyIDKeyBytes
						p.grant = p.limit
					case 2:
						// No room for the pairs by the estimate.
						p.limit, p.grant = limit, grant
						k := partKeys(t, p, i)
						p.limit = pf.rows*(partPlaceBytes+partPairBytes) + p.keys(i)*keyIDKeyBytes - 1
						p.grant = p.limit
						if pf.rows*partPlaceBytes+k*keyIDKeyBytes > p.limit {
							t.Fatalf("partition %d: %d keys leave no room for the second way", i, k)
						}
					case 3:
						// Room for the pairs in the grant, but not in the
						// share of it the one read may take (onceShare).
						p.limit, p.grant = limit, grant
						need := pf.rows*(partPlaceBytes+partPairBytes) + p.keys(i)*keyIDKeyBytes
						if need > p.limit {
							t.Fatalf("partition %d: %d bytes for one read, limit %d", i, need, p.limit)
						}
						p.grant = need
					case 4:
						p.limit, p.grant = limit, grant
					}
				}
			}
			def := Definition{Name: "r", Key: "user_id", Kind: kind}
			build := func(folder string, opts ...BuildOption) (store.Store, *Manifest, BuildStats) {
				return buildIn(t, filepath.Join(dir, "ix-paths", string(kind), folder), def, lake, uris, opts...)
			}
			// Few partitions (of a few hundred keys, more than the
			// estimate's margin): a budget the key-id path would take.
			partitioned := func(c *buildConfig) { c.partitioned = true }
			pIdx, p, pSt := build("parts", WithMemory(4<<20), partitioned, paths)
			if !pSt.KeyIDs || pSt.Partitions < 6 {
				t.Fatalf("key ids %v, %d partitions; want the partitioned path", pSt.KeyIDs, pSt.Partitions)
			}
			if !slices.Contains(parts.twice, 1) || !slices.Contains(parts.twice, 2) || !slices.Contains(parts.twice, 3) || len(parts.twice) >= pSt.Partitions-1 {
				t.Fatalf("partitions %v of %d read twice; want 1, 2, 3 and not most", parts.twice, pSt.Partitions)
			}
			rIdx, r, _ := build("runs", func(c *buildConfig) { c.noKeyIDs = true })
			sameBuild(t, pIdx, p, rIdx, r)
		})
	}
}

// partKeys counts partition i's distinct keys.
func partKeys(t *testing.T, p *partitions, i int) int64 {
	seen := map[uint64]bool{}
	for _, b := range p.parts[i].blocks {
		rec := make([]byte, b.size())
		if _, err := p.f.ReadAt(rec, b.off); err != nil {
			t.Fatal(err)
		}
		step, hi := b.layout()
		for o := 0; o+step <= len(rec); o += step {
			seen[recordKey(rec[o:], hi, step)] = true
		}
	}
	return int64(len(seen))
}

// buildIn creates row index def over uris of lake in folder dir (a
// temporary spill folder of its own) and fails the test on an error.
func buildIn(t *testing.T, dir string, def Definition, lake store.Store, uris []string, opts ...BuildOption) (store.Store, *Manifest, BuildStats) {
	t.Helper()
	ctx := context.Background()
	idx, err := store.Open(ctx, "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	man, st, err := Create(ctx, idx, def, StoreResolver{lake}, uris, append(opts, WithTempDir(t.TempDir()))...)
	if err != nil {
		t.Fatal(err)
	}
	return idx, man, st
}

// TestPartitionRetryKeepsGrant: a partition read once whose keys outgrow
// its pairs' room (more keys than the scan estimated) is read again
// within the memory the merge leaves it (p.grant), as a partition read
// twice from the start is: its places and keys over the grant (the
// merge's two fragments have the rest) hand the build to the run path,
// not past the budget.
func TestPartitionRetryKeepsGrant(t *testing.T) {
	tmp, err := newSpillDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer tmp.remove()
	const rows = 40000
	p := newPartitions(KindHash, BucketFNV1aMix, 1<<30, tmp, 1, 1)
	if err := p.openFile(0, &FileEntry{ID: 1, Rows: rows, RowGroupStarts: []int64{0}}, KeyInt); err != nil {
		t.Fatal(err)
	}
	var keys intKeys
	for r := range rows { // a key a row
		keys.vals = append(keys.vals, intWord(int64(r)))
	}
	w := newPartWriter(p)
	if err := w.addGroup(0, 0, &keys, rows); err != nil {
		t.Fatal(err)
	}
	if err := w.done(); err != nil {
		t.Fatal(err)
	}
	defer p.close()
	ps := p.source(context.Background())
	i := 0
	if p.parts[1].rows > p.parts[0].rows {
		i = 1
	}
	n := p.parts[i].rows
	// The scan's estimate: a few keys, so the one read is chosen.
	clear(p.sketch[i*sketchBits/64 : (i+1)*sketchBits/64])
	p.grant = 60 * n
	if est := n*(partPlaceBytes+partPairBytes) + p.keys(i)*keyIDKeyBytes; est > p.grant/onceShare {
		t.Fatalf("estimate %d bytes: the one read is not chosen (grant %d)", est, p.grant)
	}
	if need := n*partPlaceBytes + n*keyIDKeyBytes; need <= p.grant || need > p.limit {
		t.Fatalf("the second read needs %d: want over the grant %d, within the limit %d", need, p.grant, p.limit)
	}
	ps.part = i
	if err := ps.load(i); !errors.Is(err, errKeyIDsFull) {
		t.Fatalf("load: %v; want errKeyIDsFull (%d rows and keys over the grant %d)", err, n, p.grant)
	}
}

// TestBoundCells: a sorted build's partition of a key through the bound
// cells is the number of bounds at or below it, as a binary search of the
// bounds finds it, for bounds spread out, clustered (hot keys: many bounds
// in one cell), at the ends of the key range and few; keys at, beside and
// between bounds and outside their range.
func TestBoundCells(t *testing.T) {
	want := func(bounds []uint64, v uint64) int {
		i, found := slices.BinarySearch(bounds, v)
		if found {
			i++
		}
		return i
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	var cases [][]uint64
	cases = append(cases, nil, []uint64{5}, []uint64{0}, []uint64{math.MaxUint64},
		[]uint64{0, math.MaxUint64}, []uint64{1 << 63, 1<<63 + 1})
	for _, n := range []int{2, 3, 7, 127, 1023} {
		for _, spread := range []uint64{uint64(n), 1 << 20, 1 << 40, math.MaxUint64} {
			seen := map[uint64]bool{}
			var bs []uint64
			for len(bs) < n {
				// Half the bounds in a narrow run (hot keys), the
				// rest spread.
				v := 1<<63 + rnd.Uint64N(spread)
				if spread == math.MaxUint64 {
					v = rnd.Uint64()
				}
				if len(bs)%2 == 0 {
					v = 1<<63 + 1000 + rnd.Uint64N(uint64(4*n))
				}
				if !seen[v] {
					seen[v] = true
					bs = append(bs, v)
				}
			}
			slices.Sort(bs)
			cases = append(cases, bs)
		}
	}
	for _, bs := range cases {
		c := newBoundCells(bs)
		check := func(v uint64) {
			if got, w := c.count(bs, v), want(bs, v); got != w {
				t.Fatalf("%d bounds %v…: key %d in partition %d, want %d", len(bs), bs[:min(len(bs), 4)], v, got, w)
			}
		}
		for _, v := range []uint64{0, 1, 1 << 63, math.MaxUint64 - 1, math.MaxUint64} {
			check(v)
		}
		for _, b := range bs {
			check(b - 1)
			check(b)
			check(b + 1)
		}
		for range 2000 {
			if len(bs) > 0 && bs[len(bs)-1]-bs[0] < math.MaxUint64 {
				check(bs[0] + rnd.Uint64N(bs[len(bs)-1]-bs[0]+1))
			}
			check(rnd.Uint64())
		}
	}
}

// denseRow is a row of a lake of dense int ids.
type denseRow struct {
	ID int64 `parquet:"id"`
}

// TestPartitionedBuildDenseIDs: a hash build of dense int ids (0..59,999,
// arrival order, 4 files of 30,000 rows) under a budget that leaves the key
// ids out takes the partitioned path and builds what the run path builds.
// Under FNV-1a's top bits (the bucket hash of formats 1–2) the ids fell in
// a few of the partitions, the fullest over the budget, and the build went
// to the run path.
func TestPartitionedBuildDenseIDs(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	lakeDir := filepath.Join(dir, "lake")
	if err := os.MkdirAll(lakeDir, 0o755); err != nil {
		t.Fatal(err)
	}
	var uris []string
	for f := range 4 {
		rows := make([]denseRow, 30_000)
		for i := range rows {
			rows[i].ID = int64((i*7919 + f*13) % 60_000)
		}
		name := fmt.Sprintf("f%d.parquet", f)
		if err := parquet.WriteFile(filepath.Join(lakeDir, name), rows, parquet.MaxRowsPerRowGroup(10_000)); err != nil {
			t.Fatal(err)
		}
		uris = append(uris, name)
	}
	lake, err := store.Open(ctx, "file://"+lakeDir)
	if err != nil {
		t.Fatal(err)
	}
	def := Definition{Name: "d", Key: "id", Kind: KindHash}
	// 120,000 rows want ≈1 MB of key ids: 400 KB leaves them out and
	// splits the rows in 128 partitions. Under FNV-1a the build went to
	// the run path at every budget from 100 KB to 800 KB.
	pIdx, p, pSt := buildIn(t, filepath.Join(dir, "parts"), def, lake, uris, WithMemory(400_000))
	if !pSt.KeyIDs || pSt.Partitions == 0 {
		t.Fatalf("key ids %v, %d partitions: the build left the partitioned path", pSt.KeyIDs, pSt.Partitions)
	}
	rIdx, r, rSt := buildIn(t, filepath.Join(dir, "runs"), def, lake, uris, func(c *buildConfig) { c.noKeyIDs = true })
	if pSt.Entries != rSt.Entries || pSt.Rows != rSt.Rows {
		t.Fatalf("%d entries of %d rows, the run path %d of %d", pSt.Entries, pSt.Rows, rSt.Entries, rSt.Rows)
	}
	sameBuild(t, pIdx, p, rIdx, r)
	t.Logf("%d partitions, %d entries", pSt.Partitions, pSt.Entries)
}
