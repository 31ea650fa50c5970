package rowindex

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestFragFileEdgeGroups: fragFile writes parquet-go's bytes for the
// edges the random groups rarely reach: no group, groups of no rows
// between others, one entry, empty keys, keys of widths around the 9-byte
// table's, a page whose 64-row chunk brings its column exactly to the cut
// (and a byte short of it), keys of megabytes, a sorted dictionary far
// larger than a page, and 9-byte keys that differ only in their tag byte
// (buildDictionary9 compares the tag beside the last 8 bytes).
func TestFragFileEdgeGroups(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	mk := func(n int, key func(i int) []byte, cover func(i int) []byte) []diskEntry {
		g := make([]diskEntry, n)
		for i := range g {
			c := []byte{}
			if cover != nil {
				c = cover(i)
			}
			g[i] = diskEntry{Key: key(i), Cover: c, File: int32(rng.IntN(5)), RG: int32(rng.IntN(4)), Gap: int64(rng.IntN(1000)), N: 1}
		}
		return g
	}
	fixed := func(w int) func(int) []byte {
		return func(i int) []byte {
			b := make([]byte, w)
			for j := range b {
				b[j] = byte(rng.IntN(256))
			}
			return b
		}
	}
	cases := map[string][][]diskEntry{
		"none":        nil,
		"empty keys":  {mk(200, func(int) []byte { return []byte{} }, nil)},
		"one":         {mk(1, fixed(9), nil)},
		"w8":          {mk(3000, fixed(8), nil)},
		"w9cover":     {mk(3000, fixed(9), func(i int) []byte { return []byte{byte(i)} })},
		"w1":          {mk(3000, func(int) []byte { return []byte{byte(rng.IntN(3))} }, nil)},
		"bigdistinct": {mk(400, fixed(1000), nil)},
		"hugekey":     {mk(3, fixed(3<<20), nil)},
		// 63 keys of 1,000 bytes and one that brings the first chunk's
		// buffer (each value's bytes and 4) to pageBufferLimit exactly.
		"exact": {mk(128, func(i int) []byte {
			if i < 63 {
				return make([]byte, 1000)
			}
			return make([]byte, int(pageBufferLimit)-63*1004-4)
		}, nil)},
		"exact-1": {mk(128, func(i int) []byte {
			if i < 63 {
				return make([]byte, 1000)
			}
			return make([]byte, int(pageBufferLimit)-63*1004-5)
		}, nil)},
		"dupes9": {mk(5000, func(int) []byte { k, _ := EncodeKey(int64(rng.IntN(3))); return k }, nil)},
		// The same last 8 bytes under three tags: three keys each.
		"tags": {mk(3*5461, func(i int) []byte {
			k := make([]byte, 9)
			k[0] = []byte{tagInt, tagBytes, 0}[i%3]
			binary.LittleEndian.PutUint64(k[1:], uint64(i/3)*0x9E3779B97F4A7C15)
			return k
		}, nil)},
		"zero":     {mk(5, fixed(9), nil), mk(0, fixed(9), nil), mk(5, fixed(9), nil)},
		"zeroonly": {mk(0, fixed(9), nil)},
		"multi":    {mk(10, fixed(9), nil), mk(100, fixed(3), nil), mk(1, fixed(9), nil)},
	}
	for name, groups := range cases {
		for _, kind := range []Kind{KindHash, KindSorted} {
			t.Run(fmt.Sprintf("%s/%s", name, kind), func(t *testing.T) {
				got := encodeSpooled(t, groups, kind, false)
				want := writeRowsFragment(t, groups, kind, false)
				if !bytes.Equal(got, want) {
					t.Fatalf("fragFile wrote %d bytes, WriteRows %d: they differ", len(got), len(want))
				}
			})
		}
	}
}
