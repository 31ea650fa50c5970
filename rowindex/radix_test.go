package rowindex

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestRadixSortMatchesCompareRefs: the build's radix sort of run refs
// gives the order of compareRefs on int keys, short and long byte keys
// (longer than shortKeys: settled by the records), several buckets, and
// many equal keys (settled by file, row group and row digits), and that
// every entry reads back as added, from its ref alone or its record.
func TestRadixSortMatchesCompareRefs(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{10, 100, 5000, 60000} {
		b := newRunBuffer(64 << 20)
		var added []entry
		for i := range n {
			var key []byte
			switch rng.IntN(3) {
			case 0:
				key = appendIntKey(nil, rng.Int64N(1000)-500)
			case 1:
				key = appendIntKey(nil, rng.Int64())
			default:
				l := rng.IntN(14)
				key = []byte{tagBytes}
				for range l {
					key = append(key, byte('a'+rng.IntN(3)))
				}
			}
			var cover []byte
			if rng.IntN(4) == 0 {
				cover = []byte{valInt, byte(i)}
			}
			e := entry{Bucket: int32(rng.IntN(3)), Key: key, File: int32(i / 1000), RG: int32(rng.IntN(2)), Row: int64(i), N: int64(1 + rng.IntN(3)), Cover: cover}
			added = append(added, e)
			b.add(e.Bucket, e.Key, e.File, e.RG, e.Row, e.N, e.Cover)
		}
		want := slices.Clone(b.refs)
		slices.SortFunc(want, b.compareRefs)
		b.sort()
		rows := func(rs []runRef) []uint32 {
			var o []uint32
			for _, r := range rs {
				o = append(o, r.row())
			}
			slices.Sort(o)
			return o
		}
		var got []runRef
		for i := range b.refs {
			got = append(got, b.at(i))
		}
		if !slices.Equal(rows(want), rows(got)) {
			t.Fatalf("n=%d: the radix sort lost or duplicated refs", n)
		}
		for i := range got {
			if b.compareRefs(got[i], want[i]) != 0 {
				t.Fatalf("n=%d: ref %d differs from the comparison sort's", n, i)
			}
			var e entry
			var kbuf [shortKeys]byte
			if err := b.entry(got[i], &e, &kbuf); err != nil {
				t.Fatal(err)
			}
			a := added[e.Row]
			if e.Bucket != a.Bucket || !bytes.Equal(e.Key, a.Key) || e.File != a.File || e.RG != a.RG || e.N != a.N || !bytes.Equal(e.Cover, a.Cover) {
				t.Fatalf("n=%d: entry %+v read back as %+v", n, a, e)
			}
		}
	}
}

// BenchmarkRadixSort sorts a run buffer of 2M int-key entries as an
// arrival-order scan adds them (Zipf keys, one-row runs, 12k-row groups),
// for a sorted row index (bucket 0) and a hash one (bucket of the key).
func BenchmarkRadixSort(b *testing.B) {
	for _, kind := range []Kind{KindSorted, KindHash} {
		b.Run(string(kind), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			z := rand.NewZipf(rng, 1.2, 1, 1_000_000)
			const n = 2_000_000
			buf := newRunBuffer(1 << 30)
			for i := range n {
				k := appendIntKey(nil, int64(z.Uint64()*2654435761%4_294_967_291))
				var bucket int32
				if kind == KindHash {
					bucket = BucketFNV1aMix.bucket(k)
				}
				buf.add(bucket, k, int32(i/300_000), int32(i%300_000/12_000), int64(i%12_000), 1, nil)
			}
			orig := slices.Clone(buf.refs)
			b.ResetTimer()
			for b.Loop() {
				copy(buf.refs, orig)
				buf.sort()
			}
		})
	}
}

