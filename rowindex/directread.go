package rowindex

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
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
	c.vals, c.starts, c.arena = make([]parquet.Value, 0, c.selected), nil, valueArena{}
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
		cut, err := newPageCutter(p, ci, dict)
		if err != nil {
			return err
		}
		// Dictionary values are the handle's own immutable bytes; PLAIN
		// byte arrays point into the fetched ranges: copy the few kept.
		owned := isDictEnc(p.enc)
		for _, sg := range segs {
			for r := sg[0]; r < sg[1]; r++ {
				v, err := cut.row(r)
				if err != nil {
					return fmt.Errorf("rowindex: page %d: %w", pi, err)
				}
				c.keep(v, owned, false, false)
			}
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
// may fill the cache, kept there with bytes of its own).
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
	ri.learnShape(pk, ci, p, len(b))
	// A page that later lookups can read in parts (uncompressed PLAIN,
	// its shape now known) is not worth a copy in the cache.
	if c.fill && c.pages != nil && p.charge() <= rawPageCacheMaxBytes && !c.sub {
		if !own {
			// The page's bytes are part of a fetched range: keep a copy.
			cp := *p
			cp.levels = append([]byte(nil), p.levels...)
			cp.values = append([]byte(nil), p.values...)
			if p.levels == nil {
				cp.levels = nil
			}
			p = &cp
		}
		c.pages.put(rawPageKey(pk), p, p.charge())
	}
	return p, nil
}

// dictionary returns the chunk's decoded dictionary: from the cache, or
// decoded from its prefetched page (and cached).
func (c *chunkRead) dictionary(ri *RowIndex, ci colInfo) (*dictionary, error) {
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
	return d, nil
}

// Sub-page reads. An uncompressed PLAIN page need not be read whole to
// cut a few rows out of it: a fixed-width value i lies at the page's data
// start + i × width, and a byte array can be found by walking the length
// prefixes from the nearest sampled offset (pageShape.samples, learnt the
// first time the page is read whole). The lookup then reads the page's
// header and the selected values' bytes, not the page: one row of an
// arrow-go or pyarrow file costs a few hundred bytes per column instead of
// a 1 MiB page.

// headSlack is how far past a fixed-width value a sub-page read extends
// when the page's data start is not yet known: the page header (≈20–60
// bytes) and, for an optional column without nulls, its definition levels
// (one RLE run, a few bytes) lie before the values, so value i lies within
// [i × width, i × width + width + headSlack) of the page start.
const headSlack = 512

// sampleEvery is the spacing of the sampled byte-array offsets of a page:
// a selected byte array costs at most sampleEvery values' bytes to reach.
const sampleEvery = 64

// pageShape is what a sub-page read needs to know of an uncompressed PLAIN
// page without nulls: where its values start, its rows and, for byte
// arrays, the offset (from the data start) of every sampleEvery-th value,
// with the end of the values last.
type pageShape struct {
	dataStart int
	rows      int
	samples   []int32
}

type shapeKey pageKey

// pageSegs are the selected rows [lo, hi) (in the row group) of one page.
type pageSegs struct {
	page int
	segs [][2]int64
}

// subPageReads reports whether the pages of a column chunk may be read in
// parts: a flat column the direct path decodes, stored uncompressed, with
// no dictionary (every page PLAIN).
func (ri *RowIndex) subPageReads(fm *fileMeta, rg, col int) bool {
	ci, ok := directInfo(fm, rg, col)
	if !ok || ci.codec != format.Uncompressed {
		return false
	}
	if dr := fm.dictRange(rg, col); dr.end > dr.off {
		return false
	}
	md := &fm.f.Metadata().RowGroups[rg].Columns[col].MetaData
	for _, e := range md.Encoding {
		switch e {
		case format.Plain, format.RLE, format.BitPacked:
		default:
			return false
		}
	}
	return true
}

// planPage adds the byte ranges that one page's selected rows need: none
// when the page is in the page cache; the header and the selected values
// when the page may be read in parts (sub); else the whole page.
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
	var shape *pageShape
	if v, ok := ri.cache.get(shapeKey(pk)); ok {
		shape = v.(*pageShape)
	}
	var rs []brange
	var n int64
	for _, sg := range ps.segs {
		lo, hi := sg[0]-first, min(sg[1], end)-first
		var r brange
		switch {
		case ci.width > 0 && shape != nil:
			r = brange{off + int64(shape.dataStart) + lo*int64(ci.width), off + int64(shape.dataStart) + hi*int64(ci.width)}
		case ci.width > 0:
			r = brange{off + lo*int64(ci.width), off + hi*int64(ci.width) + headSlack}
		case shape != nil && shape.samples != nil:
			a, b := int(lo)/sampleEvery, (int(hi)-1)/sampleEvery+1
			if b >= len(shape.samples) {
				b = len(shape.samples) - 1
			}
			r = brange{off + int64(shape.dataStart) + int64(shape.samples[a]), off + int64(shape.dataStart) + int64(shape.samples[b])}
		default:
			add(whole)
			return
		}
		r.end = min(r.end, whole.end)
		n += r.end - r.off
		rs = append(rs, r)
	}
	if n*2 > size {
		add(whole) // most of the page: one range
		return
	}
	if shape == nil {
		add(brange{off, min(off+headSlack, whole.end)}) // the header
	}
	for _, r := range rs {
		add(r)
	}
}

