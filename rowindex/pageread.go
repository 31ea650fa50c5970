package rowindex

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"

	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// selRun is a run of selected rows of one row group: rows [row, row+n),
// delivered to piece p (whose first row is p.row).
type selRun struct {
	row, n int64
	p      *piece
}

// chunkRead is the decoding of one column chunk for one lookup batch: the
// runs of rows selected in its row group, in row order, not overlapping,
// and, once decoded, their values.
type chunkRead struct {
	w        *fileWork
	rg       int
	leaf     int // leaf column index in the file
	at       int // position of leaf in w.leaves
	runs     []selRun
	selected int // rows selected: the sum of the runs' n

	// vals holds every leaf value of the selected rows in row order;
	// starts[i] is where selected row i's values begin (nil for a
	// non-repeated column, where selected row i is vals[i]).
	vals   []parquet.Value
	starts []int32
	arena  valueArena

	m     *meter
	pages *pageCache // the page cache (nil: none)
	fill  bool       // this batch may add pages to it (those pageCache.admit admits)
	// learn: pages read whole learn their shapes (learnShape) for later
	// sub-page reads; not in a batch of more than learnMaxPages.
	learn  bool
	sub    bool // the chunk's pages may be read in parts (subPageReads)
	framed bool // read by frames (frameread.go)
	// borrow: the chunk's values are used up before the batch's fetched
	// ranges are given back (the blob of co-grouped blocks: assemble
	// decodes it into rows that own their bytes), so values of raw frames
	// may point into the ranges instead of being copied out.
	borrow bool
	frames []plannedFrame // a framed chunk's frames holding selected rows, from its plan
	copies *copySet       // read from interleaved copies (copyread.go), shared by the group's chunks
	copyAt int            // the column's position in a copy
	err    error          // the decode's outcome (readPieces)
	// sparse, when not nil, is the chunk's dictionary read in parts
	// (dictparts.go), placed by dictShape.
	sparse    *dictionary
	dictShape *pageShape
	needPicks bool // decoded with placeholders: its entries are to be read
	// dictEntries counts the dictionary entries read in parts (Plan).
	dictEntries int
	// keyed: the key column's chunk, its values the keys' (keyFromIndex,
	// fillKeys), not read.
	keyed bool
}

// cachedPage is a decoded data page in the page cache: its values, byte
// arrays copied out of parquet-go's buffers (immutable, so rows may point
// into them), and for a repeated column where each row starts.
type cachedPage struct {
	vals   []parquet.Value
	starts []int32
}

// row returns the values of selected row i.
func (c *chunkRead) row(i int) []parquet.Value {
	if c.starts == nil {
		return c.vals[i : i+1 : i+1]
	}
	e := len(c.vals)
	if i+1 < len(c.starts) {
		e = int(c.starts[i+1])
	}
	return c.vals[c.starts[i]:e:e]
}

// fillKeys makes c the key column's chunk of its runs, not read: each
// selected row's value is its piece's key (as kind, at definition level
// maxDef; keyFromIndex checked every key inverts). The rows of runs of one
// key share one copy of its bytes (values are never written to).
func (c *chunkRead) fillKeys(kind parquet.Kind, maxDef int) {
	c.keyed = true
	c.vals = make([]parquet.Value, 0, c.selected)
	var v parquet.Value
	var vKey []byte
	for _, r := range c.runs {
		if vKey == nil || !bytes.Equal(r.p.key, vKey) { // a point lookup's runs share one
			v, _ = keyValue(r.p.key, kind)
			v, vKey = v.Level(0, maxDef, c.leaf), r.p.key
		}
		for range r.n {
			c.vals = append(c.vals, v)
		}
	}
}

// keep appends v to the chunk's values, starting a new selected row when
// newRow is set (repeated columns). Unless owned (an immutable copy, as in
// the page cache), v's bytes are first copied out of its page.
func (c *chunkRead) keep(v parquet.Value, owned, repeated, newRow bool) {
	if !owned {
		v = c.arena.keep(v)
	}
	if repeated && newRow {
		c.starts = append(c.starts, int32(len(c.vals)))
	}
	c.vals = append(c.vals, v)
}