// TestKeyWindowSort: buffers added as a scanning worker adds them (files,
// row groups and rows in order) are sorted by keyWindowSort when their keys
// vary in at most 32 bits, and by the radix sort otherwise; either way the
// order is compareRefs' (equal keys by file, row group, row). Cases: Zipf
// keys with a hot key, one key only, keys varying across a word boundary
// (low byte of w[0] and top bytes of w[1]), keys wider than 32 bits,
// buckets (a window of their own: a hash row index's buckets, of keys
// narrow and wide), a ref with a record, and refs out of (file, rg, row)
// order.
func TestKeyWindowSort(t *testing.T) {
	type tc struct {
		name string
		n    int
		key  func(rng *rand.Rand, z *rand.Zipf, i int) int64
		// bucket, cover and shuffle break the fast path's preconditions
		bucket     func(i int) int32
		hashBucket bool // BucketFNV1aMix.bucket(key), as a hash row index
		cover      func(i int) []byte
		shuffle    bool
		fast       bool // keyWindowSort must apply
		// unpacked: buckets differ but bucket, key and index do not fit
		// one uint64 together (two sorts, the bucket's gathered)
		unpacked bool
	}
	zipf := func(_ *rand.Rand, z *rand.Zipf, _ int) int64 { return int64(z.Uint64() * 2654435761 % 4_294_967_291) }
	cases := []tc{
		{name: "zipf ids", n: 50_000, key: zipf, fast: true},
		{name: "one key", n: 5_000, key: func(*rand.Rand, *rand.Zipf, int) int64 { return 42 }, fast: true},
		{name: "small ids", n: 5_000, key: func(rng *rand.Rand, _ *rand.Zipf, _ int) int64 { return rng.Int64N(300) }, fast: true},
		// negative and positive: the sign bit flips the top byte
		{name: "signed ids", n: 5_000, key: func(rng *rand.Rand, _ *rand.Zipf, _ int) int64 { return rng.Int64N(300) - 150 }, fast: false},
		{name: "across words", n: 5_000, key: func(rng *rand.Rand, _ *rand.Zipf, _ int) int64 { return rng.Int64N(1<<30) << 2 }, fast: true},
		{name: "wide keys", n: 5_000, key: func(rng *rand.Rand, _ *rand.Zipf, _ int) int64 { return rng.Int64() }, fast: false},
		// the bucket bits are far from the key's low bytes: a window of
		// their own, sorted after the key's
		{name: "two buckets", n: 5_000, key: zipf, bucket: func(i int) int32 { return int32(i % 2) }, fast: true},
		{name: "buckets, small ids", n: 5_000, key: func(rng *rand.Rand, _ *rand.Zipf, _ int) int64 { return rng.Int64N(300) }, bucket: func(i int) int32 { return int32(i % 3) }, fast: true},
		{name: "many buckets", n: 5_000, key: zipf, bucket: func(i int) int32 { return int32(i % 300) }, fast: true},
		// as a hash row index adds them: the bucket is the key's hash
		{name: "hash buckets", n: 60_000, key: zipf, hashBucket: true, fast: true},
		// 17 index bits + 16 bucket bits + 32 key bits: one too many
		{name: "hash buckets, too wide to pack", n: 70_000, key: zipf, hashBucket: true, fast: true, unpacked: true},
		{name: "hash buckets, small ids", n: 70_000, key: func(rng *rand.Rand, _ *rand.Zipf, _ int) int64 { return rng.Int64N(1 << 20) }, hashBucket: true, fast: true},
		{name: "hash buckets, one bucket bit", n: 5_000, key: zipf, bucket: func(i int) int32 { return int32(i%2) << 15 }, fast: true},
		{name: "hash buckets, wide keys", n: 5_000, key: func(rng *rand.Rand, _ *rand.Zipf, _ int) int64 { return rng.Int64() }, hashBucket: true, fast: false},
		{name: "hash buckets, one key", n: 5_000, key: func(*rand.Rand, *rand.Zipf, int) int64 { return 42 }, hashBucket: true, fast: true},
		{name: "a record", n: 5_000, key: zipf, cover: func(i int) []byte {
			if i == 77 {
				return []byte{valInt, 1}
			}
			return nil
		}, fast: false},
		{name: "out of order", n: 5_000, key: zipf, shuffle: true, fast: false},
		{name: "tiny", n: 100, key: zipf, fast: false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 4))
			z := rand.NewZipf(rng, 1.2, 1, 100_000)
			b := newRunBuffer(256 << 20)
			var added []entry
			for i := range c.n {
				e := entry{Key: appendIntKey(nil, c.key(rng, z, i)), File: int32(i / 2000), RG: int32(i % 2000 / 300), Row: int64(i % 2000 % 300), N: 1}
				if c.bucket != nil {
					e.Bucket = c.bucket(i)
				}
				if c.hashBucket {
					e.Bucket = BucketFNV1aMix.bucket(e.Key)
				}
				if c.cover != nil {
					e.Cover = c.cover(i)
				}
				added = append(added, e)
			}
			if c.shuffle {
				rng.Shuffle(len(added), func(i, j int) { added[i], added[j] = added[j], added[i] })
			}
			for _, e := range added {
				b.add(e.Bucket, e.Key, e.File, e.RG, e.Row, e.N, e.Cover)
			}
			want := slices.Clone(b.refs)
			slices.SortFunc(want, b.compareRefs)
			probe := &runBuffer{refs: slices.Clone(b.refs)}
			if got := probe.keyWindowSort(); got != c.fast {
				t.Fatalf("keyWindowSort applied = %v, want %v", got, c.fast)
			}
			if bucketed := c.bucket != nil || c.hashBucket; c.fast && bucketed && probe.order != nil {
				if packed := probe.orderMask != 1<<32-1; packed == c.unpacked {
					t.Fatalf("bucket and key windows sorted as one = %v, want %v", packed, !c.unpacked)
				}
			}
			b.sort()
			for i := range want {
				if got := b.at(i); got != want[i] {
					t.Fatalf("ref %d: %+v, want %+v", i, got, want[i])
				}
			}
		})
	}
}

