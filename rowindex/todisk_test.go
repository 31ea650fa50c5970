package rowindex

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// TestToDiskPackedOrder: a sorted row index's row group goes to disk in
// data-file order (compareDisk: file, rg, row, then lookup order), whether
// inDiskOrder packs each entry's order into one uint64 (the fields vary in
// few bits) or sorts by (file, rg, row, index) (they do not fit): the
// columns it gathers are toDiskRef's entries, and it counts their zero gaps. Cases cover bytes of
// the packed order that every entry shares (skipped by the radix sort),
// negative file ids and rows (sign bits), aggregate records sharing file, rg
// and row (ties settled by key), a single file, and fields too wide to pack.
func TestToDiskPackedOrder(t *testing.T) {
	type tc struct {
		name   string
		n      int
		file   func(rng *rand.Rand) int32
		rg     func(rng *rand.Rand) int32
		row    func(rng *rand.Rand) int64
		packed bool
		// key, if set, is entry i's key (else one of 50 at random).
		key func(rng *rand.Rand, i int) int64
		// inOrder: the group comes in data-file order (copyInOrder).
		inOrder bool
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
		// Rows differing only in a high bit: the radix sort's low bytes are
		// all the same and skipped, the higher ones still sorted.
		{name: "sparse rows", n: 500, file: small(3), rg: small(2), row: func(rng *rand.Rand) int64 { return rng.Int64N(2) << 15 }, packed: true},
		{name: "negative rows", n: 500, file: small(3), rg: small(2), row: func(rng *rand.Rand) int64 { return rng.Int64N(100) - 50 }, packed: false},
		{name: "wide rows", n: 500, file: small(3), rg: small(2), row: func(rng *rand.Rand) int64 { return rng.Int64N(1 << 56) }, packed: false},
		{name: "wide rg", n: 500, file: small(1 << 20), rg: small(1 << 20), row: rows(1 << 20), packed: false},
		// A group of one key (a hot key's, on an arrival-order lake) is in
		// data-file order as it comes, ties (aggregate records) too.
		{name: "one key", n: 3000, file: small(100), rg: small(22), row: rows(12_000), packed: true,
			key: func(*rand.Rand, int) int64 { return 7 }, inOrder: true},
		{name: "one key ties", n: 500, file: small(2), rg: small(2), row: rows(3), packed: true,
			key: func(*rand.Rand, int) int64 { return -3 }, inOrder: true},
		{name: "one key wide", n: 500, file: small(1 << 20), rg: small(1 << 20), row: rows(1 << 20), packed: false,
			key: func(*rand.Rand, int) int64 { return 1 << 40 }, inOrder: true},
		// Keys in the order of the rows (a lake clustered by the key): the
		// entries of the one file and row group are in order too.
		{name: "clustered", n: 3000, file: func(*rand.Rand) int32 { return 4 }, rg: func(*rand.Rand) int32 { return 1 }, row: rows(12_000), packed: true,
			key: func(_ *rand.Rand, i int) int64 { return int64(i) }, inOrder: true},
		// Two keys whose runs interleave in the files: not in order.
		{name: "two keys", n: 3000, file: small(100), rg: small(22), row: rows(12_000), packed: true,
			key: func(_ *rand.Rand, i int) int64 { return int64(i % 2) }},
	}
	// Each case with int keys and no covers (a key-id build: inDiskOrder
	// copies keys at fixed places), with covers, and with keys of other
	// widths among them.
	for _, c := range cases {
		for _, variant := range []string{"int keys", "covers", "two widths"} {
			t.Run(c.name+"/"+variant, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(5, 6))
				es := make([]entry, c.n)
				for i := range es {
					es[i] = entry{Key: appendIntKey(nil, rng.Int64N(50)), File: c.file(rng), RG: c.rg(rng), Row: c.row(rng), N: 1 + rng.Int64N(3)}
					if c.key != nil {
						es[i].Key = appendIntKey(nil, c.key(rng, i))
					}
					if c.name == "clustered" {
						es[i].Row = int64(i) * 3
					}
					if variant == "covers" && i%4 == 0 {
						es[i].Cover = appendValue(nil, rng.Int64())
					}
					// Two string keys of 8 and 10 bytes: the keys' bytes
					// are still 9 a key on average.
					if variant == "two widths" && i == c.n/3 {
						es[i].Key, _ = EncodeKey("1234567")
					}
					if variant == "two widths" && i == c.n/2 {
						es[i].Key, _ = EncodeKey("123456789")
					}
				}
				slices.SortFunc(es, func(a, b entry) int { return compareEntries(&a, &b) }) // lookup order, as a row group arrives
				open := openGroup(es)
				if w := open.keyWidth(); (w == 9) != (variant == "int keys") {
					t.Fatalf("keyWidth %d for %s", w, variant)
				}
				if _, ok := packDiskOrder(open.files, open.rgs, open.gaps, new([]uint64)); ok != c.packed {
					t.Fatalf("packed = %v, want %v", ok, c.packed)
				}
				// The two string keys of "two widths" break a one-key
				// group's order.
				if got, want := open.inDataFileOrder(), c.inOrder && variant != "two widths"; got != want {
					t.Fatalf("inDataFileOrder = %v, want %v", got, want)
				}
				want := toDiskRef(es, KindSorted)
				// The stage is reused with longer leftovers, as cutGroup does.
				var got spoolGroup
				got.fill(randomDiskGroups(rng, []int{c.n + 10})[0])
				zeros := open.inDiskOrder(&got, &diskScratch{})
				var wantZeros int64
				for i, w := range want {
					if w.Gap == 0 {
						wantZeros++
					}
					if string(got.key(i)) != string(w.Key) || string(got.cover(i)) != string(w.Cover) || got.files[i] != w.File || got.rgs[i] != w.RG || got.gaps[i] != w.Gap || got.ns[i] != w.N {
						t.Fatalf("entry %d: key %x cover %x file %d rg %d gap %d n %d, want %+v", i, got.key(i), got.cover(i), got.files[i], got.rgs[i], got.gaps[i], got.ns[i], w)
					}
				}
				if len(got.files) != len(want) || len(got.keyEnds) != len(want) || len(got.ns) != len(want) {
					t.Fatalf("%d entries gathered, want %d", len(got.files), len(want))
				}
				if zeros != wantZeros {
					t.Fatalf("%d zero gaps counted, want %d", zeros, wantZeros)
				}
				if !open.inDataFileOrder() {
					return
				}
				// In order already: the fragment writer turns the rows
				// into gaps in place instead (rowsToGaps), to the same
				// columns.
				if zeros := open.rowsToGaps(); zeros != wantZeros {
					t.Fatalf("rowsToGaps: %d zero gaps counted, want %d", zeros, wantZeros)
				}
				for i, w := range want {
					if string(open.key(i)) != string(w.Key) || string(open.cover(i)) != string(w.Cover) || open.files[i] != w.File || open.rgs[i] != w.RG || open.gaps[i] != w.Gap || open.ns[i] != w.N {
						t.Fatalf("rowsToGaps: entry %d: key %x cover %x file %d rg %d gap %d n %d, want %+v", i, open.key(i), open.cover(i), open.files[i], open.rgs[i], open.gaps[i], open.ns[i], w)
					}
				}
			})
		}
	}
}