// decode decodes the selected rows of the column chunk cc through r,
// decoding each page that holds a selected row exactly once and the chunk's
// dictionary at most once (parquet-go's FilePages keeps it across seeks).
// Byte-array values are copied out of the pages (which go back to
// parquet-go's pools) into the chunk's arena.
//
// With aligned page locations (an offset index, or page locations whose
// first rows are known) pages holding no selected row are skipped without
// being read; otherwise the chunk is decoded as a stream from its first page
// up to the last selected row.
func (c *chunkRead) decode(cc parquet.ColumnChunk, r io.ReaderAt, locs []format.PageLocation, aligned, repeated bool, chunkRows int64) error {
	fcc, ok := cc.(*parquet.FileColumnChunk)
	if !ok {
		return fmt.Errorf("rowindex: column chunk %T is not a file column chunk", cc)
	}
	c.vals, c.starts, c.arena = make([]parquet.Value, 0, c.selected), nil, valueArena{}
	if repeated {
		c.starts = make([]int32, 0, c.selected)
	}
	runs := c.runs
	if len(runs) == 0 {
		return nil
	}
	pages := pqrow.GuardPages(fcc, r)
	defer pages.Close()
	if !aligned || len(locs) == 0 {
		return c.stream(pages, repeated)
	}
	var buf, scratch []parquet.Value
	var starts, scratchStarts []int32
	var segs [][2]int
	k := 0
	next := runs[0].row // next selected row not yet delivered
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
		// The selected rows of this page, as [lo, hi) row offsets in it.
		segs = segs[:0]
		selected := 0
		for k < len(runs) && next < end {
			run := &runs[k]
			stop := min(run.row+run.n, end)
			segs = append(segs, [2]int{int(next - first), int(stop - first)})
			selected += int(stop - next)
			next = stop
			if stop == run.row+run.n {
				k++
				if k < len(runs) {
					next = runs[k].row
				}
			}
		}
		// The page's values: from the page cache, or decoded now (and
		// then, copied, into the cache), or for a few rows of a large
		// page only those rows (Page.Slice: no value of the others is
		// materialized).
		var page parquet.Page
		kept := false // buf's values are immutable copies: no arena copy needed
		pk := pageKey{c.w.fe.ID, c.rg, c.leaf, pi}
		if v, ok := c.cachedPage(pk); ok {
			buf, starts, kept = v.vals, v.starts, true
			c.m.pageHits.Add(1)
		} else {
			if err := pages.SeekToRow(first); err != nil {
				return err
			}
			var err error
			if page, err = pages.ReadPage(); err != nil {
				if err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				return err
			}
			c.m.pages.Add(1)
			if page.NumRows() < end-first {
				parquet.Release(page)
				return fmt.Errorf("rowindex: page %d holds %d rows, its location says %d", pi, page.NumRows(), end-first)
			}
			fill := c.fill && page.Size() <= pageCacheMaxPageBytes && c.pages.admit(pk)
			if !repeated && !fill && selected*sparseRatio < int(page.NumRows()) {
				for _, sg := range segs {
					if scratch, err = pageValues(page.Slice(int64(sg[0]), int64(sg[1])), scratch[:0]); err != nil {
						parquet.Release(page)
						return err
					}
					if len(scratch) != sg[1]-sg[0] {
						parquet.Release(page)
						return fmt.Errorf("rowindex: page %d: %d values for %d rows", pi, len(scratch), sg[1]-sg[0])
					}
					for _, v := range scratch {
						c.keep(v, false, false, false)
					}
				}
				parquet.Release(page)
				continue
			}
			if scratch, err = pageValues(page, scratch[:0]); err != nil {
				parquet.Release(page)
				return err
			}
			scratchStarts = scratchStarts[:0]
			if repeated {
				for i, v := range scratch {
					if v.RepetitionLevel() == 0 {
						scratchStarts = append(scratchStarts, int32(i))
					}
				}
			}
			buf, starts = scratch, scratchStarts
			if fill {
				cp := copyPage(buf, starts)
				c.pages.put(pk, cp, cp.charge())
				parquet.Release(page)
				page = nil
				buf, starts, kept = cp.vals, cp.starts, true
			}
		}
		rows := int64(len(buf))
		if repeated {
			rows = int64(len(starts))
		}
		if rows < end-first {
			if page != nil {
				parquet.Release(page)
			}
			return fmt.Errorf("rowindex: page %d holds %d rows, its location says %d", pi, rows, end-first)
		}
		for _, sg := range segs {
			lo, hi := sg[0], sg[1]
			if repeated {
				vs, ve := int(starts[lo]), len(buf)
				if hi < len(starts) {
					ve = int(starts[hi])
				}
				for i := vs; i < ve; i++ {
					c.keep(buf[i], kept, true, buf[i].RepetitionLevel() == 0)
				}
			} else {
				for i := lo; i < hi; i++ {
					c.keep(buf[i], kept, false, false)
				}
			}
		}
		// The values point into the page's buffers until kept: release it
		// only now.
		if page != nil {
			parquet.Release(page)
		}
	}
	return c.check(repeated)
}

