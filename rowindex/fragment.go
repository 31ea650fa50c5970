package rowindex

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/google/uuid"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/ariadne-go/ariadne/store"
)

// entry is one index entry: a run of n rows holding key, starting at row
// (inside row group rg) of data file file; or, with file == aggFile, the
// key's aggregate partials (in cover). Bucket is the key's hash bucket (0 in
// a sorted row index). Lookups work on entries in fragment order
// (compareEntries); how a fragment stores them on disk is diskEntry's
// business.
type entry struct {
	Bucket int32
	Key    []byte
	File   int32
	RG     int32
	Row    int64
	N      int64
	Cover  []byte
}

// diskEntry is a fragment row (fragment format 2).
//
// A sorted row index stores a row group's entries in data-file order,
// (file, rg, row, key), not in lookup order: a group covers a contiguous key
// range, so in a data file sorted or clustered by the key each run starts
// where the file's previous run in the group ends, and its row number is
// implied (row_gap 0, which ZSTD reduces to almost nothing). A hash row index
// cannot profit from that, because a group holds a few hash buckets, a thin
// sample of every file's rows, so it keeps lookup order, where repeated keys
// sit side by side (−60% on the key column against data-file order). The
// decoder restores lookup order and recomputes the bucket (not stored: it is
// the key's hash), so nothing outside this file sees either.
//
// row_gap is the row number minus the one implied by the previous stored
// entry (impliedRow). Column encodings (fragmentSchema) were chosen by
// measuring the 1 GB benchmark lakes; see docs/rowindex.md, "Index size".
type diskEntry struct {
	Key   []byte
	File  int32
	RG    int32
	Gap   int64
	N     int64
	Cover []byte
}

// fragmentSchema is the schema of a format-2 fragment:
//
//   - key: dictionary-encoded in a sorted row index, where each key recurs
//     once per file holding it and a per-group dictionary turns it into a
//     ≈10-bit index (−11% on the bucketed lake); PLAIN in a hash row index,
//     where the repeats are adjacent and ZSTD codes them in a byte (a
//     dictionary costs +85% there);
//   - file, rg: DELTA_BINARY_PACKED (runs of equal values in either order);
//   - row_gap: PLAIN when most gaps are 0 (clustered data under a sorted
//     row index: ZSTD then stores the zeros in almost nothing, where
//     DELTA_BINARY_PACKED's miniblocks pay the width of the occasional large
//     gap for all 32 values: 0.23 against 0.52 bytes per entry), otherwise
//     DELTA_BINARY_PACKED (scattered rows: −16% of the whole index in
//     arrival order);
//   - n: PLAIN (small irregular run lengths: ZSTD ≈0.4 bytes, delta ≈0.9);
//   - cover: PLAIN.
//
// The reader does not depend on these choices: Parquet pages name their
// encoding.
func fragmentSchema(kind Kind, plainGaps bool) *parquet.Schema {
	delta := func(n parquet.Node) parquet.Node { return parquet.Encoded(n, &parquet.DeltaBinaryPacked) }
	plain := func(n parquet.Node) parquet.Node { return parquet.Encoded(n, &parquet.Plain) }
	key := plain(parquet.Leaf(parquet.ByteArrayType))
	if kind == KindSorted {
		key = parquet.Encoded(parquet.Leaf(parquet.ByteArrayType), &parquet.RLEDictionary)
	}
	gap := delta(parquet.Leaf(parquet.Int64Type))
	if plainGaps {
		gap = plain(parquet.Leaf(parquet.Int64Type))
	}
	return parquet.NewSchema("entry", parquet.Group{
		"key":     key,
		"file":    delta(parquet.Leaf(parquet.Int32Type)),
		"rg":      delta(parquet.Leaf(parquet.Int32Type)),
		"row_gap": gap,
		"n":       plain(parquet.Leaf(parquet.Int64Type)),
		"cover":   plain(parquet.Leaf(parquet.ByteArrayType)),
	})
}