// toDiskRef is the reference of a row group's stored form: the entries es
// (in lookup order) as fragment rows in the order a row index of kind
// stores them (storedOrder, stably), with their row gaps.
func toDiskRef(es []entry, kind Kind) []diskEntry {
	s := slices.Clone(es)
	order := storedOrder(kind)
	slices.SortStableFunc(s, func(a, b entry) int { return order(&a, &b) })
	var ds []diskEntry
	var prev *entry
	for i := range s {
		e := &s[i]
		ds = append(ds, diskEntry{Key: e.Key, File: e.File, RG: e.RG, Gap: e.Row - impliedRow(prev, e), N: e.N, Cover: e.Cover})
		prev = e
	}
	return ds
}

// openGroup is the open group of a sorted row index's fragment writer
// holding the entries es: their columns in lookup order, each row number in
// the gaps column.
func openGroup(es []entry) *spoolGroup {
	g := new(spoolGroup)
	for i := range es {
		e := &es[i]
		g.keys, g.covers = append(g.keys, e.Key...), append(g.covers, e.Cover...)
		g.keyEnds, g.coverEnds = append(g.keyEnds, int32(len(g.keys))), append(g.coverEnds, int32(len(g.covers)))
		g.files, g.rgs = append(g.files, e.File), append(g.rgs, e.RG)
		g.gaps, g.ns = append(g.gaps, e.Row), append(g.ns, e.N)
	}
	return g
}

