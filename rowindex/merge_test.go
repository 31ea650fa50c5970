package rowindex

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
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

// TestRunFileRefRecords: a run file mixing ref records (short keys, no
// cover) and encoded entries (long keys, covers, aggregate records) reads
// back entry for entry through read buffers smaller than a ref record,
// about its size and large, and each ref record's words (what the merger
// compares) are the entry's packed order.
func TestRunFileRefRecords(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	var want []entry
	b := newRunBuffer(64 << 20)
	for i := range 5000 {
		e := entry{Key: appendIntKey(nil, rng.Int64N(1<<40)-1<<39), File: int32(i / 1000), RG: int32(i % 1000 / 100), Row: int64(i % 100 * 3), N: 1 + rng.Int64N(1<<31)}
		switch rng.IntN(10) {
		case 0:
			e.Key = append([]byte{tagBytes}, bytes.Repeat([]byte{'k'}, rng.IntN(30))...)
		case 1:
			e.Cover = []byte{valInt, byte(i)}
		case 2:
			e.File, e.RG, e.Row, e.N, e.Cover = aggFile, aggRG, 0, 0, []byte{valNull}
		case 3:
			e.Row = 1 << 33 // too large for a ref
		}
		e.Bucket = BucketFNV1aMix.bucket(e.Key)
		b.add(e.Bucket, e.Key, e.File, e.RG, e.Row, e.N, e.Cover)
		want = append(want, e)
	}
	b.sort()
	slices.SortFunc(want, func(a, b entry) int { return compareEntries(&a, &b) })
	f, err := os.Create(filepath.Join(t.TempDir(), "run"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := writeRun(f, b); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, size := range []int{16, 25, 26, 27, 40, 64 << 10} {
		fr, err := openRun(f.Name(), size)
		if err != nil {
			t.Fatal(err)
		}
		refs := 0
		for i := 0; ; i++ {
			e, err := fr.next()
			if err == io.EOF {
				if i != len(want) {
					t.Fatalf("buffer %d: %d entries, want %d", size, i, len(want))
				}
				break
			}
			if err != nil {
				t.Fatalf("buffer %d, entry %d: %v", size, i, err)
			}
			w := want[i]
			if compareEntries(e, &w) != 0 || e.N != w.N || !bytes.Equal(e.Cover, w.Cover) {
				t.Fatalf("buffer %d, entry %d: %+v, want %+v", size, i, *e, w)
			}
			words, whole := fr.headWords()
			if whole != refOnly(w.Key, w.Row, w.N, w.Cover) {
				t.Fatalf("buffer %d, entry %d: read as a ref record = %v", size, i, whole)
			}
			if whole {
				refs++
				if *words != refWords(w.Bucket, w.Key, w.File, w.RG, w.Row) {
					t.Fatalf("buffer %d, entry %d: words %x, want the entry's", size, i, *words)
				}
			}
		}
		fr.close()
		if refs < len(want)/2 {
			t.Fatalf("buffer %d: only %d ref records", size, refs)
		}
	}
}
