package rowindex

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/ariadne-go/ariadne/internal/bufpool"
)

// Dictionaries read in parts. A fresh process's light lookup in a lake of
// dictionary-encoded files (pyarrow encodes every column so: ≈2 MB of
// dictionary pages a file) reads every dictionary of every file it touches
// whole, for the one entry each of its rows uses: 85–90 % of its bytes.
// A dictionary page is a PLAIN page, so its shape (measureDictShape, kept
// under the page number dictShapePage) places its entries as a data page's
// shape places values. A chunk of a few selected rows (dictPartsMaxRows)
// whose dictionary is not cached but whose dictionary shape is known is
// planned without its dictionary page; decoding it runs twice
// (decodeChunkRead): first with a dictionary that collects the entries its
// indexes select (dictPicks, values placeholders), then, after reading the
// parts of the dictionary page holding those entries (readDictPicks: a
// third short round, the chunk's own), with those entries. Anything that
// fails sends the chunk to parquet-go's decoder, which reads the
// dictionary page whole. Parts are for a process's first touch of a
// dictionary (a CLI lookup, a new server): the second lookup that needs
// it reads it whole and caches it (dictSeen), as a server's traffic
// would otherwise read the same entries' blocks again and again.

// dictShapePage is the page number under which a chunk's dictionary page's
// shape is kept (pageKey.page; a shape file's record).
const dictShapePage = -1

// dictPartsMaxRows bounds the selected rows of a chunk whose dictionary is
// read in parts: each entry costs a SNAPPY run of up to a mark's 4 KiB, so
// past a few dozen the page is cheaper whole (and then cached).
const dictPartsMaxRows = 64

// dictPicks are the entries of a dictionary read one by one: while
// collect, the indexes a chunk's rows select are gathered (its values are
// placeholders); then keys (ascending) and their values.
type dictPicks struct {
	collect bool
	keys    []int32
	vals    [][]byte
	zero    []byte // a fixed-width placeholder
}

// value returns entry k (collecting: records it and returns a
// placeholder of the column's type).
func (p *dictPicks) value(k int, ci colInfo) (parquet.Value, error) {
	if p.collect {
		p.keys = append(p.keys, int32(k))
		if ci.width > 0 {
			if len(p.zero) < ci.width {
				p.zero = make([]byte, ci.width)
			}
			return fixedValue(p.zero[:ci.width], ci.typ), nil
		}
		return parquet.ByteArrayValue(nil), nil
	}
	i, ok := slices.BinarySearch(p.keys, int32(k))
	if !ok {
		return parquet.Value{}, fmt.Errorf("dictionary entry %d not read: %w", k, errNotDirect)
	}
	if ci.width > 0 {
		return fixedValue(p.vals[i], ci.typ), nil
	}
	return parquet.ByteArrayValue(p.vals[i]), nil
}

// measureDictShape returns the shape of a dictionary page (b, its header
// first) that parseDictionary decoded into d, as a PLAIN page of d.n
// values: nil when it has none.
func measureDictShape(ci colInfo, b []byte, d *dictionary) *pageShape {
	h, hlen, err := parsePageHeader(b)
	if err != nil || h.Type != format.DictionaryPage || d.n <= 0 {
		return nil
	}
	stored := int(h.CompressedPageSize)
	if stored < 0 || hlen+stored > len(b) {
		return nil
	}
	p := &rawPage{rows: d.n, enc: format.Plain, values: d.data, hlen: hlen, stored: stored, size: int(h.UncompressedPageSize), v1: true}
	sh := measureShape(ci, p, b[:hlen+stored])
	if sh == nil || sh.whole || sh.levels != nil {
		return nil
	}
	return sh
}

// learnDictShape keeps the shape of a chunk's dictionary page, read whole
// and decoded into d, in the metadata cache (lookups).
func (ri *RowIndex) learnDictShape(pk pageKey, ci colInfo, b []byte, d *dictionary) {
	if _, ok := ri.knownShape(pk); ok {
		return
	}
	if sh := measureDictShape(ci, b, d); sh != nil {
		ri.cache.put(shapeKey(pk), sh, sh.charge())
	}
}