// randomDiskGroups returns groups of fragment rows of the given sizes with
// keys of every class (ints, floats, bools, strings of 0 to 300 bytes, one
// of 100 KiB), covers of hoisted values (nulls, ints, strings; some empty,
// some larger than a page) and gaps and run lengths from 0 to beyond 32
// bits, negative gaps included.
func randomDiskGroups(rng *rand.Rand, sizes []int) [][]diskEntry {
	key := func() []byte {
		switch rng.IntN(5) {
		case 0:
			k, _ := EncodeKey(rng.Int64() >> rng.IntN(64))
			return k
		case 1:
			k, _ := EncodeKey(math.Float64frombits(rng.Uint64()))
			return k
		case 2:
			k, _ := EncodeKey(rng.IntN(2) == 0)
			return k
		case 3:
			if rng.IntN(500) == 0 {
				return append([]byte{tagBytes}, bytes.Repeat([]byte{'k'}, 100<<10)...)
			}
			b := make([]byte, 1+rng.IntN(300)*rng.IntN(2))
			b[0] = tagBytes
			for i := 1; i < len(b); i++ {
				b[i] = byte(rng.IntN(256))
			}
			return b
		}
		return []byte{} // an empty byte array (never a key, but a value)
	}
	cover := func() []byte {
		var c []byte
		for range rng.IntN(4) {
			switch rng.IntN(4) {
			case 0:
				c = appendValue(c, nil)
			case 1:
				c = appendValue(c, rng.Int64())
			case 2:
				c = appendValue(c, fmt.Sprint(rng.Int64()))
			default:
				if rng.IntN(200) == 0 {
					c = appendValue(c, string(bytes.Repeat([]byte{'c'}, 70<<10)))
				}
			}
		}
		return c
	}
	var out [][]diskEntry
	for _, n := range sizes {
		g := make([]diskEntry, n)
		for i := range g {
			g[i] = diskEntry{Key: key(), File: int32(rng.IntN(300)) - 2, RG: int32(rng.IntN(40)),
				Gap: rng.Int64N(1<<40) - 1<<20, N: rng.Int64N(1 << 34), Cover: cover()}
			if rng.IntN(3) == 0 {
				g[i].Gap = 0
			}
		}
		out = append(out, g)
	}
	return out
}

// TestSpoolGroupRoundTrip: groups appended to a spool read back as they
// were written, in turn, through a reader that returns a few bytes per
// Read, and a damaged spool (cut short, bytes left over, a group read as
// longer than written, an absurd length) is an error, not a panic or
// made-up entries.
func TestSpoolGroupRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	groups := randomDiskGroups(rng, []int{1, 0, 64, 65, 300, 2000, 7})
	// Groups of one key (spoolOneKey: the key once), of one key with a
	// cover, and of one key and one more.
	hot := make([]diskEntry, 3000)
	for i := range hot {
		hot[i] = diskEntry{Key: []byte("hot-key"), File: int32(i / 700), RG: int32(i % 5), Gap: int64(i % 3), N: 1}
	}
	withCover := slices.Clone(hot[:100])
	withCover[50].Cover = []byte{7}
	other := slices.Clone(hot[:100])
	other[99].Key = []byte("hot-kez")
	groups = append(groups, hot, withCover, other, hot[:1])
	var spool []byte
	for _, g := range groups {
		spool = spoolForm(spool, g)
	}
	r := io.Reader(&shortReader{r: bytes.NewReader(spool), max: 13})
	var sg spoolGroup
	for gi, want := range groups {
		if err := sg.read(r, len(want)); err != nil {
			t.Fatalf("group %d: %v", gi, err)
		}
		for i, w := range want {
			if !bytes.Equal(sg.key(i), w.Key) || !bytes.Equal(sg.cover(i), w.Cover) || sg.files[i] != w.File ||
				sg.rgs[i] != w.RG || sg.gaps[i] != w.Gap || sg.ns[i] != w.N {
				t.Fatalf("group %d entry %d: key %x cover %x %d %d %d %d, want %+v", gi, i, sg.key(i), sg.cover(i), sg.files[i], sg.rgs[i], sg.gaps[i], sg.ns[i], w)
			}
		}
	}
	if n, _ := r.Read(make([]byte, 1)); n != 0 {
		t.Fatal("spool not read to its end")
	}
	for gi, want := range map[int]bool{7: true, 8: false, 9: false, 10: true} {
		if got := spoolForm(nil, groups[gi])[8] == spoolOneKey; got != want {
			t.Errorf("group %d: one-key form %v, want %v", gi, got, want)
		}
	}
	hotForm := spoolForm(nil, hot)
	if len(hotForm) > 6*len(hot) {
		t.Errorf("a group of one key takes %d bytes a spool for %d entries", len(hotForm), len(hot))
	}
	if err := sg.read(bytes.NewReader(hotForm), len(hot)+1); err == nil {
		t.Error("a one-key group read with more entries than it holds")
	}
	one := spoolForm(nil, groups[4])
	if err := sg.read(bytes.NewReader(one[:len(one)-1]), len(groups[4])); err == nil {
		t.Error("a spool cut short was read")
	}
	// A body one byte longer than its columns: the entries do not account
	// for every byte.
	long := binary.LittleEndian.AppendUint64(nil, binary.LittleEndian.Uint64(one)+1)
	long = append(append(long, one[8:]...), 0)
	if err := sg.read(bytes.NewReader(long), len(groups[4])); err == nil {
		t.Error("a group with bytes left over was read")
	}
	// Read as a group of one entry more than written.
	if err := sg.read(bytes.NewReader(one), len(groups[4])+1); err == nil {
		t.Error("a group read with more entries than it holds")
	}
	huge := binary.LittleEndian.AppendUint64(nil, 1<<62)
	if err := sg.read(bytes.NewReader(append(huge, one[8:]...)), len(groups[4])); err == nil {
		t.Error("a group of 2^62 bytes was read")
	}
}