// fragmentRow encodes a diskEntry as a row of fragmentSchema; col gives
// each column's index in the schema (parquet.Group orders columns by name).
func fragmentRow(d *diskEntry, col *fragmentCols) parquet.Row {
	row := make(parquet.Row, fragmentColumns)
	row[col.key] = parquet.ByteArrayValue(d.Key).Level(0, 0, col.key)
	row[col.file] = parquet.Int32Value(d.File).Level(0, 0, col.file)
	row[col.rg] = parquet.Int32Value(d.RG).Level(0, 0, col.rg)
	row[col.gap] = parquet.Int64Value(d.Gap).Level(0, 0, col.gap)
	row[col.n] = parquet.Int64Value(d.N).Level(0, 0, col.n)
	row[col.cover] = parquet.ByteArrayValue(d.Cover).Level(0, 0, col.cover)
	return row
}

// fragmentCols is the column index of each field of diskEntry.
type fragmentCols struct{ key, file, rg, gap, n, cover int }

func fragmentColsOf(s *parquet.Schema) (*fragmentCols, error) {
	var c fragmentCols
	for name, at := range map[string]*int{"key": &c.key, "file": &c.file, "rg": &c.rg, "row_gap": &c.gap, "n": &c.n, "cover": &c.cover} {
		leaf, ok := s.Lookup(name)
		if !ok {
			return nil, fmt.Errorf("rowindex: fragment schema has no column %s", name)
		}
		*at = leaf.ColumnIndex
	}
	return &c, nil
}

// compareDisk is the data-file order of a sorted row index's fragment row
// group: (file, rg, row), then lookup order to make it total (aggregate
// records share file, rg and row).
func compareDisk(a, b *entry) int {
	return cmp.Or(
		cmp.Compare(a.File, b.File),
		cmp.Compare(a.RG, b.RG),
		cmp.Compare(a.Row, b.Row),
		cmp.Compare(a.Bucket, b.Bucket),
		bytes.Compare(a.Key, b.Key),
	)
}

// storedOrder is the order in which a row index of kind stores a fragment
// row group's entries.
func storedOrder(kind Kind) func(a, b *entry) int {
	if kind == KindSorted {
		return compareDisk
	}
	return compareEntries
}

// toDisk converts a row group's entries (in lookup order) to fragment rows
// in stored order.
func toDisk(es []entry, kind Kind) []diskEntry {
	sorted := make([]*entry, len(es))
	for i := range es {
		sorted[i] = &es[i]
	}
	slices.SortFunc(sorted, storedOrder(kind))
	out := make([]diskEntry, len(sorted))
	var prev *entry
	for i, e := range sorted {
		out[i] = diskEntry{Key: e.Key, File: e.File, RG: e.RG, Gap: e.Row - impliedRow(prev, e), N: e.N, Cover: e.Cover}
		prev = e
	}
	return out
}

// impliedRow is the row number an entry has when it is not stored: the end
// of the previous run of the same file and row group, or 0 for the first.
func impliedRow(prev, e *entry) int64 {
	if prev == nil || prev.File != e.File || prev.RG != e.RG {
		return 0
	}
	return prev.Row + prev.N
}

// aggFile marks an aggregate record.
const aggFile = -1

// fragmentColumns is the number of leaf columns of a fragment (the fields of
// diskEntry), and fragmentColumnsV1 of a format-1 fragment (FormatVersion 1,
// read only): bucket, key, file, rg, row, n, cover, every entry in lookup
// order with its row number, integers DELTA_BINARY_PACKED.
const (
	fragmentColumns   = 6
	fragmentColumnsV1 = 7
)

// entrySize estimates an entry's uncompressed size in a fragment.
func (e *entry) size() int64 { return int64(len(e.Key)+len(e.Cover)) + 32 }

// compareEntries is the fragment order: (bucket, key, file, rg, row).
func compareEntries(a, b *entry) int {
	return cmp.Or(
		cmp.Compare(a.Bucket, b.Bucket),
		bytes.Compare(a.Key, b.Key),
		cmp.Compare(a.File, b.File),
		cmp.Compare(a.RG, b.RG),
		cmp.Compare(a.Row, b.Row),
	)
}

