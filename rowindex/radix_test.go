package rowindex

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRadixSortMatchesCompareRefs: the build's radix sort of run refs
// gives the order of compareRefs on int keys, short and long byte keys
// (longer than shortKeys: settled by the records), several buckets, and
// many equal keys.
func TestRadixSortMatchesCompareRefs(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{10, 100, 5000, 60000} {
		b := newRunBuffer(64 << 20)
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
			b.add(int32(rng.IntN(3)), key, int32(i/1000), 0, int64(i), 1, nil)
		}
		want := slices.Clone(b.refs)
		slices.SortFunc(want, b.compareRefs)
		b.sort()
		offs := func(rs []runRef) []uint32 {
			var o []uint32
			for _, r := range rs {
				o = append(o, r.off)
			}
			slices.Sort(o)
			return o
		}
		if !slices.Equal(offs(want), offs(b.refs)) {
			t.Fatalf("n=%d: the radix sort lost or duplicated refs", n)
		}
		for i := range b.refs {
			if b.compareRefs(b.refs[i], want[i]) != 0 {
				t.Fatalf("n=%d: ref %d differs from the comparison sort's", n, i)
			}
		}
	}
}