// shortReader returns at most max bytes per Read.
type shortReader struct {
	r   io.Reader
	max int
}

func (s *shortReader) Read(p []byte) (int, error) { return s.r.Read(p[:min(len(p), s.max)]) }

// TestEncodeFragmentMatchesWriteRows: the fragment encoder (fragFile's
// page writes, both kinds) writes byte for byte the file that parquet-go's
// Writer.WriteRows writes from whole rows, and that the previous encoder
// (a parquet.Value per cell, prevChunkRows rows per column writer call)
// wrote, for both kinds, both row_gap encodings, and groups of 1 to 5,000
// rows whose keys and covers are of every class, empty, or larger than a
// page. diskEntry's own schema must equal the fragment's: fragTemplate
// takes the footer's schema elements from a GenericWriter[diskEntry].
func TestEncodeFragmentMatchesWriteRows(t *testing.T) {
	for _, kind := range []Kind{KindHash, KindSorted} {
		for _, plainGaps := range []bool{false, true} {
			if s := fragmentSchema(kind, plainGaps); !parquet.EqualNodes(s, parquet.SchemaOf(diskEntry{})) {
				t.Fatalf("diskEntry's schema %v is not the fragment's %v", parquet.SchemaOf(diskEntry{}), s)
			}
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	sizes := []int{1, 63, 64, 65, 129, 3000, 5000, 2}
	for _, kind := range []Kind{KindHash, KindSorted} {
		for _, plainGaps := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/plain=%v", kind, plainGaps), func(t *testing.T) {
				groups := randomDiskGroups(rng, sizes)
				got := bytes.NewBuffer(encodeSpooled(t, groups, kind, plainGaps))
				rows := writeRowsFragment(t, groups, kind, plainGaps)
				if !bytes.Equal(got.Bytes(), rows) {
					t.Fatalf("encoder wrote %d bytes, WriteRows %d: they differ", got.Len(), len(rows))
				}
				prev := previousEncoderFragment(t, groups, kind, plainGaps)
				if !bytes.Equal(got.Bytes(), prev) {
					t.Fatalf("encoder wrote %d bytes, the previous encoder %d: they differ", got.Len(), len(prev))
				}
				// The file reads back as the entries written.
				f, err := parquet.OpenFile(bytes.NewReader(got.Bytes()), int64(got.Len()))
				if err != nil {
					t.Fatal(err)
				}
				if len(f.RowGroups()) != len(groups) {
					t.Fatalf("%d row groups, want %d", len(f.RowGroups()), len(groups))
				}
				for gi, rg := range f.RowGroups() {
					ccs := rg.ColumnChunks()
					cols, _ := fragmentColsOf(f.Schema())
					keys, err := readFragmentColumn(ccs[cols.key], bytes.NewReader(got.Bytes()), len(groups[gi]), nil)
					if err != nil {
						t.Fatal(err)
					}
					for i, d := range groups[gi] {
						if !bytes.Equal(keys.bytes[i], d.Key) {
							t.Fatalf("group %d row %d: key %x, want %x", gi, i, keys.bytes[i], d.Key)
						}
					}
				}
			})
		}
	}
}

