package rowindex

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/ariadne-go/ariadne/internal/bufpool"
)

// rawPageCacheMaxBytes is the largest direct-path page the page cache
// takes. A direct page costs its decompressed bytes (not ≈3× as a decoded
// page does), so the 1 MiB pages of other writers' defaults fit; a page
// that was compressed is then decompressed once, not per lookup.
const rawPageCacheMaxBytes = 1<<20 + 64<<10

// decodeDirect decodes the selected rows of a flat column chunk with the
// direct path (rawpage.go): each page holding a selected row is parsed
// once (or taken from the page cache), and only the selected rows' values
// are cut out of it. It returns an error wrapping errNotDirect, with the
// chunk's values reset, when a page is outside the direct path's scope or
// its bytes were not prefetched: the caller then decodes with parquet-go.
func (c *chunkRead) decodeDirect(ri *RowIndex, ci colInfo, locs []format.PageLocation, chunkRows int64) (err error) {
	c.vals, c.starts, c.arena = ri.getVals(c.selected), nil, valueArena{}
	defer func() {
		if err != nil {
			c.vals, c.arena = nil, valueArena{}
		}
	}()
	runs := c.runs
	if len(runs) == 0 {
		return nil
	}
	var dict *dictionary
	k := 0
	next := runs[0].row
	var segs [][2]int
	// lens is the decoded lengths of DELTA_LENGTH_BYTE_ARRAY pages (a few
	// thousand per page, every page of a byte-array column of parquet-go's
	// files): pooled, since the values cut point into the page, not here.
	lens := ri.getLens()
	defer func() { ri.putLens(lens) }()
	for k < len(runs) {
		pi := sort.Search(len(locs), func(i int) bool { return locs[i].FirstRowIndex > next }) - 1
		if pi < 0 {
			return fmt.Errorf("rowindex: row %d before the chunk's first page", next)
		}
		first := locs[pi].FirstRowIndex
		end := chunkRows
		if pi+1 < len(locs) {
			end = locs[pi+1].FirstRowIndex
		}
		segs = segs[:0]
		for k < len(runs) && next < end {
			run := &runs[k]
			stop := min(run.row+run.n, end)
			segs = append(segs, [2]int{int(next - first), int(stop - first)})
			next = stop
			if stop == run.row+run.n {
				k++
				if k < len(runs) {
					next = runs[k].row
				}
			}
		}
		pk := pageKey{c.w.fe.ID, c.rg, c.leaf, pi}
		p, err := c.rawPage(ri, ci, locs[pi], pk)
		if err == errPartial {
			if err := c.cutRanged(ri, ci, locs[pi], pk, segs); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		if int64(p.rows) != end-first {
			return fmt.Errorf("rowindex: page %d holds %d rows, its location says %d", pi, p.rows, end-first)
		}
		if isDictEnc(p.enc) && dict == nil {
			if dict, err = c.dictionary(ri, ci); err != nil {
				return err
			}
		}
		cut, err := newPageCutter(p, ci, dict, lens)
		if err != nil {
			return err
		}
		if cut.delta.lens != nil {
			lens = cut.delta.lens // storage for the next page's lengths
		}
		// Dictionary values are the handle's own immutable bytes; PLAIN
		// byte arrays point into the fetched ranges: copy the few kept.
		owned := isDictEnc(p.enc)
		for _, sg := range segs {
			if c.vals, err = cut.appendRows(c.vals, sg[0], sg[1], &c.arena, owned); err != nil {
				return fmt.Errorf("rowindex: page %d: %w", pi, err)
			}
		}
		// Every kept value is a copy (or a dictionary's): the page's
		// buffer may go back to its pool.
		if p.buf != nil {
			ri.releasePage(p)
		}
	}
	return c.check(false)
}

// isDictEnc reports whether a data page of encoding enc holds dictionary
// indexes.
func isDictEnc(enc format.Encoding) bool {
	return enc == format.RLEDictionary || enc == format.PlainDictionary
}

// errPartial reports that a page was not prefetched whole (a sub-page read,
// or a planning miss that cutRanged then reports as errNotDirect).
var errPartial = errors.New("rowindex: page not prefetched whole")

// rawPage returns a data page of the chunk for the direct path: from the
// page cache, or parsed from the prefetched bytes (and then, if this batch
// may fill the cache and the cache admits the page, kept there with bytes
// of its own).
func (c *chunkRead) rawPage(ri *RowIndex, ci colInfo, loc format.PageLocation, pk pageKey) (*rawPage, error) {
	if c.pages != nil {
		if v, ok := c.pages.get(rawPageKey(pk)); ok {
			c.m.pageHits.Add(1)
			return v.(*rawPage), nil
		}
	}
	b, ok := c.w.sp.slice(loc.Offset, int64(loc.CompressedPageSize))
	if !ok {
		return nil, errPartial
	}
	p, own, err := parseRawPage(b, ci)
	if err != nil {
		return nil, err
	}
	c.m.pages.Add(1)
	if own {
		ri.inflated.Add(int64(len(p.values) + len(p.levels)))
	}
	// A SNAPPY page learns its shape on its second whole read: walking
	// its stream cost a lookup touching pages once (a light key of a large
	// lake) ≈30 % more CPU.
	if c.learn && (ci.codec == format.Uncompressed || ri.shapeSeen.again(pk)) {
		ri.learnShape(pk, ci, p, b)
	}
	// An uncompressed page that later lookups can read in parts is not
	// worth a copy in the cache; a compressed one is (a hit decompresses
	// nothing, not even a block).
	if c.fill && c.pages != nil && p.charge() <= rawPageCacheMaxBytes && (!c.sub || ci.codec != format.Uncompressed) && c.pages.admit(pk) {
		// The cache keeps an exact copy: the page's bytes are a fetched
		// range's, or a pooled buffer (a power of two with headroom for
		// the decompressor) that goes back to its pool after the cut.
		c.pages.put(rawPageKey(pk), p.compactCopy(), p.charge())
	}
	return p, nil
}

// dictionary returns the chunk's decoded dictionary: from the cache, or
// decoded from its prefetched page (and cached).
func (c *chunkRead) dictionary(ri *RowIndex, ci colInfo) (*dictionary, error) {
	if c.sparse != nil {
		return c.sparse, nil
	}
	dk := decodedDictKey{c.w.fe.ID, c.rg, c.leaf}
	if v, ok := ri.cache.get(dk); ok {
		c.m.hits.Add(1)
		return v.(*dictionary), nil
	}
	dr := c.w.fm.dictRange(c.rg, c.leaf)
	if dr.end <= dr.off {
		return nil, fmt.Errorf("dictionary-encoded page without a dictionary: %w", errNotDirect)
	}
	b, ok := c.w.sp.slice(dr.off, dr.end-dr.off)
	if !ok {
		return nil, fmt.Errorf("dictionary not prefetched: %w", errNotDirect)
	}
	d, err := parseDictionary(b, ci)
	if err != nil {
		return nil, err
	}
	ri.cache.put(dk, d, d.size)
	if c.learn && c.sub {
		ri.learnDictShape(pageKey{c.w.fe.ID, c.rg, c.leaf, dictShapePage}, ci, b, d)
	}
	return d, nil
}

// Sub-page reads. An uncompressed page need not be read whole to cut a
// few rows out of it. Once a page has been read whole, its shape (where its
// values start, its definition levels when it has nulls, and where every
// sampleEvery-th value starts) says which bytes hold the values of given
// rows: a fixed-width PLAIN value i lies at the values' start + i × width, a
// PLAIN byte array is found by walking the length prefixes from the nearest
// sampled offset, and a dictionary index by walking the RLE/bit-packed runs
// from the nearest sampled run start. A row's value index is its count of
// defined rows before it, counted in the cached levels. The lookup then
// reads the selected values' bytes, not the page: one row of an arrow-go or
// pyarrow file costs a few hundred bytes per column instead of a 1 MiB page.
// A fixed-width PLAIN page without nulls is read in parts even before its
// shape is known (header + a guessed range, see headSlack).

// headSlack is how far past a fixed-width value a sub-page read extends
// when the page's data start is not yet known: the page header (≈20–60
// bytes) and, for an optional column without nulls, its definition levels
// (one RLE run, a few bytes) lie before the values, so value i lies within
// [i × width, i × width + width + headSlack) of the page start.
const headSlack = 512

// sampleEvery is the spacing of the sampled offsets of a page's values: a
// selected byte array or dictionary index costs at most ≈sampleEvery
// values' bytes to reach.
const sampleEvery = 64

// sampleBytes is the spacing in bytes the samples of a byte-array page aim
// at: a heavy key selects a row in most sample intervals of a page, and
// with 64 values of ≈130 bytes between samples its sub-page reads were as
// dear as the page. 4 bytes per ≈256–512 bytes of values (≈1 %) is the
// shape's cost in memory.
const sampleBytes = 256

// snappySampleBytes is sampleBytes for a SNAPPY page read in parts: its
// reads decode runs between marks 4 KiB of output apart (snappysplit.go),
// so samples a quarter of that apart add little to a read, and take a
// quarter of the memory (on the pyarrow lake the samples were 38 of the 64
// MB that the shapes of all its pages took).
const snappySampleBytes = 1 << 10

// pageShape is what a sub-page read needs to know of an uncompressed page.
type pageShape struct {
	dataStart int // page start → its values (after header and levels)
	rows      int
	enc       format.Encoding
	// levels are the page's definition levels (bit width 1) when it has
	// nulls; nil when every row is defined.
	levels []byte
	values int // defined values
	// samples (PLAIN byte arrays): the offset from dataStart of every
	// every-th value, the end of the values last.
	samples []int32
	every   int
	// marks (dictionary indexes): run starts at least sampleEvery values
	// apart, the end of the runs last (val = values); bw the indexes'
	// bit width.
	marks []runMark
	bw    int
	// snappy (a v1 page compressed with SNAPPY, snappysplit.go): where
	// its blocks and marks start in the page body. The offsets above are
	// then in the page as if its body were stored uncompressed after its
	// header of hlen bytes (bodyLen bytes uncompressed).
	snappy  *snappyIndex
	hlen    int
	bodyLen int
	// whole: a SNAPPY page that cannot be read in parts (a v2 page, or a
	// stream that is not valid SNAPPY): remembered so that its stream is
	// not walked on every read.
	whole bool
}

// runMark is the start of a run of dictionary indexes: its first value's
// index, the offset of its header from dataStart and the header's length,
// and for a bit-packed run its values (a value inside it is reached
// directly: groups of 8 values take bw bytes each).
type runMark struct {
	val, off, n int32
	hdr         uint8
	packed      bool
}

// inside reports whether value v lies in the mark's bit-packed run.
func (m *runMark) inside(v int) bool { return m.packed && v >= int(m.val) && v < int(m.val+m.n) }

type shapeKey pageKey

// charge is the shape's cost in the metadata cache.
func (sh *pageShape) charge() int64 {
	c := int64(len(sh.levels)+4*len(sh.samples)+16*len(sh.marks)) + 112
	if sh.snappy != nil {
		c += sh.snappy.charge() + 56
	}
	return c
}

// levelCursor answers, for rows in non-decreasing order, whether a row is
// null and how many defined rows precede it.
type levelCursor struct {
	h    hybrid
	none bool // no levels: every row defined
}

func newLevelCursor(levels []byte) levelCursor {
	return levelCursor{h: hybrid{data: levels, bw: 1}, none: levels == nil}
}

// defined returns the defined rows before row r (r may be the row count),
// or -1 if the levels end before it.
func (lc *levelCursor) defined(r int) int {
	if lc.none || r == 0 {
		return r
	}
	if !lc.h.seek(r - 1) {
		return -1
	}
	return lc.h.onesBefore(r-1) + int(lc.h.at(r-1))
}

// null reports whether row r is null (false if the levels end before it).
func (lc *levelCursor) null(r int) bool {
	if lc.none || !lc.h.seek(r) {
		return false
	}
	return lc.h.at(r) == 0
}

// span returns the byte range, from the page start, that holds values
// [vlo, vhi) (vlo < vhi), and the index of the first value in it; mid
// says it starts inside a bit-packed run of dictionary indexes.
func (sh *pageShape) span(vlo, vhi, width int) (off, end, first int, mid, ok bool) {
	switch {
	case width > 0 && sh.enc == format.Plain:
		return sh.dataStart + vlo*width, sh.dataStart + vhi*width, vlo, false, true
	case sh.enc == format.Plain && sh.samples != nil:
		a, b := vlo/sh.every, (vhi-1)/sh.every+1
		if b >= len(sh.samples) {
			b = len(sh.samples) - 1
		}
		return sh.dataStart + int(sh.samples[a]), sh.dataStart + int(sh.samples[b]), a * sh.every, false, true
	case isDictEnc(sh.enc) && len(sh.marks) > 0:
		ms := sh.marks
		last := func(v int) int { // the last mark at or before value v
			return max(sort.Search(len(ms), func(i int) bool { return int(ms[i].val) > v })-1, 0)
		}
		a, e := &ms[last(vlo)], &ms[last(vhi-1)]
		if a.inside(vlo) {
			// From the group of 8 values holding vlo.
			g := (vlo - int(a.val)) / 8
			off, first, mid = int(a.off)+int(a.hdr)+g*sh.bw, int(a.val)+g*8, true
		} else {
			off, first = int(a.off), int(a.val)
		}
		if e.inside(vhi - 1) {
			end = int(e.off) + int(e.hdr) + ((vhi-1-int(e.val))/8+1)*sh.bw
		} else {
			b := sort.Search(len(ms), func(i int) bool { return int(ms[i].val) >= vhi })
			end = int(ms[min(b, len(ms)-1)].off)
		}
		return sh.dataStart + off, sh.dataStart + end, first, mid, true
	}
	return 0, 0, 0, false, false
}

// indexes returns a walker of the dictionary indexes in b, the bytes
// span returned for values from first; mid (span's) says b starts inside
// a bit-packed run, at the group of first.
func (sh *pageShape) indexes(b []byte, first int, mid bool) hybrid {
	h := hybrid{data: b, bw: sh.bw, start: first}
	if !mid {
		return h
	}
	ms := sh.marks
	m := &ms[max(sort.Search(len(ms), func(i int) bool { return int(ms[i].val) > first })-1, 0)]
	left := int(m.val+m.n) - first // the run's values from first
	nb := min(len(b), (left*sh.bw+7)/8)
	h.rle, h.bits, h.pos = false, b[:nb], nb
	h.n = min(left, nb*8/max(sh.bw, 1))
	return h
}

// pageSegs are the selected rows [lo, hi) (in the row group) of one page.
type pageSegs struct {
	page int
	segs [][2]int64
}

// subPageReads reports whether the pages of a column chunk may be read in
// parts: a flat column the direct path decodes, stored uncompressed or
// with SNAPPY (its pages read in runs, snappysplit.go), whose pages
// are PLAIN or dictionary indexes.
func (ri *RowIndex) subPageReads(fm *fileMeta, rg, col int) bool {
	ci, ok := directInfo(fm, rg, col)
	if !ok || ci.codec != format.Uncompressed && ci.codec != format.Snappy {
		return false
	}
	md := &fm.f.Metadata().RowGroups[rg].Columns[col].MetaData
	for _, e := range md.Encoding {
		switch e {
		case format.Plain, format.RLE, format.BitPacked, format.RLEDictionary, format.PlainDictionary:
		default:
			return false
		}
	}
	return true
}

// planPage adds the byte ranges that one page's selected rows need: none
// when the page is in the page cache; the selected values (and, before the
// page's shape is known, its header) when the page may be read in parts
// (sub); else the whole page.
func (ri *RowIndex) planPage(w *fileWork, rg, col int, locs []format.PageLocation, ps pageSegs, sub bool) {
	j := ps.page
	pk := pageKey{w.fe.ID, rg, col, j}
	if ri.pages != nil {
		if _, ok := ri.pages.get(pk); ok {
			return // decoded in the page cache: nothing to read
		}
		if _, ok := ri.pages.get(rawPageKey(pk)); ok {
			return
		}
	}
	loc := locs[j]
	off, size := loc.Offset, int64(loc.CompressedPageSize)
	whole := brange{off, off + size}
	add := func(r brange) {
		if n := len(w.ranges); n > 0 && w.ranges[n-1] == r {
			return
		}
		w.ranges = append(w.ranges, r)
	}
	if !sub {
		add(whole)
		return
	}
	end := int64(math.MaxInt64)
	if j+1 < len(locs) {
		end = locs[j+1].FirstRowIndex
	}
	first := loc.FirstRowIndex
	ci, _ := directInfo(w.fm, rg, col)
	shape, _ := ri.knownShape(pk)
	// Before its shape is known, only a fixed-width page of a chunk
	// without dictionary and without nulls may be guessed PLAIN with its
	// values right after the header.
	guess := shape == nil && ci.codec == format.Uncompressed && ci.width > 0 && w.fm.dictRange(rg, col).end <= w.fm.dictRange(rg, col).off && noNulls(w.fm, rg, col)
	if shape == nil && !guess || shape != nil && shape.whole {
		if shape == nil {
			w.noShape = append(w.noShape, pk)
			if pageRows := min(end, w.fm.f.Metadata().RowGroups[rg].NumRows) - first; selectedRows(ps.segs, end)*2 <= pageRows {
				w.unshaped++ // its shape would have it read in parts
			}
		}
		add(whole)
		return
	}
	var rs []brange
	var n int64
	var lc levelCursor
	if shape != nil {
		lc = newLevelCursor(shape.levels)
	}
	for _, sg := range ps.segs {
		lo, hi := sg[0]-first, min(sg[1], end)-first
		var r brange
		if guess {
			r = brange{off + lo*int64(ci.width), off + hi*int64(ci.width) + headSlack}
		} else {
			vlo, vhi := lc.defined(int(lo)), lc.defined(int(hi))
			if vlo < 0 || vhi < vlo || vhi > shape.values || hi > int64(shape.rows) {
				add(whole) // levels that count more values than the page has: it says what is wrong
				return
			}
			if vlo == vhi {
				continue // only nulls
			}
			a, b, _, _, ok := shape.span(vlo, vhi, ci.width)
			if !ok {
				add(whole)
				return
			}
			if shape.snappy != nil {
				// The blocks holding the values, compressed.
				a, b = shape.snappyBlocks(a, b)
			}
			r = brange{off + int64(a), off + int64(b)}
		}
		r.end = min(r.end, whole.end)
		if r.off >= r.end {
			// A guess past the page (its nulls make it shorter than
			// rows × width): read it whole and learn its shape.
			add(whole)
			return
		}
		rs = append(rs, r)
	}
	// The bytes the ranges cover: a SNAPPY page's runs overlap where they
	// start at the same mark (in a stream compressed as one block, most
	// start at its start), and guessed ranges overlap by their slack.
	if len(rs) == 1 {
		n = rs[0].end - rs[0].off
	} else {
		for _, r := range coalesce(rs, 0) {
			n += r.end - r.off
		}
	}
	if n*2 > size {
		add(whole) // most of the page: one range
		return
	}
	if guess {
		add(brange{off, min(off+headSlack, whole.end)}) // the header
	}
	for _, r := range rs {
		add(r)
	}
}

// selectedRows counts the rows of segs before row end (a page's segments).
func selectedRows(segs [][2]int64, end int64) (n int64) {
	for _, sg := range segs {
		n += max(min(sg[1], end)-sg[0], 0)
	}
	return n
}

// noNulls reports whether a column chunk is known to hold no null: its
// column is required, or its statistics (when written: a writer that
// writes min and max writes the null count) count none.
func noNulls(fm *fileMeta, rg, col int) bool {
	if col < len(fm.maxDef) && fm.maxDef[col] == 0 {
		return true
	}
	st := &fm.f.Metadata().RowGroups[rg].Columns[col].MetaData.Statistics
	written := st.MinValue != nil || st.MaxValue != nil || st.Min != nil || st.Max != nil
	return written && st.NullCount == 0
}

// snappyBlocks returns the byte range, from the page start, of the
// compressed bytes whose run (snappyIndex.run) decodes bytes [a, b) of the
// page as if it were uncompressed.
func (sh *pageShape) snappyBlocks(a, b int) (off, end int) {
	r := sh.snappy.run(a-sh.hlen, b-sh.hlen)
	return sh.hlen + r.in, sh.hlen + r.end
}

// snappyGroups returns, for each of a page's segments, the end (from the
// page start) of the values its run decodes: its own values' end, or the
// last values' end of the segments after it whose runs overlap its run
// and each other, so that overlapping runs (in a stream compressed as one
// block most start at its start) decode once, not once a segment. A
// segment of nulls, or without a span, ends at 0.
func (sh *pageShape) snappyGroups(segs [][2]int, width int) []int {
	lc := newLevelCursor(sh.levels)
	upto := make([]int, len(segs))
	type group struct{ first, outEnd, end int }
	g := group{first: -1}
	closeGroup := func(next int) {
		for k := max(g.first, 0); g.first >= 0 && k < next; k++ {
			upto[k] = g.end
		}
	}
	for i, sg := range segs {
		vlo, vhi := lc.defined(sg[0]), lc.defined(sg[1])
		if vlo < 0 || vhi <= vlo || vhi > sh.values || sg[1] > sh.rows {
			continue
		}
		a, e, _, _, ok := sh.span(vlo, vhi, width)
		ba, be, in := sh.snappyOut(a, e)
		if !ok || !in {
			continue // cutRanged reports it
		}
		r := sh.snappy.run(ba, be)
		if g.first >= 0 && r.out < g.outEnd {
			g.outEnd, g.end = max(g.outEnd, r.outEnd), e
			continue
		}
		closeGroup(i)
		g = group{first: i, outEnd: r.outEnd, end: e}
	}
	closeGroup(len(segs))
	return upto
}

// snappyOut returns bytes [a, e) of a SNAPPY page (from the page start,
// as if uncompressed) as offsets in its body's output, and whether they
// are values inside it.
func (sh *pageShape) snappyOut(a, e int) (ba, be int, ok bool) {
	ba, be = a-sh.hlen, e-sh.hlen
	return ba, be, a >= sh.dataStart && ba >= 0 && be <= sh.bodyLen && ba < be
}

// snappyRead is what cutRanged decoded last of a SNAPPY page: its output
// from output offset start, in out, a pooled buffer given back by
// release.
type snappyRead struct {
	start int
	out   []byte
}

func (r *snappyRead) release(ri *RowIndex) {
	if r.out != nil {
		ri.putBuf(r.out)
		r.out = nil
	}
}

// snappyBytes returns bytes [a, e) of a SNAPPY page as if it were
// uncompressed (offsets from the page start at off): from what was last
// decoded (r) when it holds them, else decoding the run of bytes [a,
// max(e, upto)) (snappyIndex.run: snappyBlocks' range; upto reaches the
// later segments whose runs overlap this one's, snappyGroups) from the
// prefetched ranges into r. The bytes are r's until its next use or
// release.
func (c *chunkRead) snappyBytes(ri *RowIndex, sh *pageShape, off int64, a, e, upto int, r *snappyRead) ([]byte, error) {
	ba, be, in := sh.snappyOut(a, e)
	if !in {
		return nil, fmt.Errorf("bytes [%d, %d) outside the page's %d SNAPPY blocks", a, e, len(sh.snappy.blocks)-1)
	}
	if r.out == nil || ba < r.start || be > r.start+len(r.out) {
		r.release(ri)
		run := sh.snappy.run(ba, min(max(be, upto-sh.hlen), sh.bodyLen))
		b, ok := c.w.sp.slice(off+int64(sh.hlen+run.in), int64(run.end-run.in))
		if !ok {
			return nil, fmt.Errorf("SNAPPY blocks not prefetched: %w", errNotDirect)
		}
		outLen := run.outEnd - run.out
		scratch := bufpool.Get(len(b) + run.patchBytes() + 2*binary.MaxVarintLen64)
		out, scratch, err := decodeSnappyRun(bufpool.Get(outLen), scratch, b, run)
		ri.putBuf(scratch)
		if err != nil {
			return nil, fmt.Errorf("page at %d: %v: %w", off, err, errNotDirect)
		}
		ri.inflated.Add(int64(outLen))
		r.start, r.out = run.out, out
	}
	return r.out[ba-r.start : be-r.start], nil
}

// learnShape records the shape of a page read whole (uncompressed, or
// SNAPPY v1 whose stream splits into blocks), for sub-page reads of it
// later; b is the page's bytes.
func (ri *RowIndex) learnShape(pk pageKey, ci colInfo, p *rawPage, b []byte) {
	if _, ok := ri.knownShape(pk); ok {
		return
	}
	if sh := measureShape(ci, p, b); sh != nil {
		ri.cache.put(shapeKey(pk), sh, sh.charge())
	}
}

// knownShape returns a page's shape: learnt by Warm (shapes.go), else by a
// lookup that read it whole (the metadata cache).
func (ri *RowIndex) knownShape(pk pageKey) (*pageShape, bool) {
	if ri.shapeBytes > 0 {
		if sh, ok := ri.shapes.get(pk); ok {
			return sh, true
		}
	}
	if v, ok := ri.cache.get(shapeKey(pk)); ok {
		return v.(*pageShape), true
	}
	return nil, false
}

// measureShape returns the shape of page p of bytes b, read whole: nil when
// it has none to learn (a codec or an encoding read whole, values that do
// not parse), a shape that says whole when its SNAPPY stream cannot be read
// in parts.
func measureShape(ci colInfo, p *rawPage, b []byte) *pageShape {
	if ci.codec != format.Uncompressed && ci.codec != format.Snappy || p.enc != format.Plain && !isDictEnc(p.enc) {
		return nil
	}
	sh := &pageShape{dataStart: len(b) - len(p.values), rows: p.rows, enc: p.enc, values: p.rows}
	if ci.codec == format.Snappy {
		var x snappyIndex
		ok := p.v1
		if ok {
			x, ok = snappySplits(b[p.hlen : p.hlen+p.stored])
		}
		n := x.n
		if !ok || n != p.size || n < len(p.values) {
			return &pageShape{whole: true}
		}
		// Kept for long: no spare capacity (charge counts lengths).
		x.blocks, x.marks = slices.Clip(x.blocks), slices.Clip(x.marks)
		if ci.width > 0 && p.enc == format.Plain {
			// Fixed-width values (timestamps): their segments' copies
			// chain back to the block's start (snappysplit.go).
			x.addPatches(b[p.hlen:p.hlen+p.stored], p.values, n-len(p.values))
		}
		sh.snappy, sh.hlen, sh.bodyLen, sh.dataStart = &x, p.hlen, n, p.hlen+n-len(p.values)
	}
	if p.levels != nil {
		sh.levels = bytes.Clone(p.levels)
		lc := newLevelCursor(sh.levels)
		if sh.values = lc.defined(p.rows); sh.values < 0 {
			return nil
		}
	}
	switch {
	case isDictEnc(p.enc):
		if len(p.values) < 1 || p.values[0] > 32 {
			return nil
		}
		sh.bw = int(p.values[0])
		// A mark every sampleEvery values at least, and at every long
		// bit-packed run (parquet-go writes a page's indexes as one).
		h := hybrid{data: p.values[1:], bw: sh.bw}
		next := 0
		for {
			at := h.pos
			if !h.next() {
				break
			}
			if h.start >= next || !h.rle && h.n >= 2*sampleEvery {
				sh.marks = append(sh.marks, runMark{val: int32(h.start), off: int32(1 + at), n: int32(h.n),
					hdr: uint8(h.pos - len(h.bits) - at), packed: !h.rle})
				next = h.start + sampleEvery
			}
		}
		if sh.bw > 0 && h.start < sh.values {
			return nil // fewer indexes than values
		}
		sh.marks = slices.Clip(append(sh.marks, runMark{val: int32(max(h.start, sh.values)), off: int32(len(p.values))}))
	case ci.width == 0:
		// Samples about sampleBytes apart: every power-of-two number of
		// values (4–64) nearest the page's mean value size.
		sh.every = sampleEvery
		if sh.values > 0 {
			mean := max(len(p.values)/sh.values, 1)
			aim := sampleBytes
			if sh.snappy != nil {
				aim = snappySampleBytes
			}
			for sh.every > 4 && sh.every*mean > 2*aim {
				sh.every /= 2
			}
		}
		sh.samples = make([]int32, 0, sh.values/sh.every+2)
		off := 0
		for i := 0; i < sh.values; i++ {
			if i%sh.every == 0 {
				sh.samples = append(sh.samples, int32(off))
			}
			if off+4 > len(p.values) {
				return nil
			}
			off += 4 + int(binary.LittleEndian.Uint32(p.values[off:]))
		}
		if off > len(p.values) {
			return nil
		}
		sh.samples = append(sh.samples, int32(off))
	}
	return sh
}

// cutRanged cuts the selected rows segs (offsets in the page) of a page
// that was read in parts (planPage): values from the prefetched ranges,
// placed by the page's shape (or, for a fixed-width page without one, by
// its header). Anything missing is errNotDirect.
func (c *chunkRead) cutRanged(ri *RowIndex, ci colInfo, loc format.PageLocation, pk pageKey, segs [][2]int) error {
	off, size := loc.Offset, int64(loc.CompressedPageSize)
	shape, _ := ri.knownShape(pk)
	if shape != nil && shape.whole {
		return fmt.Errorf("page read whole: %w", errNotDirect)
	}
	if shape == nil {
		if ci.width == 0 || ci.codec != format.Uncompressed {
			return fmt.Errorf("page without a shape: %w", errNotDirect)
		}
		head, ok := c.w.sp.slice(off, min(headSlack, size))
		if !ok {
			return fmt.Errorf("page header not prefetched: %w", errNotDirect)
		}
		ds, rows, err := parseHead(head, ci)
		if err != nil {
			return err
		}
		shape = &pageShape{dataStart: ds, rows: rows, enc: format.Plain, values: rows}
		ri.cache.put(shapeKey(pk), shape, shape.charge())
	}
	var dict *dictionary
	if isDictEnc(shape.enc) {
		var err error
		if dict, err = c.dictionary(ri, ci); err != nil {
			return err
		}
	}
	c.m.pages.Add(1)
	ri.subCuts.Add(1)
	// Two cursors, each moving forward: one counts the values before each
	// segment's bounds, the other finds the null rows within it.
	lc, rowLc := newLevelCursor(shape.levels), newLevelCursor(shape.levels)
	// The blocks of a SNAPPY page last decoded: every value kept is a
	// copy (byte arrays by the arena) or a dictionary's, so they go back
	// to the pool at the end.
	var sr snappyRead
	defer sr.release(ri)
	var upto []int
	if shape.snappy != nil && len(segs) > 1 {
		upto = shape.snappyGroups(segs, ci.width)
	}
	for i, sg := range segs {
		if sg[1] > shape.rows {
			return fmt.Errorf("row %d of a page of %d", sg[1]-1, shape.rows)
		}
		vlo, vhi := lc.defined(sg[0]), lc.defined(sg[1])
		if vlo < 0 || vhi < 0 {
			return fmt.Errorf("definition levels end before row %d", sg[1])
		}
		var b []byte
		first, mid := 0, false
		if vhi > vlo {
			var a, e int
			var ok bool
			a, e, first, mid, ok = shape.span(vlo, vhi, ci.width)
			if !ok {
				return fmt.Errorf("page shape without value offsets: %w", errNotDirect)
			}
			if shape.snappy != nil {
				var err error
				u := e
				if upto != nil {
					u = upto[i]
				}
				if b, err = c.snappyBytes(ri, shape, off, a, e, u, &sr); err != nil {
					return err
				}
			} else if b, ok = c.w.sp.slice(off+int64(a), int64(e-a)); !ok {
				return fmt.Errorf("values not prefetched: %w", errNotDirect)
			}
		}
		var pr plainReader
		var idx hybrid
		if isDictEnc(shape.enc) && vhi > vlo {
			idx = shape.indexes(b, first, mid)
		} else {
			pr = plainReader{data: b, ci: ci}
		}
		vi := vlo
		for r := sg[0]; r < sg[1]; r++ {
			if rowLc.null(r) {
				c.keep(parquet.Value{}.Level(0, 0, ci.leaf), true, false, false)
				continue
			}
			var v parquet.Value
			switch {
			case dict != nil:
				var err error
				if v, err = dict.index(&idx, vi); err != nil {
					return err
				}
			default:
				var err error
				if v, err = pr.value(vi - first); err != nil {
					return err
				}
			}
			// Dictionary values are the handle's own; PLAIN values point
			// into the fetched ranges, pooled buffers given back after the
			// lookup (numbers are copied by value, byte arrays, fixed-length
			// ones included, by the arena).
			c.keep(v.Level(0, ci.maxDef, ci.leaf), dict != nil || ci.width > 0 && ci.typ != format.FixedLenByteArray, false, false)
			vi++
		}
	}
	return nil
}

// parseHead parses the start of an uncompressed PLAIN data page (header
// and definition levels) and returns where its values start and its rows.
// A page with nulls, or of another encoding, is errNotDirect.
func parseHead(b []byte, ci colInfo) (dataStart, rows int, err error) {
	h, at, err := parsePageHeader(b)
	if err != nil {
		return 0, 0, fmt.Errorf("page header: %v: %w", err, errNotDirect)
	}
	switch h.Type {
	case format.DataPage:
		dh := h.DataPageHeader.V
		if dh.Encoding != format.Plain {
			return 0, 0, errNotDirect
		}
		rows = int(dh.NumValues)
		if ci.maxDef > 0 {
			if dh.DefinitionLevelEncoding != format.RLE || at+4 > len(b) {
				return 0, 0, errNotDirect
			}
			n := int(binary.LittleEndian.Uint32(b[at:]))
			if at+4+n > len(b) || !allDefined(b[at+4:at+4+n], rows) {
				return 0, 0, errNotDirect
			}
			at += 4 + n
		}
	case format.DataPageV2:
		dh := h.DataPageHeaderV2.V
		if dh.Encoding != format.Plain || dh.NumNulls != 0 || dh.RepetitionLevelsByteLength != 0 || dh.NumValues != dh.NumRows {
			return 0, 0, errNotDirect
		}
		rows = int(dh.NumRows)
		at += int(dh.DefinitionLevelsByteLength)
	default:
		return 0, 0, errNotDirect
	}
	return at, rows, nil
}
