package rowindex

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestMergerMatchesSort: merging sorted runs (spilled run files and
// in-memory buffers, some empty) gives every entry once, in the order of
// compareEntries over all entries — with equal keys across runs (settled by
// file, row group and row), long byte keys, cover values, several buckets,
// and run counts that are not powers of two — and identical entries of two
// runs (aggregate partials spilled in pieces) in run order.
func TestMergerMatchesSort(t *testing.T) {
	for _, k := range []int{0, 1, 2, 3, 5, 8, 13, 64} {
		t.Run(fmt.Sprint(k), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(k), 9))
			tmp, err := newSpillDir(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			var all []entry
			var srcs []entrySource
			for r := range k {
				b := newRunBuffer(8 << 20)
				n := rng.IntN(3) * rng.IntN(400) // some runs empty
				for i := range n {
					var key []byte
					switch rng.IntN(3) {
					case 0:
						key = appendIntKey(nil, rng.Int64N(20)) // equal keys across runs
					case 1:
						key = appendIntKey(nil, rng.Int64())
					default:
						key = []byte{tagBytes}
						for range rng.IntN(14) {
							key = append(key, byte('a'+rng.IntN(2)))
						}
					}
					e := entry{Bucket: int32(rng.IntN(2)), Key: key, File: int32(rng.IntN(4)), RG: int32(rng.IntN(3)), Row: int64(i), N: 1}
					if rng.IntN(5) == 0 {
						e.Cover = []byte{valInt, byte(r)}
						if rng.IntN(10) == 0 {
							// larger than the run file's read buffer
							e.Cover = append(e.Cover, bytes.Repeat([]byte{byte(i)}, 100)...)
						}
					}
					if r < 2 && i == 0 {
						// the same entry in runs 0 and 1
						e = entry{Key: appendIntKey(nil, 7), File: 1, RG: aggRG, Cover: []byte{valInt, byte(r)}}
					}
					all = append(all, e)
					b.add(e.Bucket, e.Key, e.File, e.RG, e.Row, e.N, e.Cover)
				}
				b.sort()
				if r%2 == 0 {
					srcs = append(srcs, &memRun{b: b})
					continue
				}
				f, err := tmp.create("run")
				if err != nil {
					t.Fatal(err)
				}
				if _, err := writeRun(f, b); err != nil {
					t.Fatal(err)
				}
				f.Close()
				fr, err := openRun(f.Name(), 64) // a small buffer: records straddle it
				if err != nil {
					t.Fatal(err)
				}
				srcs = append(srcs, fr)
			}
			slices.SortStableFunc(all, func(a, b entry) int { return compareEntries(&a, &b) })
			m, err := newMerger(srcs)
			if err != nil {
				t.Fatal(err)
			}
			defer m.close()
			for i := 0; ; i++ {
				e, err := m.next()
				if err == io.EOF {
					if i != len(all) {
						t.Fatalf("merged %d entries, want %d", i, len(all))
					}
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				w := all[i]
				if i >= len(all) || e.Bucket != w.Bucket || !bytes.Equal(e.Key, w.Key) || e.File != w.File || e.RG != w.RG || e.Row != w.Row || e.N != w.N || !bytes.Equal(e.Cover, w.Cover) {
					t.Fatalf("entry %d: %+v, want %+v", i, *e, w)
				}
			}
		})
	}
}