// writeRowsFragment is a fragment written through Writer.WriteRows, a
// parquet.Row per entry and a Flush per group.
func writeRowsFragment(t *testing.T, groups [][]diskEntry, kind Kind, plainGaps bool) []byte {
	t.Helper()
	schema := fragmentSchema(kind, plainGaps)
	cols, err := fragmentColsOf(schema)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	pw := parquet.NewWriter(&buf, append([]parquet.WriterOption{schema}, fragmentWriterOptions("ri")...)...)
	for _, g := range groups {
		var rows []parquet.Row
		for _, d := range g {
			row := make(parquet.Row, fragmentColumns)
			row[cols.key] = parquet.ByteArrayValue(d.Key).Level(0, 0, cols.key)
			row[cols.file] = parquet.Int32Value(d.File).Level(0, 0, cols.file)
			row[cols.rg] = parquet.Int32Value(d.RG).Level(0, 0, cols.rg)
			row[cols.gap] = parquet.Int64Value(d.Gap).Level(0, 0, cols.gap)
			row[cols.n] = parquet.Int64Value(d.N).Level(0, 0, cols.n)
			row[cols.cover] = parquet.ByteArrayValue(d.Cover).Level(0, 0, cols.cover)
			rows = append(rows, row)
		}
		if _, err := pw.WriteRows(rows); err != nil {
			t.Fatal(err)
		}
		if err := pw.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// prevChunkRows is the rows per column writer call of the previous
// encoder: parquet-go's maxRowsPerWrite, so its pages were WriteRows'.
const prevChunkRows = 64

// previousEncoderFragment is a fragment written as the encoder before the
// typed spool did: values appended per column from diskEntry rows,
// prevChunkRows rows per WriteRowValues call.
func previousEncoderFragment(t *testing.T, groups [][]diskEntry, kind Kind, plainGaps bool) []byte {
	t.Helper()
	schema := fragmentSchema(kind, plainGaps)
	col, err := fragmentColsOf(schema)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	pw := parquet.NewWriter(&buf, append([]parquet.WriterOption{schema}, fragmentWriterOptions("ri")...)...)
	var vals []parquet.Value
	for _, ds := range groups {
		cws := pw.ColumnWriters()
		for at := 0; at < len(ds); at += prevChunkRows {
			chunk := ds[at:min(at+prevChunkRows, len(ds))]
			for c := range fragmentColumns {
				vals = vals[:0]
				add := func(v parquet.Value) {
					v.SetColumnIndex(c)
					vals = append(vals, v)
				}
				for i := range chunk {
					switch c {
					case col.key:
						add(parquet.ByteArrayValue(chunk[i].Key))
					case col.file:
						add(parquet.Int32Value(chunk[i].File))
					case col.rg:
						add(parquet.Int32Value(chunk[i].RG))
					case col.gap:
						add(parquet.Int64Value(chunk[i].Gap))
					case col.n:
						add(parquet.Int64Value(chunk[i].N))
					case col.cover:
						add(parquet.ByteArrayValue(chunk[i].Cover))
					}
				}
				if _, err := cws[c].WriteRowValues(vals); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := pw.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// spoolForm appends the spool form of the entries ds to dst.
func spoolForm(dst []byte, ds []diskEntry) []byte {
	var g spoolGroup
	g.fill(ds)
	return g.appendTo(dst)
}

// fill sets the group to the entries ds (copied), as read would from
// their spool form, reusing the group's storage.
func (g *spoolGroup) fill(ds []diskEntry) {
	g.truncate()
	for i := range ds {
		d := &ds[i]
		g.keys = append(g.keys, d.Key...)
		g.covers = append(g.covers, d.Cover...)
		g.keyEnds, g.coverEnds = append(g.keyEnds, int32(len(g.keys))), append(g.coverEnds, int32(len(g.covers)))
		g.files, g.rgs = append(g.files, d.File), append(g.rgs, d.RG)
		g.gaps, g.ns = append(g.gaps, d.Gap), append(g.ns, d.N)
	}
}

// TestFragFileKeyIDGroups: fragments of key-id builds' groups (int keys
// of one width, each recurring many times, no covers) are byte for byte
// parquet-go's, for both kinds, with groups long enough to cut several
// pages per column and, under a sorted row index, dictionaries of one to
// thousands of keys.
func TestFragFileKeyIDGroups(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var groups [][]diskEntry
	for _, c := range []struct{ rows, keys int }{{1, 1}, {700, 1}, {40000, 3000}, {20000, 20000}, {5000, 40}} {
		g := make([]diskEntry, c.rows)
		for i := range g {
			k, _ := EncodeKey(int64(rng.IntN(c.keys)) * 7919)
			g[i] = diskEntry{Key: k, File: int32(rng.IntN(100)), RG: int32(rng.IntN(30)), Gap: int64(rng.IntN(3)), N: 1 + int64(rng.IntN(2)), Cover: []byte{}}
		}
		groups = append(groups, g)
	}
	for _, kind := range []Kind{KindHash, KindSorted} {
		for _, plainGaps := range []bool{false, true} {
			got := encodeSpooled(t, groups, kind, plainGaps)
			if want := writeRowsFragment(t, groups, kind, plainGaps); !bytes.Equal(got, want) {
				t.Fatalf("%s plain=%v: encoder wrote %d bytes, WriteRows %d: they differ", kind, plainGaps, len(got), len(want))
			}
		}
	}
}

// encodeSpooled is the fragment encodeFragment writes from the groups'
// spool.
func encodeSpooled(t *testing.T, groups [][]diskEntry, kind Kind, plainGaps bool) []byte {
	t.Helper()
	var spool []byte
	var gs []Group
	for _, g := range groups {
		spool = spoolForm(spool, g)
		gs = append(gs, Group{Rows: int64(len(g))})
	}
	var got bytes.Buffer
	if err := encodeFragment(&got, bytes.NewReader(spool), "ri", kind, gs, plainGaps); err != nil {
		t.Fatal(err)
	}
	return got.Bytes()
}

// BenchmarkInDiskOrder puts a sorted key-id build's row group in stored
// order as the fragment writer's cutGroup does: 3,200 int-key entries of
// 12 keys (inDiskOrder) or of one (a hot key's group, in order as it comes:
// rowsToGaps, on a copy of the row numbers), each key's runs in
// (file, rg, row) order over 1,000 files of 3 row groups of 100k rows, as
// a group of the 10× lake in arrival order arrives.
func BenchmarkInDiskOrder(b *testing.B) {
	for _, keys := range []int{1, 12} {
		b.Run(fmt.Sprintf("keys=%d", keys), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(7, 8))
			const n = 3200
			es := make([]entry, n)
			for i := range es {
				es[i] = entry{Key: appendIntKey(nil, int64(i*keys/n)), File: int32(rng.IntN(1000)), RG: int32(rng.IntN(3)), Row: rng.Int64N(100_000), N: 1}
			}
			slices.SortFunc(es, func(a, b entry) int { return compareEntries(&a, &b) })
			open := openGroup(es)
			var dst spoolGroup
			var sc diskScratch
			rows := slices.Clone(open.gaps)
			b.ResetTimer()
			for range b.N {
				copy(open.gaps, rows)
				if open.inDataFileOrder() {
					open.rowsToGaps()
				} else {
					open.inDiskOrder(&dst, &sc)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/entry")
		})
	}
}

// TestSameKey: sameKey is bytes.Equal, for 9-byte keys differing in their
// tag, first, middle or last byte, and keys of other lengths.
func TestSameKey(t *testing.T) {
	base := appendIntKey(nil, 0x0102030405060708)
	keys := [][]byte{nil, {}, base[:8], base, appendValue(nil, 3.5), []byte("abcdefghij")}
	for _, at := range []int{0, 1, 4, 8} {
		k := slices.Clone(base)
		k[at] ^= 0x40
		keys = append(keys, k)
	}
	for _, a := range keys {
		for _, b := range keys {
			if got, want := sameKey(a, b), bytes.Equal(a, b); got != want {
				t.Fatalf("sameKey(%x, %x) = %v, want %v", a, b, got, want)
			}
			if !sameKey(a, slices.Clone(a)) {
				t.Fatalf("sameKey(%x, its copy) = false", a)
			}
		}
	}
}