// planDictParts reports whether chunk cr's dictionary (not cached) is read
// in parts, and if so gives the chunk its collecting dictionary. When its
// dictionary shape is unknown, the chunk's file may have it in a shape
// file (fileWork.noShape).
func (ri *RowIndex) planDictParts(w *fileWork, cr *chunkRead) bool {
	if cr.selected > dictPartsMaxRows || w.fm.copies != nil || !w.fm.aligned[cr.rg*w.fm.ncol()+cr.leaf] || framedChunk(w.fm, cr.rg, cr.leaf) {
		return false
	}
	ci, ok := directInfo(w.fm, cr.rg, cr.leaf)
	if !ok || ci.codec != format.Uncompressed && ci.codec != format.Snappy {
		return false
	}
	pk := pageKey{w.fe.ID, cr.rg, cr.leaf, dictShapePage}
	sh, ok := ri.knownShape(pk)
	if !ok {
		w.noShape = append(w.noShape, pk)
		w.unshaped++ // read in parts with its shape (cr.selected is small)
		return false
	}
	if sh.whole || sh.enc != format.Plain || ri.dictSeen.has(pk) {
		return false // read in parts before: read whole now, and cached
	}
	cr.dictShape = sh
	cr.sparse = &dictionary{ci: ci, n: sh.values, picked: &dictPicks{collect: true}}
	return true
}

// readDictPicks reads the entries the chunk's first decode collected from
// the parts of its dictionary page that hold them, and turns the chunk's
// dictionary from collecting to those entries. A gap of up to the
// coalescing gap between two entries' parts is read rather than paid a
// request.
func (ri *RowIndex) readDictPicks(ctx context.Context, m *meter, c *chunkRead, ci colInfo) error {
	sh, picks := c.dictShape, c.sparse.picked
	keys := picks.keys
	slices.Sort(keys)
	keys = slices.Compact(keys)
	dr := c.w.fm.dictRange(c.rg, c.leaf)
	size := int(dr.end - dr.off)
	// Each entry's bytes [a, e) in the page as if uncompressed, and the
	// page bytes [ra, re) that hold them (a SNAPPY run's blocks).
	type part struct {
		key, first int
		a, e       int
		ra, re     int
	}
	parts := make([]part, 0, len(keys))
	for _, k := range keys {
		if k < 0 || int(k) >= sh.values {
			return fmt.Errorf("dictionary index %d of %d", k, sh.values)
		}
		a, e, first, _, ok := sh.span(int(k), int(k)+1, ci.width)
		if !ok {
			return fmt.Errorf("dictionary shape without value offsets: %w", errNotDirect)
		}
		p := part{key: int(k), first: first, a: a, e: e, ra: a, re: e}
		if sh.snappy != nil {
			if _, _, in := sh.snappyOut(a, e); !in {
				return fmt.Errorf("dictionary entry %d outside its SNAPPY blocks: %w", k, errNotDirect)
			}
			p.ra, p.re = sh.snappyBlocks(a, e)
		}
		if p.ra < 0 || p.re > size || p.ra >= p.re {
			return fmt.Errorf("dictionary entry %d past its page: %w", k, errNotDirect)
		}
		parts = append(parts, p)
	}
	// Coalesced reads of the page's parts, in order.
	gap := int(ri.gapFor(c.w.o.st))
	vals := make([][]byte, len(parts))
	for i := 0; i < len(parts); {
		lo, hi := parts[i].ra, parts[i].re
		j := i + 1
		for j < len(parts) && parts[j].ra-hi <= gap {
			lo, hi = min(lo, parts[j].ra), max(hi, parts[j].re)
			j++
		}
		buf := bufpool.Get(hi - lo)
		b, err := readRangeInto(ctx, m, c.w.o, dr.off+int64(lo), buf[:hi-lo])
		if err != nil {
			ri.putBuf(buf)
			return err
		}
		for k := i; k < j; k++ {
			p := &parts[k]
			raw, release, err := dictPartBytes(ri, sh, b, lo, p.a, p.e)
			if err != nil {
				ri.putBuf(buf)
				return err
			}
			v, err := dictEntry(raw, ci, p.key-p.first)
			vals[k] = bytes.Clone(v) // raw is a pooled buffer's, or the read's
			release()
			if err != nil {
				ri.putBuf(buf)
				return fmt.Errorf("dictionary entry %d: %w", p.key, err)
			}
		}
		ri.putBuf(buf)
		i = j
	}
	picks.keys, picks.vals, picks.collect = keys, vals, false
	ri.dictParts.Add(int64(len(keys)))
	c.dictEntries = len(keys)
	ri.dictSeen.again(pageKey{c.w.fe.ID, c.rg, c.leaf, dictShapePage})
	return nil
}