// fragmentRowGroupBytes is the uncompressed size at which a fragment row group
// is cut (at the next bucket or key boundary): ≈3,200 entries of ~41 bytes,
// ≈13–20 KiB after ZSTD. A lookup decodes one such group per fragment from
// the cache (≈0.2–0.5 ms), and a cold one reads it in one small request.
// Every group costs ≈1 KiB whatever its size (6 column chunks × (page
// header + chunk metadata + offset index); measured on format 1): at 64 KiB that was 10–15% of the
// index of the 1 GB lake (3,869 groups for 6.4M entries), at 128 KiB it is
// ≈5% (1,969 groups), at 256 KiB ≈2.5% but each lookup decodes twice the
// entries. The key directory costs ≈100 bytes of manifest per group.
const fragmentRowGroupBytes = 128 << 10

// fragmentSplitBytes is the size at which a row group is cut even inside
// one key (sorted) or bucket (hash): a hot key of an arrival-order lake has
// millions of entries, and a group that holds them all must be decoded whole
// before its first row is known, even for a lookup with a limit of 100.
// The key directory's ranges of consecutive groups then share that key or
// bucket; a lookup reads every group whose range holds its key, in order,
// which is lookup order (readers before this rule did so too).
const fragmentSplitBytes = 4 * fragmentRowGroupBytes

// fragmentFileBytes is the uncompressed size at which a fragment file is cut
// (at a bucket boundary), so that a large build is spread over files of
// ≈ 20 MiB that can be fetched, cached and compacted independently, and a
// bucket range can be served by one machine.
const fragmentFileBytes = 64 << 20

// writeFragments writes sorted entries as one or more fragment files under
// the row index folder and returns their manifest entries.
func writeFragments(ctx context.Context, st store.Store, name string, kind Kind, es []entry) ([]FragmentEntry, int64, error) {
	var out []FragmentEntry
	var written int64
	for len(es) > 0 {
		// Cut the file at a boundary once it passes fragmentFileBytes.
		var sz int64
		cut := len(es)
		for i := range es {
			sz += es[i].size()
			if sz >= fragmentFileBytes && i+1 < len(es) && boundary(kind, &es[i], &es[i+1]) {
				cut = i + 1
				break
			}
		}
		fe, err := writeFragment(ctx, st, name, kind, es[:cut])
		if err != nil {
			return nil, written, err
		}
		written += fe.Size
		out = append(out, fe)
		es = es[cut:]
	}
	return out, written, nil
}

// boundary reports whether a row group may end between a and b: between
// buckets (hash) or between keys (sorted).
func boundary(kind Kind, a, b *entry) bool {
	if kind == KindSorted {
		return !bytes.Equal(a.Key, b.Key)
	}
	return a.Bucket != b.Bucket
}