// TestSortedRunReadsBack: a buffer that keyWindowSort sorts without moving
// its refs (a hash row index's buckets, more entries than one gathered
// block) reads back in fragment order both in memory (memRun) and from its
// run file, every entry as added.
func TestSortedRunReadsBack(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	z := rand.NewZipf(rng, 1.2, 1, 50_000)
	b := newRunBuffer(64 << 20)
	var want []entry
	for i := range 3*gatherBlock + 77 {
		k := appendIntKey(nil, int64(z.Uint64()*2654435761%4_294_967_291))
		e := entry{Bucket: BucketFNV1aMix.bucket(k), Key: k, File: int32(i / 5000), RG: int32(i % 5000 / 1000), Row: int64(i % 1000), N: 1 + int64(i%3)}
		want = append(want, e)
		b.add(e.Bucket, e.Key, e.File, e.RG, e.Row, e.N, e.Cover)
	}
	slices.SortFunc(want, func(a, b entry) int { return compareEntries(&a, &b) })
	b.sort()
	if b.order == nil {
		t.Fatal("keyWindowSort did not apply")
	}
	check := func(name string, src entrySource) {
		defer src.close()
		for i := 0; ; i++ {
			e, err := src.next()
			if err == io.EOF {
				if i != len(want) {
					t.Fatalf("%s: %d entries, want %d", name, i, len(want))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			w := want[i]
			if e.Bucket != w.Bucket || !bytes.Equal(e.Key, w.Key) || e.File != w.File || e.RG != w.RG || e.Row != w.Row || e.N != w.N {
				t.Fatalf("%s: entry %d: %+v, want %+v", name, i, *e, w)
			}
		}
	}
	check("memRun", &memRun{b: b})
	tmp, err := newSpillDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f, err := tmp.create("run")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := writeRun(f, b); err != nil {
		t.Fatal(err)
	}
	f.Close()
	fr, err := openRun(f.Name(), mergeReadBuffer)
	if err != nil {
		t.Fatal(err)
	}
	check("run file", fr)
}

// TestWriteRunBytes: writeRun, which encodes refs that hold their entry
// straight from their words into one buffer, writes the bytes of
// runWriter entry by entry (the run-file format fileRun reads), for
// buffers sorted with and without moving the refs, with long keys, covers,
// negative and aggregate ids, and more entries than one write buffer.
func TestWriteRunBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, mixed := range []bool{false, true} {
		b := newRunBuffer(256 << 20)
		for i := range 40_000 {
			k := appendIntKey(nil, rng.Int64N(1<<30))
			if mixed && i%3 == 0 {
				k = appendIntKey(nil, -rng.Int64N(1<<30))
			}
			e := entry{Bucket: BucketFNV1aMix.bucket(k), Key: k, File: int32(i / 7000), RG: int32(i % 7000 / 1000), Row: int64(i % 1000), N: 1 + rng.Int64N(1<<20)}
			if mixed && i%5 == 0 {
				e.Key = append([]byte{tagBytes}, bytes.Repeat([]byte{'x'}, rng.IntN(20))...)
				e.Bucket = BucketFNV1aMix.bucket(e.Key)
			}
			if mixed && i%7 == 0 {
				e.Cover = []byte{valInt, byte(i)}
			}
			if mixed && i%11 == 0 {
				e.File, e.RG, e.Row, e.N = aggFile, aggRG, 0, 0
			}
			b.add(e.Bucket, e.Key, e.File, e.RG, e.Row, e.N, e.Cover)
		}
		b.sort()
		if (b.order != nil) == mixed {
			t.Fatalf("mixed=%v: sorted in place = %v", mixed, b.order != nil)
		}
		dir := t.TempDir()
		got, err := os.Create(filepath.Join(dir, "got"))
		if err != nil {
			t.Fatal(err)
		}
		n, err := writeRun(got, b)
		if err != nil {
			t.Fatal(err)
		}
		got.Close()
		want, err := os.Create(filepath.Join(dir, "want"))
		if err != nil {
			t.Fatal(err)
		}
		rw := newRunWriter(want)
		var e entry
		var kbuf [shortKeys]byte
		for i := range b.refs {
			if err := b.entry(b.at(i), &e, &kbuf); err != nil {
				t.Fatal(err)
			}
			if err := rw.writeEntry(&e); err != nil {
				t.Fatal(err)
			}
		}
		if err := rw.flush(); err != nil {
			t.Fatal(err)
		}
		want.Close()
		g, _ := os.ReadFile(got.Name())
		w, _ := os.ReadFile(want.Name())
		if !bytes.Equal(g, w) || n != int64(len(w)) {
			t.Fatalf("mixed=%v: writeRun wrote %d bytes (reported %d), want %d, equal %v", mixed, len(g), n, len(w), bytes.Equal(g, w))
		}
	}
}