// sparseRatio: a page of which at most 1/sparseRatio of the rows are
// selected has only those rows materialized (Page.Slice), not all its values.
const sparseRatio = 8

// pageCacheMaxPageBytes is the largest page the page cache takes: a large
// page (other writers' defaults cut pages at 1 MiB) costs ≈3× its size once
// decoded, and would flush many small ones.
const pageCacheMaxPageBytes = 256 << 10

// cachedPage returns a page from the page cache.
func (c *chunkRead) cachedPage(k pageKey) (*cachedPage, bool) {
	if c.pages == nil {
		return nil, false
	}
	v, ok := c.pages.get(k)
	if !ok {
		return nil, false
	}
	return v.(*cachedPage), true
}

// copyPage copies a page's values, byte arrays into one block, for the
// page cache.
func copyPage(vals []parquet.Value, starts []int32) *cachedPage {
	n := 0
	for _, v := range vals {
		if k := v.Kind(); (k == parquet.ByteArray || k == parquet.FixedLenByteArray) && !v.IsNull() {
			n += len(v.ByteArray())
		}
	}
	a := valueArena{block: make([]byte, 0, n)}
	cp := &cachedPage{vals: make([]parquet.Value, len(vals)), starts: slices.Clone(starts)}
	for i, v := range vals {
		cp.vals[i] = a.keep(v)
	}
	return cp
}

// charge is the page's cost in the page cache.
func (p *cachedPage) charge() int64 {
	n := int64(24*len(p.vals)+4*len(p.starts)) + 64
	for _, v := range p.vals {
		if k := v.Kind(); k == parquet.ByteArray || k == parquet.FixedLenByteArray {
			n += int64(len(v.ByteArray()))
		}
	}
	return n
}

// stream decodes a chunk whose page boundaries are not known to be row
// boundaries (data page v1 of a repeated column without offset index): every
// page from the first, counting rows by repetition levels, until the last
// selected row is complete.
func (c *chunkRead) stream(pages parquet.Pages, repeated bool) error {
	if err := pages.SeekToRow(0); err != nil {
		return err
	}
	runs := c.runs
	var buf []parquet.Value
	row := int64(-1)
	k := 0
	last := runs[len(runs)-1]
	for {
		page, err := pages.ReadPage()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		c.m.pages.Add(1)
		buf, err = pageValues(page, buf[:0])
		if err != nil {
			parquet.Release(page)
			return err
		}
		done := false
		for _, v := range buf {
			newRow := v.RepetitionLevel() == 0
			if newRow {
				row++
				for k < len(runs) && row >= runs[k].row+runs[k].n {
					k++
				}
				if row >= last.row+last.n {
					done = true
					break
				}
			}
			if k < len(runs) && row >= runs[k].row {
				c.keep(v, false, repeated, newRow)
			}
		}
		parquet.Release(page)
		if done {
			break
		}
	}
	return c.check(repeated)
}

// check verifies that every selected row was found.
func (c *chunkRead) check(repeated bool) error {
	got := len(c.vals)
	if repeated {
		got = len(c.starts)
	}
	if got != c.selected {
		return fmt.Errorf("rowindex: %d of %d selected rows found", got, c.selected)
	}
	return nil
}

// pageValues appends every value of page to buf.
func pageValues(page parquet.Page, buf []parquet.Value) ([]parquet.Value, error) {
	// One more than the page says, so a full read ends in io.EOF.
	if n := int(page.NumValues()) + 1; cap(buf)-len(buf) < n {
		buf = append(make([]parquet.Value, 0, len(buf)+n), buf...)
	}
	vr := page.Values()
	for {
		if len(buf) == cap(buf) { // the page held more values than it said
			buf = append(buf, parquet.Value{})[:len(buf)]
		}
		k, err := vr.ReadValues(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+k]
		switch {
		case err == io.EOF:
			return buf, nil
		case err != nil:
			return buf, err
		case k == 0:
			return buf, errors.New("rowindex: page reader made no progress")
		}
	}
}