func writeFragment(ctx context.Context, st store.Store, name string, kind Kind, es []entry) (FragmentEntry, error) {
	// Cut the row groups in lookup order, then put each in stored order.
	var groups []Group
	var stored [][]diskEntry
	zeroGaps, start := 0, 0
	var sz int64
	cut := func(end int) {
		if end == start {
			return
		}
		g := Group{BucketLo: es[start].Bucket, BucketHi: es[end-1].Bucket, Rows: int64(end - start)}
		if kind == KindSorted {
			g.KeyLo, g.KeyHi = es[start].Key, es[end-1].Key
		}
		groups = append(groups, g)
		ds := toDisk(es[start:end], kind)
		for i := range ds {
			if ds[i].Gap == 0 {
				zeroGaps++
			}
		}
		stored = append(stored, ds)
		start, sz = end, 0
	}
	for i := range es {
		sz += es[i].size()
		if i+1 < len(es) && (sz >= fragmentRowGroupBytes && boundary(kind, &es[i], &es[i+1]) || sz >= fragmentSplitBytes) {
			cut(i + 1)
		}
	}
	cut(len(es))

	schema := fragmentSchema(kind, 2*zeroGaps >= len(es))
	cols, err := fragmentColsOf(schema)
	if err != nil {
		return FragmentEntry{}, err
	}
	var buf bytes.Buffer
	w := parquet.NewWriter(&buf, schema,
		parquet.Compression(&parquet.Zstd),
		parquet.PageBufferSize(64<<10),
		parquet.KeyValueMetadata("ariadne.rowindex", name),
		// No page statistics and no column-index bounds: lookups find
		// groups through the manifest's key directory and decode whole
		// groups, so min/max values per page (two keys each) are dead
		// weight (≈3% of a fragment). The offset index, which lookups use,
		// is still written.
		parquet.DataPageStatistics(false),
		parquet.SkipPageBounds("key"), parquet.SkipPageBounds("file"), parquet.SkipPageBounds("rg"),
		parquet.SkipPageBounds("row_gap"), parquet.SkipPageBounds("n"), parquet.SkipPageBounds("cover"),
	)
	for _, ds := range stored {
		rows := make([]parquet.Row, len(ds))
		for i := range ds {
			rows[i] = fragmentRow(&ds[i], cols)
		}
		if _, err := w.WriteRows(rows); err != nil {
			return FragmentEntry{}, err
		}
		if err := w.Flush(); err != nil {
			return FragmentEntry{}, err
		}
	}
	if err := w.Close(); err != nil {
		return FragmentEntry{}, err
	}
	data := buf.Bytes()
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return FragmentEntry{}, err
	}
	rgs := f.Metadata().RowGroups
	if len(rgs) != len(groups) {
		return FragmentEntry{}, corrupt("fragment writer produced %d row groups for %d groups", len(rgs), len(groups))
	}
	for i := range rgs {
		lo, hi := int64(-1), int64(0)
		for _, c := range rgs[i].Columns {
			s := c.MetaData.DataPageOffset
			if d := c.MetaData.DictionaryPageOffset; d > 0 && d < s {
				s = d
			}
			if lo < 0 || s < lo {
				lo = s
			}
			hi = max(hi, s+c.MetaData.TotalCompressedSize)
		}
		groups[i].Offset, groups[i].Length = lo, hi-lo
	}
	rel := "fragments/" + uuid.NewString() + ".parquet"
	if err := store.WriteAll(ctx, st, folderOf(name)+rel, data, &store.WriteOptions{IfNotExist: true}); err != nil {
		return FragmentEntry{}, err
	}
	return FragmentEntry{Path: rel, Size: int64(len(data)), Entries: int64(len(es)), Groups: groups, TailBytes: tailBytes(data, rgs)}, nil
}

// decodeGroup decodes every entry of row group rg of a fragment whose bytes
// are in r, in lookup order (compareEntries), for a row index of kind.
func decodeGroup(fm *fileMeta, rg int, r *pageReader, kind Kind) ([]entry, error) {
	g := fm.f.RowGroups()[rg]
	n := int(g.NumRows())
	ccs := g.ColumnChunks()
	names := []string{"key", "file", "rg", "row_gap", "n", "cover"}
	v1 := len(ccs) == fragmentColumnsV1
	if v1 {
		names = []string{"bucket", "key", "file", "rg", "row", "n", "cover"}
	} else if len(ccs) != fragmentColumns {
		return nil, corrupt("fragment has %d columns, want %d", len(ccs), fragmentColumns)
	}
	cols := make(map[string]*fragmentColumn, len(names))
	for _, name := range names {
		c := fm.f.Root().Column(name)
		if c == nil {
			return nil, corrupt("fragment has no column %q", name)
		}
		col, err := readFragmentColumn(ccs[c.Index()], r, n)
		if err != nil {
			return nil, corrupt("fragment column %s: %v", name, err)
		}
		cols[name] = col
	}
	keys, covers := cols["key"].bytes, cols["cover"].bytes
	files, rgs, ns := cols["file"].ints, cols["rg"].ints, cols["n"].ints
	if keys == nil || covers == nil || files == nil || rgs == nil || ns == nil {
		return nil, corrupt("fragment columns have unexpected types")
	}
	var rows, buckets []int64
	if v1 {
		rows, buckets = cols["row"].ints, cols["bucket"].ints
	} else {
		rows = cols["row_gap"].ints
	}
	if rows == nil || v1 && buckets == nil {
		return nil, corrupt("fragment columns have unexpected types")
	}
	es := make([]entry, n)
	order := storedOrder(kind)
	if v1 {
		order = compareEntries
	}
	var prev *entry
	for i := range es {
		e := &es[i]
		e.Key, e.Cover = keys[i], covers[i]
		e.File, e.RG, e.N = int32(files[i]), int32(rgs[i]), ns[i]
		switch {
		case v1:
			e.Bucket, e.Row = int32(buckets[i]), rows[i]
		case kind == KindSorted:
			e.Row = impliedRow(prev, e) + rows[i]
		default:
			e.Bucket = bucketOf(e.Key)
			e.Row = impliedRow(prev, e) + rows[i]
		}
		if prev != nil && order(prev, e) > 0 {
			return nil, corrupt("fragment row group %d is not in the order of a %s row index", rg, kind)
		}
		prev = e
	}
	if !v1 && kind == KindSorted { // data-file order back to lookup order
		slices.SortFunc(es, func(a, b entry) int { return compareEntries(&a, &b) })
	}
	return es, nil
}

