package rowindex

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"slices"

	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/google/uuid"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"
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
//
// Fragments are written column by column from spooled groups (fragFile),
// not as diskEntry rows; the struct names a fragment row's fields for
// tests and for fragTemplate's parquet-go writer. Its fields are in
// fragmentSchema's column order (by name) and tagged with its column
// names, so that the struct's own schema equals it (parquet.EqualNodes
// ignores encodings).
type diskEntry struct {
	Cover []byte `parquet:"cover"`
	File  int32  `parquet:"file"`
	Key   []byte `parquet:"key"`
	N     int64  `parquet:"n"`
	RG    int32  `parquet:"rg"`
	Gap   int64  `parquet:"row_gap"`
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

// fragmentCodec compresses fragment pages: ZSTD at klauspost's fastest
// level. On issue 10's 1 GB lake, parquet-go's default level (≈ zstd 3)
// took ≈1.0 s of a ≈6 s build's CPU and the fastest ≈0.5 s, for an index
// 1.1 % (hash) to 1.5 % (sorted) larger; a light lookup's CPU did not move
// measurably (docs/rowindex-bench.md). Readers decode any level, so
// fragments written at the default level before still read
// (TestDefaultLevelFragmentsStillRead). The codec's encoder pool is its only
// state, shared by every writer as parquet.Zstd's would be.
var fragmentCodec = &zstd.Codec{Level: zstd.SpeedFastest}

// fragmentWriterOptions are the parquet-go writer options of a fragment of
// the row index name.
func fragmentWriterOptions(name string) []parquet.WriterOption {
	return []parquet.WriterOption{
		parquet.Compression(fragmentCodec),
		parquet.PageBufferSize(64 << 10),
		parquet.KeyValueMetadata("ariadne.rowindex", name),
		// No page statistics and no column-index bounds: lookups find
		// groups through the manifest's key directory and decode whole
		// groups, so min/max values per page (two keys each) are dead
		// weight (≈3% of a fragment). The offset index, which lookups use,
		// is still written.
		parquet.DataPageStatistics(false),
		parquet.SkipPageBounds("key"), parquet.SkipPageBounds("file"), parquet.SkipPageBounds("rg"),
		parquet.SkipPageBounds("row_gap"), parquet.SkipPageBounds("n"), parquet.SkipPageBounds("cover"),
	}
}

// encodeFragment writes a fragment file of the row index name to out: the
// row groups groups, read in turn from spool (spoolGroup.appendTo), under the
// schema of kind and plainGaps.
func encodeFragment(out io.Writer, spool io.Reader, name string, kind Kind, groups []Group, plainGaps bool) error {
	var g spoolGroup
	return encodeGroups(out, func(i, n int) (*spoolGroup, error) {
		if err := g.read(spool, n); err != nil {
			return nil, fmt.Errorf("rowindex: reading fragment spool: %w", err)
		}
		return &g, nil
	}, name, kind, groups, plainGaps)
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

// inDiskOrder sets dst to the entries of g, a sorted row index's row group
// in lookup order whose gaps column holds each entry's row number (as
// fragmentWriter.addOpen leaves it), in data-file order (compareDisk) with
// their row gaps (impliedRow), reusing dst's storage; sc is scratch space,
// reused. It returns how many of the gaps are 0.
//
// Data-file order sorts 64-bit keys packing the bits of (file, rg, row)
// in which the entries differ and the entry's index (packDiskOrder), by a
// radix sort, not the entries: a sorted row index sorts every entry of a
// build once here (a pointer sort was ≈15 % of a build's CPU). Entries
// whose fields do not fit 64 bits are sorted by (file, rg, row, index).
// The index settles ties (aggregate records share file, rg and row) in
// lookup order, which is compareDisk's order for them: lookup order sorts
// by bucket and key first.
//
// The group is gathered column by column straight from g into dst: the
// entries are never copied as structs (the path through []entry, toDisk's
// []diskEntry and spoolGroup.fill was ≈0.7 s of a sorted build of the 1 GB
// lake).
func (g *spoolGroup) inDiskOrder(dst *spoolGroup, sc *diskScratch) (zeroGaps int64) {
	n := len(g.files)
	perm := slices.Grow(sc.perm[:0], n)[:n]
	sc.perm = perm
	if keys, ok := packDiskOrder(g.files, g.rgs, g.gaps, &sc.keys); ok {
		wi := bits.Len(uint(max(n-1, 0)))
		sc.tmp = slices.Grow(sc.tmp[:0], n)[:n]
		keys = radixSortFrom(keys, sc.tmp, wi)
		idx := uint64(1)<<wi - 1
		for i, k := range keys {
			perm[i] = int32(k & idx)
		}
	} else {
		for i := range perm {
			perm[i] = int32(i)
		}
		slices.SortFunc(perm, func(a, b int32) int {
			return cmp.Or(
				cmp.Compare(g.files[a], g.files[b]),
				cmp.Compare(g.rgs[a], g.rgs[b]),
				cmp.Compare(g.gaps[a], g.gaps[b]),
				cmp.Compare(a, b),
			)
		})
	}
	dst.truncate()
	keys, covers := slices.Grow(dst.keys, len(g.keys)), slices.Grow(dst.covers, len(g.covers))
	keyEnds, coverEnds := slices.Grow(dst.keyEnds, n)[:n], slices.Grow(dst.coverEnds, n)[:n]
	files, rgs := slices.Grow(dst.files, n)[:n], slices.Grow(dst.rgs, n)[:n]
	gaps, ns := slices.Grow(dst.gaps, n)[:n], slices.Grow(dst.ns, n)[:n]
	if w := g.keyWidth(); w > 0 {
		// Keys of one width and no covers (every key-id build): each key
		// is copied to its fixed place, without its end looked up.
		keys = keys[:n*w]
		for j, i := range perm {
			copy(keys[j*w:j*w+w], g.keys[int(i)*w:])
			keyEnds[j] = int32(j*w + w)
		}
		clear(coverEnds)
	} else {
		for j, i := range perm {
			keys = append(keys, g.key(int(i))...)
			covers = append(covers, g.cover(int(i))...)
			keyEnds[j], coverEnds[j] = int32(len(keys)), int32(len(covers))
		}
	}
	prev := int32(-1)
	for j, i := range perm {
		f, rg, row := g.files[i], g.rgs[i], g.gaps[i]
		gap := row
		if prev >= 0 && g.files[prev] == f && g.rgs[prev] == rg {
			gap -= g.gaps[prev] + g.ns[prev] // impliedRow
		}
		if gap == 0 {
			zeroGaps++
		}
		files[j], rgs[j], gaps[j], ns[j] = f, rg, gap, g.ns[i]
		prev = i
	}
	dst.keys, dst.covers, dst.keyEnds, dst.coverEnds = keys, covers, keyEnds, coverEnds
	dst.files, dst.rgs, dst.gaps, dst.ns = files, rgs, gaps, ns
	return zeroGaps
}

// inDataFileOrder reports whether the group's entries, in lookup order
// with each row number in the gaps column (as inDiskOrder takes them), are
// in data-file order already (then rowsToGaps, not inDiskOrder, puts it in
// stored order): (file, rg, row) never decreases. Entries of
// one key are in that order (lookup order sorts a key's entries by it), so
// a group of one key is: on an arrival-order lake every key with more
// entries than a row group holds (cut at a key boundary) has groups of its
// own, ≈60 % of the 10× lake's entries; so is every group of a lake
// clustered by the key. Equal (file, rg, row) keep lookup order, as
// compareDisk's tie-break does.
func (g *spoolGroup) inDataFileOrder() bool {
	n := len(g.files)
	files, rgs, rows := g.files[:n], g.rgs[:n], g.gaps[:n]
	for i := 1; i < n; i++ {
		if f0, f1 := files[i-1], files[i]; f0 != f1 {
			if f0 > f1 {
				return false
			}
			continue
		}
		if r0, r1 := rgs[i-1], rgs[i]; r0 != r1 {
			if r0 > r1 {
				return false
			}
			continue
		}
		if rows[i-1] > rows[i] {
			return false
		}
	}
	return true
}

// rowsToGaps turns the row numbers in the gaps column of a group in
// data-file order (inDataFileOrder) into row gaps (impliedRow), in place:
// the group is then in stored order as it is, and is held or spooled as a
// hash row index's group is, with no sort, gather or copy (in a hot key's
// spooled fragment, ≈16 % of the 10× lake's entries, no copy at all). It
// returns how many of the gaps are 0.
func (g *spoolGroup) rowsToGaps() (zeroGaps int64) {
	n := len(g.files)
	files, rgs, rows, ns := g.files[:n], g.rgs[:n], g.gaps[:n], g.ns[:n]
	prev := int64(0) // the previous entry's row
	for i := range n {
		row := rows[i]
		gap := row
		if i > 0 && files[i-1] == files[i] && rgs[i-1] == rgs[i] {
			gap -= prev + ns[i-1] // impliedRow
		}
		if gap == 0 {
			zeroGaps++
		}
		rows[i], prev = gap, row
	}
	return zeroGaps
}

// keyWidth is the width of every key of the group when they all have the
// same and the group has no covers, else 0.
func (g *spoolGroup) keyWidth() int {
	n := len(g.files)
	if n == 0 || len(g.covers) > 0 {
		return 0
	}
	w := g.keyEnds[0]
	if w <= 0 || int64(len(g.keys)) != int64(n)*int64(w) {
		return 0
	}
	for i, e := range g.keyEnds {
		if e != int32(i+1)*w {
			return 0
		}
	}
	return int(w)
}

// diskScratch is inDiskOrder's scratch space, reused from one row group to
// the next.
type diskScratch struct {
	perm      []int32
	keys, tmp []uint64
}

// radixSortFrom sorts ks by their bits from bit lo up, stably, with tmp
// (as long as ks) as scratch, and returns the sorted keys (in ks's storage
// or tmp's). inDiskOrder's packed keys are in index order to begin with and
// hold the index in their low lo bits, so sorting the bits above it gives
// their full order: an LSD radix sort of a byte per pass, skipping the
// bytes that all keys share (≈4 passes for a build's row group of
// ≈3,200 entries, ≈3× faster than slices.Sort, which was ≈6 % of a sorted
// key-id build's CPU).
func radixSortFrom(ks, tmp []uint64, lo int) []uint64 {
	if len(ks) < 2 {
		return ks
	}
	var or uint64
	for _, k := range ks {
		or |= k
	}
	src, dst := ks, tmp[:len(ks)]
	for shift := lo; shift < bits.Len64(or); shift += 8 {
		var count [256]int
		for _, k := range src {
			count[byte(k>>shift)]++
		}
		if count[byte(src[0]>>shift)] == len(src) {
			continue // every key has this byte
		}
		sum := 0
		for i, c := range count {
			count[i] = sum
			sum += c
		}
		for _, k := range src {
			d := byte(k >> shift)
			dst[count[d]] = k
			count[d]++
		}
		src, dst = dst, src
	}
	return src
}

// packDiskOrder packs each entry's data-file order into one uint64, when
// it fits: the bits of file, row group and row in which the entries differ
// (above them every entry has the same bits, so they do not order), then
// the entry's index, which settles ties (inDiskOrder). A row group of a
// build (≈3k entries of a few files, row groups and rows) needs ≈40 bits.
func packDiskOrder(files, rgs []int32, rows []int64, keys *[]uint64) ([]uint64, bool) {
	n := len(files)
	if n == 0 {
		return nil, true
	}
	rgs, rows = rgs[:n], rows[:n]
	f0, g0, r0 := files[0], rgs[0], rows[0]
	var xf, xg, xr uint64
	for i := range n {
		xf |= uint64(uint32(files[i]) ^ uint32(f0))
		xg |= uint64(uint32(rgs[i]) ^ uint32(g0))
		xr |= uint64(rows[i] ^ r0)
	}
	wf, wg, wr, wi := bits.Len64(xf), bits.Len64(xg), bits.Len64(xr), bits.Len(uint(n-1))
	if wf+wg+wr+wi > 64 {
		return nil, false
	}
	// Signed order is unsigned order of the sign-flipped values; within
	// the varying bits (all below the sign bit unless it varies, and then
	// the width is the whole value) flipping keeps the order.
	ks := slices.Grow((*keys)[:0], n)[:n]
	*keys = ks
	mask := func(w int) uint64 { return uint64(1)<<w - 1 }
	mf, mg, mr := mask(wf), mask(wg), mask(wr)
	for i := range n {
		file := uint64(uint32(files[i])^1<<31) & mf
		rg := uint64(uint32(rgs[i])^1<<31) & mg
		row := (uint64(rows[i]) ^ 1<<63) & mr
		ks[i] = file<<(wg+wr+wi) | rg<<(wr+wi) | row<<wi | uint64(i)
	}
	return ks, true
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

// memFragmentBytes bounds the groups a fragment writer holds in memory for
// one fragment (fragmentWriter.inMemory): a fragment of fragmentFileBytes
// and the group that passes it.
const memFragmentBytes = fragmentFileBytes + fragmentSplitBytes

// writeFragments writes sorted entries as one or more fragment files under
// the row index folder and returns their manifest entries (Compact's path;
// a build streams its entries through a fragmentWriter instead).
func writeFragments(ctx context.Context, st store.Store, name string, kind Kind, es []entry) ([]FragmentEntry, int64, error) {
	tmp, err := newSpillDir("")
	if err != nil {
		return nil, 0, err
	}
	defer tmp.remove()
	w := newFragmentWriter(ctx, st, name, kind, tmp)
	defer w.wait()
	for i := range es {
		if err := w.add(&es[i]); err != nil {
			return nil, 0, err
		}
	}
	return w.close()
}

// fragmentWriter writes entries fed in fragment order (compareEntries) as
// fragment files, holding one row group of entries in memory at a time:
//
//   - row groups are cut at the first bucket (hash) or key (sorted)
//     boundary once they pass fragmentRowGroupBytes, fragment files at the
//     first boundary past fragmentFileBytes (with their last row group);
//   - a finished row group is put in stored order (for a sorted row index
//     rowsToGaps when it is in data-file order already, else inDiskOrder)
//     and held in memory or appended to a spool file, because the fragment's schema depends on all its row
//     groups (row_gap is PLAIN when at least half the gaps of the fragment
//     are 0);
//   - a finished fragment is written from the spool, row group by row
//     group, to a temporary Parquet file, then streamed to the store.
//
// The result is byte for byte what writing all entries of a fragment at
// once gives.
type fragmentWriter struct {
	ctx  context.Context
	st   store.Store
	name string
	kind Kind
	tmp  *spillDir

	// The open row group: its entries go straight into open's typed
	// columns in the order they come, lookup order (openBucket the first
	// one's bucket). A hash row index stores a group in that order, so its
	// row gaps are computed as entries come; a sorted one stores it in
	// data-file order, so open.gaps holds each entry's row number until
	// cutGroup gathers the group in that order (inDiskOrder), or turns
	// them into gaps in place when it is in that order (rowsToGaps).
	open       spoolGroup
	openBucket int32
	groupSz    int64
	// The last entry added: its fields, without pointers (an entry
	// copied into the writer on every add was ≈4 % of a build's CPU, much
	// of it the GC's write barriers); its key is the open group's last, or
	// prevKey when the group is empty.
	prevBucket       int32
	prevFile, prevRG int32
	prevRow, prevN   int64
	prevKey          []byte
	any              bool
	// A sorted row index's last key when it is 9 bytes (every int or
	// float key: prev9), as a tag and a word: boundary compares every
	// entry's key with it, and finding the last key in the open group
	// (lastKey) and comparing the bytes took ≈2 s of the 10× lake's
	// sorted build, against 0.3 s for the hash kind's bucket compare.
	prevTag  byte
	prevWord uint64
	prev9    bool

	// The open fragment.
	fileSz   int64
	spool    *os.File
	spoolW   *bufio.Writer
	groups   []Group
	zeroGaps int64
	entries  int64
	stage    spoolGroup  // a sorted group in stored order, to spool; reused
	disk     diskScratch // reused by cutGroup
	spoolBuf []byte      // reused by cutGroup
	// inMemory keeps the open fragment's groups as typed columns
	// (memGroups) instead of a spool file: for builds whose budget has room
	// for a fragment's groups (two at once: one filled while the previous
	// one is encoded), it saves encoding, writing, reading and parsing the
	// spool (≈15 % of a key-id build's CPU).
	inMemory  bool
	memGroups []*spoolGroup
	// memBytes is what memGroups hold. A fragment is cut only at a
	// bucket (hash) or key (sorted) boundary, so a hot one can be far
	// larger than fragmentFileBytes: once memBytes reaches memLimit
	// (0: memFragmentBytes), the fragment's further groups are spooled
	// after the ones held.
	memBytes, memLimit int64

	inFlight chan fragmentDone // the fragment being written, if any
	out      []FragmentEntry
	written  int64
	// onFragment, if set, is called after each fragment is stored.
	onFragment func(FragmentEntry)
}

func newFragmentWriter(ctx context.Context, st store.Store, name string, kind Kind, tmp *spillDir) *fragmentWriter {
	return &fragmentWriter{ctx: ctx, st: st, name: name, kind: kind, tmp: tmp}
}

// add appends the next entry; e may be reused by the caller afterwards.
func (w *fragmentWriter) add(e *entry) error {
	if err := w.cutBefore(e); err != nil {
		return err
	}
	if err := w.addOpen(e); err != nil {
		return err
	}
	sz := e.size()
	w.groupSz += sz
	w.fileSz += sz
	w.prevBucket, w.prevFile, w.prevRG, w.prevRow, w.prevN = e.Bucket, e.File, e.RG, e.Row, e.N
	if w.kind == KindSorted {
		if k := e.Key; len(k) == 9 {
			w.prevTag, w.prevWord, w.prev9 = k[0], binary.LittleEndian.Uint64(k[1:]), true
		} else {
			w.prev9 = false
		}
	}
	w.any = true
	return nil
}

// cutBefore ends the open row group, and the open fragment with it, if
// the rules allow or require a cut before e (only its bucket and key are
// read): past fragmentFileBytes or fragmentRowGroupBytes at a boundary,
// past fragmentSplitBytes anywhere.
func (w *fragmentWriter) cutBefore(e *entry) error {
	if w.any && w.boundary(e) {
		if w.fileSz >= fragmentFileBytes {
			if err := w.cutGroup(); err != nil {
				return err
			}
			if err := w.finishFragment(); err != nil {
				return err
			}
		} else if w.groupSz >= fragmentRowGroupBytes {
			if err := w.cutGroup(); err != nil {
				return err
			}
		}
	} else if w.any && w.groupSz >= fragmentSplitBytes {
		// A hot key or bucket: cut inside it (see fragmentSplitBytes).
		if err := w.cutGroup(); err != nil {
			return err
		}
	}
	return nil
}

// boundary reports whether a row group may end between the last entry
// added and e: between buckets (hash) or between keys (sorted).
func (w *fragmentWriter) boundary(e *entry) bool {
	if w.kind != KindSorted {
		return w.prevBucket != e.Bucket
	}
	if k := e.Key; w.prev9 && len(k) == 9 {
		return k[0] != w.prevTag || binary.LittleEndian.Uint64(k[1:]) != w.prevWord
	}
	return !sameKey(w.lastKey(), e.Key)
}

// sameKey is bytes.Equal, with 9-byte keys (every int or float key)
// compared as a byte and a word inline.
func sameKey(a, b []byte) bool {
	if len(a) == 9 && len(b) == 9 {
		return a[0] == b[0] && binary.LittleEndian.Uint64(a[1:]) == binary.LittleEndian.Uint64(b[1:])
	}
	return bytes.Equal(a, b)
}

// lastKey is the key of the last entry added.
func (w *fragmentWriter) lastKey() []byte {
	if n := len(w.open.files); n > 0 {
		return w.open.key(n - 1)
	}
	return w.prevKey
}

// addOpen appends e, the next entry of the open group, to the group's
// columns. A hash row
// index's group is stored as it comes, so its row gap is computed here; a
// sorted one's gaps column holds the row number (see fragmentWriter.open).
func (w *fragmentWriter) addOpen(e *entry) error {
	g := &w.open
	n := len(g.files)
	gap := e.Row
	if n == 0 {
		w.openBucket = e.Bucket
	}
	if w.kind != KindSorted {
		if n > 0 && g.files[n-1] == e.File && g.rgs[n-1] == e.RG {
			gap -= w.prevRow + w.prevN // impliedRow
		}
		if gap == 0 {
			w.zeroGaps++
		}
	}
	if int64(len(g.keys)+len(e.Key)) > math.MaxInt32 || int64(len(g.covers)+len(e.Cover)) > math.MaxInt32 {
		return fmt.Errorf("rowindex: a fragment row group's keys or covers pass 2 GiB")
	}
	g.keys = append(g.keys, e.Key...)
	g.covers = append(g.covers, e.Cover...)
	g.keyEnds = append(g.keyEnds, int32(len(g.keys)))
	g.coverEnds = append(g.coverEnds, int32(len(g.covers)))
	g.files, g.rgs = append(g.files, e.File), append(g.rgs, e.RG)
	g.gaps, g.ns = append(g.gaps, gap), append(g.ns, e.N)
	return nil
}

// cutGroup ends the open row group: it is held in memory or goes to the
// spool, in stored order.
func (w *fragmentWriter) cutGroup() error {
	n := len(w.open.files)
	if n == 0 {
		return nil
	}
	g := Group{BucketLo: w.openBucket, BucketHi: w.prevBucket, Rows: int64(n)}
	inMemory := w.inMemory && w.memBytes < cmp.Or(w.memLimit, memFragmentBytes)
	var stored *spoolGroup // the group in stored order, if not open
	if w.kind == KindSorted {
		g.KeyLo, g.KeyHi = bytes.Clone(w.open.key(0)), bytes.Clone(w.open.key(n-1))
		if w.open.inDataFileOrder() {
			// Already in stored order (a hot key's group, or a lake
			// clustered by the key): stored stays nil, the open group
			// is it.
			w.zeroGaps += w.open.rowsToGaps()
		} else {
			// A held group is gathered into storage of its own, a
			// spooled one into the reused stage.
			stored = &w.stage
			if inMemory {
				stored = new(spoolGroup)
			}
			w.zeroGaps += w.open.inDiskOrder(stored, &w.disk)
		}
	}
	if w.spool == nil && !inMemory {
		f, err := w.tmp.create("spool")
		if err != nil {
			return err
		}
		w.spool, w.spoolW = f, bufio.NewWriterSize(f, runWriteBuffer)
	}
	w.groups = append(w.groups, g)
	if inMemory {
		sg := stored
		if sg == nil {
			sg = w.open.clone()
		}
		w.memGroups = append(w.memGroups, sg)
		w.memBytes += sg.bytes()
	} else {
		// The group goes to the spool column by column (spoolGroup), in
		// one Write.
		w.spoolBuf = cmp.Or(stored, &w.open).appendTo(w.spoolBuf[:0])
		if _, err := w.spoolW.Write(w.spoolBuf); err != nil {
			return err
		}
	}
	w.entries += g.Rows
	// The last key must survive the reuse of the open group.
	w.prevKey = append(w.prevKey[:0], w.open.key(n-1)...)
	w.groupSz = 0
	w.open.truncate()
	return nil
}

// close ends the last row group and fragment and returns the fragments
// written and their bytes.
func (w *fragmentWriter) close() ([]FragmentEntry, int64, error) {
	if err := w.cutGroup(); err != nil {
		w.wait()
		return nil, w.written, err
	}
	if err := w.finishFragment(); err != nil {
		return nil, w.written, err
	}
	if err := w.wait(); err != nil {
		return nil, w.written, err
	}
	return w.out, w.written, nil
}

// finishFragment ends the open fragment: its spooled row groups are
// written as a fragment file in the background (Parquet encoding and ZSTD
// overlap the merge feeding the next fragment), after the previous
// fragment's write has finished, so at most one is in flight.
func (w *fragmentWriter) finishFragment() error {
	if len(w.groups) == 0 {
		return nil
	}
	groups, entries, zeroGaps := w.groups, w.entries, w.zeroGaps
	w.groups, w.entries, w.zeroGaps, w.fileSz = nil, 0, 0, 0
	mem := w.memGroups
	w.memGroups, w.memBytes = nil, 0
	if w.spool == nil {
		if err := w.wait(); err != nil {
			return err
		}
		done := make(chan fragmentDone, 1)
		w.inFlight = done
		go func() {
			fe, err := w.writeFragment(func(i, n int) (*spoolGroup, error) {
				return takeGroup(mem, i, n)
			}, groups, entries, 2*zeroGaps >= entries)
			done <- fragmentDone{fe, err}
		}()
		return nil
	}
	spool := w.spool
	w.spool = nil
	err := w.spoolW.Flush()
	if err == nil {
		_, err = spool.Seek(0, io.SeekStart)
	}
	if err != nil {
		spool.Close()
		os.Remove(spool.Name())
		return err
	}
	if err := w.wait(); err != nil {
		spool.Close()
		os.Remove(spool.Name())
		return err
	}
	done := make(chan fragmentDone, 1)
	w.inFlight = done
	go func() {
		defer func() {
			spool.Close()
			os.Remove(spool.Name())
		}()
		var g spoolGroup
		r := bufio.NewReaderSize(spool, runWriteBuffer)
		fe, err := w.writeFragment(func(i, n int) (*spoolGroup, error) {
			if i < len(mem) { // the groups held in memory come first
				return takeGroup(mem, i, n)
			}
			if err := g.read(r, n); err != nil {
				return nil, fmt.Errorf("rowindex: reading fragment spool: %w", err)
			}
			return &g, nil
		}, groups, entries, 2*zeroGaps >= entries)
		done <- fragmentDone{fe, err}
	}()
	return nil
}

// takeGroup returns held group i, of n entries, and lets go of it (once
// encoded, its memory can go).
func takeGroup(mem []*spoolGroup, i, n int) (*spoolGroup, error) {
	g := mem[i]
	mem[i] = nil
	if len(g.files) != n {
		return nil, errBadSpool
	}
	return g, nil
}

// fragmentDone is the outcome of a fragment written in the background.
type fragmentDone struct {
	fe  FragmentEntry
	err error
}

// wait waits for the fragment in flight, if any, and records it.
func (w *fragmentWriter) wait() error {
	if w.inFlight == nil {
		return nil
	}
	d := <-w.inFlight
	w.inFlight = nil
	if d.err != nil {
		return d.err
	}
	w.written += d.fe.Size
	w.out = append(w.out, d.fe)
	if w.onFragment != nil {
		w.onFragment(d.fe)
	}
	return nil
}

// writeFragment writes the spooled row groups (read from r) as a fragment
// file: first to a temporary file, then to the store.
func (w *fragmentWriter) writeFragment(group func(i, n int) (*spoolGroup, error), groups []Group, entries int64, plainGaps bool) (FragmentEntry, error) {
	out, err := w.tmp.create("fragment")
	if err != nil {
		return FragmentEntry{}, err
	}
	defer func() {
		out.Close()
		os.Remove(out.Name())
	}()
	bw := bufio.NewWriterSize(out, runWriteBuffer)
	if err := encodeGroups(bw, group, w.name, w.kind, groups, plainGaps); err != nil {
		return FragmentEntry{}, err
	}
	if err := bw.Flush(); err != nil {
		return FragmentEntry{}, err
	}
	size, err := out.Seek(0, io.SeekCurrent)
	if err != nil {
		return FragmentEntry{}, err
	}
	f, err := parquet.OpenFile(out, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
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
	var trailer [8]byte
	if _, err := out.ReadAt(trailer[:], size-8); err != nil {
		return FragmentEntry{}, err
	}
	rel := "fragments/" + uuid.NewString() + ".parquet"
	if err := copyToStore(w.ctx, w.st, folderOf(w.name)+rel, out, size); err != nil {
		return FragmentEntry{}, err
	}
	return FragmentEntry{Path: rel, Size: size, Entries: entries, Groups: groups, TailBytes: tailBytes(size, trailer, rgs)}, nil
}

// spoolGroup is one row group of a fragment spool, read back column by
// column. On the spool a group of n entries (diskEntry) is its body's
// length (uint64, little endian) and the body, one of:
//
//	spoolKeys | n uvarint key lengths | the keys back to back |
//	  n uvarint cover lengths | the covers | the integer columns
//	spoolOneKey | uvarint key length | the key | the integer columns
//
// where the integer columns are n varint files | n varint row groups |
// n varint row gaps | n varint run lengths. spoolOneKey is a group of one
// key and no covers: the groups of a hot key, the only ones a build
// spools when it holds fragments in memory (the 10× lake's user with 40.5M
// entries: 10 bytes an entry of lengths and keys written, read and parsed
// for nothing, ≈2/3 of its spool).
//
// A group is read with one ReadFull and each column decoded in a tight
// loop over memory; keys and covers stay where they are in the read
// buffer (a spoolOneKey group's key is repeated into rep). A varint record
// per entry, parsed one field at a time across the read buffer's windows,
// was ≈10 % of a build with its encoding; fixed-width columns were fast to
// parse but tripled the spool's bytes (≈50 per entry, written and read back
// through the page cache).
type spoolGroup struct {
	keyEnds, coverEnds []int32
	keys, covers       []byte
	files, rgs         []int32
	gaps, ns           []int64
	buf                []byte
	rep                []byte
}

// The forms of a spooled group's body (spoolGroup).
const (
	spoolKeys   = 0
	spoolOneKey = 1
)

// oneKey reports whether the group's entries all have one key and no
// cover (spoolOneKey).
func (g *spoolGroup) oneKey() bool {
	w := g.keyWidth()
	if w == 0 {
		return false
	}
	first := g.keys[:w]
	for i := w; i < len(g.keys); i += w {
		if !bytes.Equal(g.keys[i:i+w], first) {
			return false
		}
	}
	return true
}

// appendTo appends the group in spool form (spoolGroup) to dst.
func (g *spoolGroup) appendTo(dst []byte) []byte {
	at := len(dst)
	dst = append(dst, make([]byte, 8)...) // the body's length, set below
	if g.oneKey() {
		key := g.key(0)
		dst = append(dst, spoolOneKey)
		dst = binary.AppendUvarint(dst, uint64(len(key)))
		dst = append(dst, key...)
	} else {
		lengths := func(ends []int32) {
			s := int32(0)
			for _, e := range ends {
				dst = binary.AppendUvarint(dst, uint64(e-s))
				s = e
			}
		}
		dst = append(dst, spoolKeys)
		lengths(g.keyEnds)
		dst = append(dst, g.keys...)
		lengths(g.coverEnds)
		dst = append(dst, g.covers...)
	}
	for _, v := range g.files {
		dst = binary.AppendVarint(dst, int64(v))
	}
	for _, v := range g.rgs {
		dst = binary.AppendVarint(dst, int64(v))
	}
	for _, v := range g.gaps {
		dst = binary.AppendVarint(dst, v)
	}
	for _, v := range g.ns {
		dst = binary.AppendVarint(dst, v)
	}
	binary.LittleEndian.PutUint64(dst[at:], uint64(len(dst)-at-8))
	return dst
}

// maxSpoolGroup bounds the body of one spooled group (a group is cut at
// fragmentSplitBytes; a cover of a long run can pass it, but not by
// terabytes): a larger length is a damaged spool.
const maxSpoolGroup = 1 << 40

// read reads the next group, of n entries, from r.
func (g *spoolGroup) read(r io.Reader, n int) error {
	var head [8]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return err
	}
	size := binary.LittleEndian.Uint64(head[:])
	if size > maxSpoolGroup {
		return errBadSpool
	}
	g.buf = slices.Grow(g.buf[:0], int(size))[:size]
	if _, err := io.ReadFull(r, g.buf); err != nil {
		return err
	}
	b := g.buf
	lengths := func(ends []int32) ([]int32, []byte, error) {
		ends = slices.Grow(ends[:0], n)[:n]
		end := 0
		for i := range ends {
			l, m := binary.Uvarint(b)
			if m <= 0 || l > uint64(len(b)) {
				return nil, nil, errBadSpool
			}
			b = b[m:]
			end += int(l)
			if end > math.MaxInt32 {
				return nil, nil, errBadSpool
			}
			ends[i] = int32(end)
		}
		if end > len(b) {
			return nil, nil, errBadSpool
		}
		data := b[:end:end]
		b = b[end:]
		return ends, data, nil
	}
	if len(b) == 0 {
		return errBadSpool
	}
	form := b[0]
	b = b[1:]
	var err error
	switch form {
	case spoolKeys:
		if g.keyEnds, g.keys, err = lengths(g.keyEnds); err != nil {
			return err
		}
		if g.coverEnds, g.covers, err = lengths(g.coverEnds); err != nil {
			return err
		}
	case spoolOneKey:
		l, m := binary.Uvarint(b)
		if n == 0 || m <= 0 || l == 0 || l > uint64(len(b)-m) || l*uint64(n) > math.MaxInt32 {
			return errBadSpool
		}
		key := b[m : m+int(l)]
		b = b[m+int(l):]
		w := int(l)
		g.rep = slices.Grow(g.rep[:0], n*w)[:n*w]
		for done := copy(g.rep, key); done < len(g.rep); done *= 2 {
			copy(g.rep[done:], g.rep[:done])
		}
		g.keyEnds = slices.Grow(g.keyEnds[:0], n)[:n]
		for i := range g.keyEnds {
			g.keyEnds[i] = int32(i*w + w)
		}
		g.keys = g.rep
		g.coverEnds = slices.Grow(g.coverEnds[:0], n)[:n]
		clear(g.coverEnds)
		g.covers = g.covers[:0]
	default:
		return errBadSpool
	}
	ints := func(dst []int64) ([]int64, error) {
		dst = slices.Grow(dst[:0], n)[:n]
		for i := range dst {
			v, m := binary.Varint(b)
			if m <= 0 {
				return nil, errBadSpool
			}
			dst[i], b = v, b[m:]
		}
		return dst, nil
	}
	int32s := func(dst []int32) ([]int32, error) {
		dst = slices.Grow(dst[:0], n)[:n]
		for i := range dst {
			v, m := binary.Varint(b)
			if m <= 0 || v != int64(int32(v)) {
				return nil, errBadSpool
			}
			dst[i], b = int32(v), b[m:]
		}
		return dst, nil
	}
	if g.files, err = int32s(g.files); err != nil {
		return err
	}
	if g.rgs, err = int32s(g.rgs); err != nil {
		return err
	}
	if g.gaps, err = ints(g.gaps); err != nil {
		return err
	}
	if g.ns, err = ints(g.ns); err != nil {
		return err
	}
	if len(b) != 0 {
		return errBadSpool
	}
	return nil
}

// key returns entry i's key.
func (g *spoolGroup) key(i int) []byte { return endsSlot(g.keys, g.keyEnds, i) }

// cover returns entry i's cover.
func (g *spoolGroup) cover(i int) []byte { return endsSlot(g.covers, g.coverEnds, i) }

// endsSlot returns the i-th of the byte strings stored back to back in
// data, the i-th ending at ends[i].
func endsSlot(data []byte, ends []int32, i int) []byte {
	s := int32(0)
	if i > 0 {
		s = ends[i-1]
	}
	return data[s:ends[i]:ends[i]]
}

// bytes is the memory the group's columns hold.
func (g *spoolGroup) bytes() int64 {
	return int64(len(g.files))*(4+4+4+4+8+8) + int64(cap(g.keys)+cap(g.covers))
}

// truncate empties the group, keeping its storage.
func (g *spoolGroup) truncate() {
	g.keyEnds, g.coverEnds, g.keys, g.covers = g.keyEnds[:0], g.coverEnds[:0], g.keys[:0], g.covers[:0]
	g.files, g.rgs, g.gaps, g.ns = g.files[:0], g.rgs[:0], g.gaps[:0], g.ns[:0]
}

// clone returns a copy of the group's columns in storage of their size:
// a group kept in memory instead of spooled.
func (g *spoolGroup) clone() *spoolGroup {
	return &spoolGroup{
		keyEnds: slices.Clone(g.keyEnds), coverEnds: slices.Clone(g.coverEnds),
		keys: slices.Clone(g.keys), covers: slices.Clone(g.covers),
		files: slices.Clone(g.files), rgs: slices.Clone(g.rgs),
		gaps: slices.Clone(g.gaps), ns: slices.Clone(g.ns),
	}
}

var errBadSpool = errors.New("corrupt spooled group")

// copyToStore streams size bytes of f from its start to key, put-if-absent.
func copyToStore(ctx context.Context, st store.Store, key string, f *os.File, size int64) error {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	w, err := st.NewWriter(ctx, key, &store.WriteOptions{IfNotExist: true})
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, io.LimitReader(f, size)); err != nil {
		w.Abort()
		return err
	}
	return w.Close()
}

// decodeGroup decodes every entry of row group rg of a fragment whose bytes
// are in r, in lookup order (compareEntries), for a row index of kind
// whose buckets hash hashes.
func decodeGroup(fm *fileMeta, rg int, r *pageReader, kind Kind, hash BucketHash) ([]entry, error) {
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
		col, err := readFragmentColumn(ccs[c.Index()], r, n, nil)
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
			e.Bucket = hash.bucket(e.Key)
			e.Row = impliedRow(prev, e) + rows[i]
		}
		if prev != nil && order(prev, e) > 0 {
			return nil, corrupt("fragment row group %d is not in the order of a %s row index", rg, kind)
		}
		prev = e
	}
	if !v1 && kind == KindSorted {
		// Data-file order (file, rg, row) back to lookup order: by key,
		// ties in stored order. A permutation of int32 is sorted, not the
		// entries (≈90 bytes each), and the result built in one pass.
		perm := make([]int32, len(es))
		for i := range perm {
			perm[i] = int32(i)
		}
		slices.SortFunc(perm, func(a, b int32) int {
			if c := bytes.Compare(es[a].Key, es[b].Key); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
		out := make([]entry, len(es))
		for i, j := range perm {
			out[i] = es[j]
		}
		es = out
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
//
// An integer column's values go into ints when it holds n (a caller's
// pooled storage), otherwise into a new slice.
func readFragmentColumn(cc parquet.ColumnChunk, r io.ReaderAt, n int, ints []int64) (*fragmentColumn, error) {
	var out fragmentColumn
	var arena []byte
	var spans [][2]int // byte ranges in arena, turned into slices at the end
	started := false
	err := forEachFragmentPage(cc, r, n, func(page parquet.Page, _ int) error {
		data := page.Data()
		if !started {
			// One allocation for the column (the group's row count is
			// known), not a doubling per page.
			started = true
			switch {
			case page.Type().Kind() == parquet.ByteArray:
				spans = make([][2]int, 0, n)
			case cap(ints) >= n:
				out.ints = ints[:0]
			default:
				out.ints = make([]int64, 0, n)
			}
		}
		switch page.Type().Kind() {
		case parquet.Int32:
			for _, v := range data.Int32() {
				out.ints = append(out.ints, int64(v))
			}
		case parquet.Int64:
			out.ints = append(out.ints, data.Int64()...)
		case parquet.ByteArray:
			if d := page.Dictionary(); d != nil {
				dv := d.Page().Data()
				dict, dictOffsets := dv.ByteArray()
				for _, ix := range data.Int32() {
					if int(ix)+1 >= len(dictOffsets) {
						return fmt.Errorf("dictionary index %d out of range", ix)
					}
					at := len(arena)
					arena = append(arena, dict[dictOffsets[ix]:dictOffsets[ix+1]]...)
					spans = append(spans, [2]int{at, len(arena)})
				}
				return nil
			}
			b, offs := data.ByteArray()
			for i := 0; i+1 < len(offs); i++ {
				at := len(arena)
				arena = append(arena, b[offs[i]:offs[i+1]]...)
				spans = append(spans, [2]int{at, len(arena)})
			}
		default:
			return fmt.Errorf("unexpected type %v", page.Type())
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(spans) > 0 {
		out.bytes = make([][]byte, len(spans))
		for i, sp := range spans {
			out.bytes[i] = arena[sp[0]:sp[1]:sp[1]]
		}
	}
	if got := len(out.ints) + len(out.bytes); got != n {
		return nil, fmt.Errorf("%d values, want %d", got, n)
	}
	return &out, nil
}

// forEachFragmentPage calls fn with every page of a required fragment
// column chunk of n values, and the position of the page's first value;
// each page is released after fn. A null, a chunk of another length or
// fn's error ends it.
func forEachFragmentPage(cc parquet.ColumnChunk, r io.ReaderAt, n int, fn func(page parquet.Page, first int) error) error {
	fcc, ok := cc.(*parquet.FileColumnChunk)
	if !ok {
		return fmt.Errorf("column chunk %T is not a file column chunk", cc)
	}
	pages := pqrow.GuardPages(fcc, r)
	defer pages.Close()
	got := 0
	for {
		page, err := pages.ReadPage()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if page.NumNulls() > 0 {
			parquet.Release(page)
			return errors.New("null in a required column")
		}
		err = fn(page, got)
		got += int(page.NumValues())
		parquet.Release(page)
		if err != nil {
			return err
		}
	}
	if got != n {
		return fmt.Errorf("%d values, want %d", got, n)
	}
	return nil
}

// tailBytes returns the length of a Parquet file's tail: from its first
// offset index (or its footer) to its end (see FileEntry.TailBytes); trailer
// is the file's last 8 bytes (footer length and magic).
func tailBytes(size int64, trailer [8]byte, rgs []format.RowGroup) int64 {
	start := size - 8 - int64(binary.LittleEndian.Uint32(trailer[:4]))
	for _, rg := range rgs {
		for _, c := range rg.Columns {
			if c.OffsetIndexOffset > 0 {
				start = min(start, c.OffsetIndexOffset)
			}
		}
	}
	return size - start
}
