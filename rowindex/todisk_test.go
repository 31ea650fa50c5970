package rowindex

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestToDiskPackedOrder: a sorted row index's row group goes to disk in
// data-file order (compareDisk: file, rg, row, then lookup order), whether
// toDisk packs each entry's order into one uint64 (the fields vary in few
// bits) or sorts with compareDisk (they do not fit). Cases cover negative
// file ids and rows (sign bits), aggregate records sharing file, rg and row
// (ties settled by key), a single file, and fields too wide to pack.
func TestToDiskPackedOrder(t *testing.T) {
	type tc struct {
		name   string
		n      int
		file   func(rng *rand.Rand) int32
		rg     func(rng *rand.Rand) int32
		row    func(rng *rand.Rand) int64
		packed bool
	}
	small := func(k int) func(rng *rand.Rand) int32 {
		return func(rng *rand.Rand) int32 { return int32(rng.IntN(k)) }
	}
	rows := func(k int64) func(rng *rand.Rand) int64 { return func(rng *rand.Rand) int64 { return rng.Int64N(k) } }
	cases := []tc{
		{name: "build row group", n: 3000, file: small(100), rg: small(22), row: rows(12_000), packed: true},
		{name: "one file", n: 3000, file: func(*rand.Rand) int32 { return 7 }, rg: small(3), row: rows(100), packed: true},
		{name: "ties", n: 500, file: small(2), rg: small(2), row: rows(3), packed: true},
		{name: "aggregate file", n: 500, file: func(rng *rand.Rand) int32 { return int32(rng.IntN(3)) - 1 }, rg: small(2), row: rows(5), packed: true},
		{name: "negative rows", n: 500, file: small(3), rg: small(2), row: func(rng *rand.Rand) int64 { return rng.Int64N(100) - 50 }, packed: false},
		{name: "wide rows", n: 500, file: small(3), rg: small(2), row: func(rng *rand.Rand) int64 { return rng.Int64N(1 << 56) }, packed: false},
		{name: "wide rg", n: 500, file: small(1 << 20), rg: small(1 << 20), row: rows(1 << 20), packed: false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(5, 6))
			es := make([]entry, c.n)
			for i := range es {
				es[i] = entry{Key: appendIntKey(nil, rng.Int64N(50)), File: c.file(rng), RG: c.rg(rng), Row: c.row(rng), N: 1 + rng.Int64N(3)}
			}
			slices.SortFunc(es, func(a, b entry) int { return compareEntries(&a, &b) }) // lookup order, as a row group arrives
			if _, ok := packDiskOrder(es, new([]uint64)); ok != c.packed {
				t.Fatalf("packed = %v, want %v", ok, c.packed)
			}
			want := slices.Clone(es)
			slices.SortStableFunc(want, func(a, b entry) int { return compareDisk(&a, &b) })
			got := toDisk(nil, es, KindSorted, &diskScratch{})
			var prev *entry
			for i := range want {
				e := &want[i]
				w := diskEntry{Key: e.Key, File: e.File, RG: e.RG, Gap: e.Row - impliedRow(prev, e), N: e.N}
				prev = e
				g := got[i]
				if string(g.Key) != string(w.Key) || g.File != w.File || g.RG != w.RG || g.Gap != w.Gap || g.N != w.N {
					t.Fatalf("entry %d: %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

// TestReadSpooledGroup: the fragment spool's bulk reader gives what
// reading each record alone gives, with records cut by the read buffer's
// end (a 16-byte buffer), records larger than the buffer, empty keys and
// covers, and negative gaps.
func TestReadSpooledGroup(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var want []diskEntry
	var spool []byte
	for range 2000 {
		d := diskEntry{File: int32(rng.IntN(300)), RG: int32(rng.IntN(40)), Gap: rng.Int64N(1<<40) - 1<<20, N: rng.Int64N(1 << 30)}
		d.Key = make([]byte, rng.IntN(3)*rng.IntN(40))
		for i := range d.Key {
			d.Key[i] = byte(rng.IntN(256))
		}
		if rng.IntN(3) == 0 {
			d.Cover = make([]byte, rng.IntN(300))
			for i := range d.Cover {
				d.Cover[i] = byte(rng.IntN(256))
			}
		}
		want = append(want, d)
		spool = binary.AppendUvarint(spool, uint64(len(d.Key)))
		spool = append(spool, d.Key...)
		spool = binary.AppendVarint(spool, int64(d.File))
		spool = binary.AppendVarint(spool, int64(d.RG))
		spool = binary.AppendVarint(spool, d.Gap)
		spool = binary.AppendVarint(spool, d.N)
		spool = binary.AppendUvarint(spool, uint64(len(d.Cover)))
		spool = append(spool, d.Cover...)
	}
	for _, size := range []int{16, 200, 1 << 16} {
		r := bufio.NewReaderSize(bytes.NewReader(spool), size)
		for at := 0; at < len(want); {
			n := min(1+rng.IntN(300), len(want)-at)
			ds := make([]diskEntry, n)
			spans := make([]spoolSpan, n)
			var buf []byte
			if err := readSpooledGroup(r, ds, spans, &buf); err != nil {
				t.Fatalf("buffer %d, entry %d: %v", size, at, err)
			}
			for i := range ds {
				g, w := ds[i], want[at+i]
				g.Key, g.Cover = buf[spans[i].key[0]:spans[i].key[1]], buf[spans[i].cover[0]:spans[i].cover[1]]
				if !bytes.Equal(g.Key, w.Key) || !bytes.Equal(g.Cover, w.Cover) || g.File != w.File || g.RG != w.RG || g.Gap != w.Gap || g.N != w.N {
					t.Fatalf("buffer %d, entry %d: %+v, want %+v", size, at+i, g, w)
				}
			}
			at += n
		}
		if _, err := r.ReadByte(); err != io.EOF {
			t.Fatalf("buffer %d: spool not read to its end (%v)", size, err)
		}
	}
}