// learnShape records the shape of a page read whole, for sub-page reads of
// it later: pages that are uncompressed, PLAIN and without nulls.
func (ri *RowIndex) learnShape(pk pageKey, ci colInfo, p *rawPage, pageBytes int) {
	if p.enc != format.Plain || p.levels != nil || ci.codec != format.Uncompressed {
		return
	}
	if _, ok := ri.cache.get(shapeKey(pk)); ok {
		return
	}
	sh := &pageShape{dataStart: pageBytes - len(p.values), rows: p.rows}
	if ci.width == 0 {
		sh.samples = make([]int32, 0, p.rows/sampleEvery+2)
		off := 0
		for i := 0; i < p.rows; i++ {
			if i%sampleEvery == 0 {
				sh.samples = append(sh.samples, int32(off))
			}
			if off+4 > len(p.values) {
				return
			}
			off += 4 + int(binary.LittleEndian.Uint32(p.values[off:]))
		}
		if off > len(p.values) {
			return
		}
		sh.samples = append(sh.samples, int32(off))
	}
	ri.cache.put(shapeKey(pk), sh, int64(4*len(sh.samples))+64)
}

// cutRanged cuts the selected rows segs (offsets in the page) of a page
// that was read in parts (planPage): header and values from the prefetched
// ranges. Anything missing is errNotDirect.
func (c *chunkRead) cutRanged(ri *RowIndex, ci colInfo, loc format.PageLocation, pk pageKey, segs [][2]int) error {
	off, size := loc.Offset, int64(loc.CompressedPageSize)
	var shape *pageShape
	if v, ok := ri.cache.get(shapeKey(pk)); ok {
		shape = v.(*pageShape)
	}
	if shape == nil {
		if ci.width == 0 {
			return fmt.Errorf("byte-array page without a shape: %w", errNotDirect)
		}
		head, ok := c.w.sp.slice(off, min(headSlack, size))
		if !ok {
			return fmt.Errorf("page header not prefetched: %w", errNotDirect)
		}
		ds, rows, err := parseHead(head, ci)
		if err != nil {
			return err
		}
		shape = &pageShape{dataStart: ds, rows: rows}
		ri.cache.put(shapeKey(pk), shape, 64)
	}
	c.m.pages.Add(1)
	base := off + int64(shape.dataStart)
	for _, sg := range segs {
		if sg[1] > shape.rows {
			return fmt.Errorf("row %d of a page of %d", sg[1]-1, shape.rows)
		}
		if ci.width > 0 {
			w := int64(ci.width)
			b, ok := c.w.sp.slice(base+int64(sg[0])*w, int64(sg[1]-sg[0])*w)
			if !ok {
				return fmt.Errorf("values not prefetched: %w", errNotDirect)
			}
			pr := plainReader{data: b, ci: ci}
			for i := range sg[1] - sg[0] {
				v, err := pr.value(i)
				if err != nil {
					return err
				}
				c.keep(v.Level(0, ci.maxDef, ci.leaf), true, false, false)
			}
			continue
		}
		a, e := sg[0]/sampleEvery, (sg[1]-1)/sampleEvery+1
		if e >= len(shape.samples) {
			e = len(shape.samples) - 1
		}
		s0 := int64(shape.samples[a])
		b, ok := c.w.sp.slice(base+s0, int64(shape.samples[e])-s0)
		if !ok {
			return fmt.Errorf("values not prefetched: %w", errNotDirect)
		}
		pr := plainReader{data: b, ci: ci}
		for r := sg[0]; r < sg[1]; r++ {
			v, err := pr.value(r - a*sampleEvery)
			if err != nil {
				return err
			}
			c.keep(v.Level(0, ci.maxDef, ci.leaf), false, false, false)
		}
	}
	return nil
}

// parseHead parses the start of an uncompressed PLAIN data page (header
// and definition levels) and returns where its values start and its rows.
// A page with nulls, or of another encoding, is errNotDirect.
func parseHead(b []byte, ci colInfo) (dataStart, rows int, err error) {
	r := bytes.NewReader(b)
	var h format.PageHeader
	if err := thrift.NewDecoder(new(thrift.CompactProtocol).NewReader(r)).Decode(&h); err != nil {
		return 0, 0, fmt.Errorf("page header: %v: %w", err, errNotDirect)
	}
	at := len(b) - r.Len()
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