// fragmentColumn is one decoded column of a fragment row group: integers
// (INT32 or INT64) or byte arrays.
type fragmentColumn struct {
	ints  []int64
	bytes [][]byte
}

// readFragmentColumn decodes all n values of a required fragment column
// straight from its pages' typed buffers (Page.Data), which is ≈4× faster
// than going through parquet.Value: a warm lookup that misses the decoded
// cache decodes a whole ≈3,200-entry group. Byte arrays are copied into one
// backing array, since parquet-go may reuse page buffers.
func readFragmentColumn(cc parquet.ColumnChunk, r io.ReaderAt, n int) (*fragmentColumn, error) {
	fcc, ok := cc.(*parquet.FileColumnChunk)
	if !ok {
		return nil, fmt.Errorf("column chunk %T is not a file column chunk", cc)
	}
	pages := fcc.PagesFrom(r)
	defer pages.Close()
	var out fragmentColumn
	var arena []byte
	var spans [][2]int // byte ranges in arena, turned into slices at the end
	got := 0
	for {
		page, err := pages.ReadPage()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if page.NumNulls() > 0 {
			parquet.Release(page)
			return nil, errors.New("null in a required column")
		}
		data := page.Data()
		var dict []byte
		var dictOffsets []uint32
		if d := page.Dictionary(); d != nil {
			dv := d.Page().Data()
			dict, dictOffsets = dv.ByteArray()
		}
		switch page.Type().Kind() {
		case parquet.Int32:
			for _, v := range data.Int32() {
				out.ints = append(out.ints, int64(v))
			}
		case parquet.Int64:
			out.ints = append(out.ints, data.Int64()...)
		case parquet.ByteArray:
			if dict != nil {
				for _, ix := range data.Int32() {
					if int(ix)+1 >= len(dictOffsets) {
						parquet.Release(page)
						return nil, fmt.Errorf("dictionary index %d out of range", ix)
					}
					at := len(arena)
					arena = append(arena, dict[dictOffsets[ix]:dictOffsets[ix+1]]...)
					spans = append(spans, [2]int{at, len(arena)})
				}
			} else {
				b, offs := data.ByteArray()
				for i := 0; i+1 < len(offs); i++ {
					at := len(arena)
					arena = append(arena, b[offs[i]:offs[i+1]]...)
					spans = append(spans, [2]int{at, len(arena)})
				}
			}
		default:
			parquet.Release(page)
			return nil, fmt.Errorf("unexpected type %v", page.Type())
		}
		got += int(page.NumValues())
		parquet.Release(page)
	}
	if spans != nil {
		out.bytes = make([][]byte, len(spans))
		for i, sp := range spans {
			out.bytes[i] = arena[sp[0]:sp[1]:sp[1]]
		}
	}
	if got != n || len(out.ints)+len(out.bytes) != n {
		return nil, fmt.Errorf("%d values, want %d", got, n)
	}
	return &out, nil
}

// tailBytes returns the length of a Parquet file's tail: from its first
// offset index (or its footer) to its end (see FileEntry.TailBytes).
func tailBytes(data []byte, rgs []format.RowGroup) int64 {
	size := int64(len(data))
	start := size - 8 - int64(binary.LittleEndian.Uint32(data[len(data)-8:]))
	for _, rg := range rgs {
		for _, c := range rg.Columns {
			if c.OffsetIndexOffset > 0 {
				start = min(start, c.OffsetIndexOffset)
			}
		}
	}
	return size - start
}