// dictPartBytes returns bytes [a, e) of a dictionary page as if it were
// uncompressed, from b, the page's bytes from lo: directly, or decoding the
// SNAPPY run that holds them (release gives its buffer back).
func dictPartBytes(ri *RowIndex, sh *pageShape, b []byte, lo, a, e int) ([]byte, func(), error) {
	if sh.snappy == nil {
		if a-lo < 0 || e-lo > len(b) {
			return nil, nil, fmt.Errorf("dictionary part not read: %w", errNotDirect)
		}
		return b[a-lo : e-lo], func() {}, nil
	}
	ba, be, _ := sh.snappyOut(a, e)
	run := sh.snappy.run(ba, be)
	in, end := sh.hlen+run.in-lo, sh.hlen+run.end-lo
	if in < 0 || end > len(b) || in > end {
		return nil, nil, fmt.Errorf("dictionary blocks not read: %w", errNotDirect)
	}
	scratch := bufpool.Get(end - in + run.patchBytes() + 2*binary.MaxVarintLen64)
	out, scratch, err := decodeSnappyRun(bufpool.Get(run.outEnd-run.out), scratch, b[in:end], run)
	ri.putBuf(scratch)
	if err != nil {
		return nil, nil, fmt.Errorf("dictionary page: %v: %w", err, errNotDirect)
	}
	ri.inflated.Add(int64(len(out)))
	if ba-run.out < 0 || be-run.out > len(out) {
		ri.putBuf(out)
		return nil, nil, fmt.Errorf("dictionary run does not hold its entry: %w", errNotDirect)
	}
	return out[ba-run.out : be-run.out], func() { ri.putBuf(out) }, nil
}

// dictEntry returns the i-th PLAIN value of b (fixed width, or byte
// arrays with their 4-byte lengths).
func dictEntry(b []byte, ci colInfo, i int) ([]byte, error) {
	if w := ci.width; w > 0 {
		if i < 0 || (i+1)*w > len(b) {
			return nil, fmt.Errorf("fixed-width entry %d past %d bytes", i, len(b))
		}
		return b[i*w : (i+1)*w], nil
	}
	off := 0
	for j := 0; ; j++ {
		if off+4 > len(b) {
			return nil, fmt.Errorf("byte array %d past %d bytes", j, len(b))
		}
		n := int(binary.LittleEndian.Uint32(b[off:]))
		if n < 0 || n > len(b)-off-4 {
			return nil, fmt.Errorf("byte array %d of %d bytes past %d", j, n, len(b))
		}
		if j == i {
			return b[off+4 : off+4+n], nil
		}
		off += 4 + n
	}
}

// decodePicks finishes the chunks whose first decode collected dictionary
// entries (needPicks): their entries read, chunks concurrently (on this
// goroutine alone when local reads are inlined), then each chunk decoded
// again with them, its pages counted once. A chunk whose entries cannot be
// read or used is decoded by parquet-go, which reads its dictionary whole.
func (ri *RowIndex) decodePicks(ctx context.Context, m *meter, chunks []*chunkRead, inline bool) {
	var need []*chunkRead
	for _, c := range chunks {
		if c.needPicks && c.err == nil {
			need = append(need, c)
		}
	}
	if len(need) == 0 {
		return
	}
	workers := 1
	if !inline {
		workers = min(len(need), 64)
	}
	eachOnWorkers(len(need), workers, func(i int) {
		c := need[i]
		ci, _ := directInfo(c.w.fm, c.rg, c.leaf)
		ri.putVals(c.vals)
		c.vals, c.needPicks = nil, false
		if err := ri.readPicksSafely(ctx, m, c, ci); err != nil {
			c.sparse = nil
			c.err = ri.decodeOne(ctx, m, c)
			return
		}
		// The pages were counted, learnt from and offered to the page
		// cache by the first decode.
		cm, learn, fill := c.m, c.learn, c.fill
		c.m, c.learn, c.fill = new(meter), false, false
		c.err = ri.decodeOne(ctx, m, c)
		c.m, c.learn, c.fill = cm, learn, fill
	})
}

// readPicksSafely is readDictPicks, a panic turned into an error (the
// entries are placed by a shape a file gave; decoding them is guarded as
// decodeOne guards pages).
func (ri *RowIndex) readPicksSafely(ctx context.Context, m *meter, c *chunkRead, ci colInfo) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("rowindex: reading dictionary entries panicked: %v", r)
		}
	}()
	return ri.readDictPicks(ctx, m, c, ci)
}

// keepWholeDict drops a chunk's dictionary read in parts, before its first
// decode, when the whole dictionary is at hand after all: decoded in the
// cache (another lookup), or among the fetched ranges (a scan of the
// chunk, or coalescing, read its page).
func (c *chunkRead) keepWholeDict(ri *RowIndex) {
	if c.sparse == nil || !c.sparse.picked.collect {
		return
	}
	if _, ok := ri.cache.get(decodedDictKey{c.w.fe.ID, c.rg, c.leaf}); ok {
		c.sparse = nil
		return
	}
	if dr := c.w.fm.dictRange(c.rg, c.leaf); dr.end > dr.off {
		if _, ok := c.w.sp.slice(dr.off, dr.end-dr.off); ok {
			c.sparse = nil
		}
	}
}
