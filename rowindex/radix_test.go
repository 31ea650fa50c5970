package rowindex

import (
	"bytes"
	"math/rand/v2"
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
		if !slices.Equal(rows(want), rows(b.refs)) {
			t.Fatalf("n=%d: the radix sort lost or duplicated refs", n)
		}
		for i := range b.refs {
			if b.compareRefs(b.refs[i], want[i]) != 0 {
				t.Fatalf("n=%d: ref %d differs from the comparison sort's", n, i)
			}
			var e entry
			var kbuf [shortKeys]byte
			if err := b.entry(b.refs[i], &e, &kbuf); err != nil {
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
// arrival-order scan adds them (Zipf keys, one-row runs, 12k-row groups).
func BenchmarkRadixSort(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	z := rand.NewZipf(rng, 1.2, 1, 1_000_000)
	const n = 2_000_000
	buf := newRunBuffer(1 << 30)
	for i := range n {
		k := appendIntKey(nil, int64(z.Uint64()*2654435761%4_294_967_291))
		buf.add(0, k, int32(i/300_000), int32(i%300_000/12_000), int64(i%12_000), 1, nil)
	}
	orig := slices.Clone(buf.refs)
	b.ResetTimer()
	for b.Loop() {
		copy(buf.refs, orig)
		buf.sort()
	}
}
