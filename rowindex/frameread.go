package rowindex

import (
	"context"
	"fmt"
	"sort"
	"sync/atomic"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/ariadne-go/ariadne/internal/bufpool"
	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/prepared"
)

// Frame reads (prepared.FrameFile): a framed file's data pages hold their
// values as one ZSTD frame per key run, and the file's frame table says
// where each frame is. A lookup then reads and decompresses only the
// frames of its rows (plus, for a frame mixing null and defined rows, the
// page's definition levels), never a whole page. The table is in the
// file's tail, between the offset indexes and the footer, so it comes with
// the metadata read (FileEntry.TailBytes covers it) and is cached with it.

// loadFrames parses the frame table of a framed file, from the tail bytes
// already read when they hold it. A file without frames leaves fm.frames
// nil; a table that does not parse is a *FileChangedError wrapping a
// *prepared.FrameTableError (errors.Is prepared.ErrBadFrames).
func loadFrames(ctx context.Context, m *meter, o object, fm *fileMeta, tail spans) error {
	mk, ok, err := prepared.FramesMarkerOf(fm.f)
	if !ok {
		return nil
	}
	if err != nil {
		return fileChanged(o.uri, corruptReason+"frame table", err)
	}
	if mk.Offset+mk.Length > fm.size-8 {
		return fileChanged(o.uri, corruptReason+"frame table", &prepared.FrameTableError{Reason: "table past the footer"})
	}
	var b []byte
	if t, ok := tail.slice(mk.Offset, mk.Length); ok {
		b = append([]byte(nil), t...)
	} else if b, err = readRange(ctx, m, o, mk.Offset, mk.Length); err != nil {
		return fileChanged(o.uri, "truncated", err)
	}
	t, err := prepared.ParseFrameTable(b, len(fm.f.Metadata().RowGroups), fm.ncol())
	if err != nil {
		return fileChanged(o.uri, corruptReason+"frame table", err)
	}
	if err := loadCopies(fm, mk); err != nil {
		return fileChanged(o.uri, corruptReason+"frame table", err)
	}
	fm.setFrames(t)
	fm.tail = max(fm.tail, fm.size-mk.Offset)
	fm.frameRange = brange{mk.Offset, mk.Offset + mk.Length}
	fm.charge += t.Bytes()
	return nil
}

// setFrames makes t the file's frame table, no page of it checked yet.
func (fm *fileMeta) setFrames(t *prepared.FrameTable) {
	fm.frames = t
	fm.framePages = make([]int32, len(fm.f.Metadata().RowGroups)*fm.ncol())
	pages := int32(0)
	for i := range fm.framePages {
		fm.framePages[i] = pages
		pages += int32(t.Pages(i/fm.ncol(), i%fm.ncol()))
	}
	fm.framesChecked = make([]atomic.Uint64, (pages+63)/64)
	fm.charge += 4*int64(len(fm.framePages)) + 8*int64(len(fm.framesChecked))
}

// checkAllFrames checks every page entry of the frame table of a framed
// file (Warm: a lookup then walks only the frames it needs even on pages
// it is the first to reach). A page whose entry does not fit is left
// unchecked: a lookup that reaches it fails on it. Only ctx's error is
// returned.
func (fm *fileMeta) checkAllFrames(ctx context.Context) error {
	if fm.frames == nil {
		return nil
	}
	for rg, g := range fm.f.RowGroups() {
		for col := range fm.ncol() {
			if err := ctx.Err(); err != nil {
				return err
			}
			if !framedChunk(fm, rg, col) {
				continue
			}
			locs := fm.offsetIndex(rg, col)
			for p := range locs {
				_ = checkPageFrames(fm, rg, col, p, locs[p], pageEnd(locs, p, g.NumRows())-locs[p].FirstRowIndex)
			}
		}
	}
	return nil
}

// framedChunk reports whether a column chunk is read by frames: the file
// has a frame table covering the chunk's pages and the column is flat.
func framedChunk(fm *fileMeta, rg, col int) bool {
	if fm.frames == nil {
		return false
	}
	if _, ok := frameInfo(fm, rg, col); !ok {
		return false
	}
	return fm.frames.Pages(rg, col) == len(fm.offsetIndex(rg, col))
}

// frameInfo is directInfo, with BOOLEAN columns too (their frames hold a
// page's bits: one frame per page).
func frameInfo(fm *fileMeta, rg, col int) (colInfo, bool) {
	if ci, ok := directInfo(fm, rg, col); ok {
		return ci, true
	}
	if col >= len(fm.maxRep) || col >= len(fm.maxDef) || fm.maxRep[col] != 0 || fm.maxDef[col] > 1 {
		return colInfo{}, false
	}
	md := &fm.f.Metadata().RowGroups[rg].Columns[col].MetaData
	if md.Type != format.Boolean {
		return colInfo{}, false
	}
	return colInfo{typ: md.Type, maxDef: fm.maxDef[col], codec: md.Codec, leaf: col}, true
}

// badFrame is the error of a frame table entry that does not fit its page.
func badFrame(format string, args ...any) error {
	return &prepared.FrameTableError{Reason: fmt.Sprintf(format, args...)}
}

// checkPageFrames checks page p's frame table entry against the page's
// location (every frame inside the page, their rows the page's), the first
// time a lookup reaches the page: eachFrame then walks only the frames up
// to the rows it needs, never the rest of a page it has checked.
func checkPageFrames(fm *fileMeta, rg, col, p int, loc format.PageLocation, pageRows int64) error {
	bit := fm.framePages[rg*fm.ncol()+col] + int32(p)
	word, mask := &fm.framesChecked[bit/64], uint64(1)<<(bit%64)
	if word.Load()&mask != 0 {
		return nil
	}
	var c prepared.PageCursor
	if err := fm.frames.Cursor(&c, rg, col, p); err != nil {
		return err
	}
	if c.LevelsOffset+c.LevelsLength > int(loc.CompressedPageSize) {
		return badFrame("levels of row group %d column %d page %d past the page", rg, col, p)
	}
	rows := 0
	var fr prepared.Frame
	for c.Next(&fr) {
		if fr.Offset < c.LevelsOffset+c.LevelsLength || fr.Offset+fr.Size+fr.Copy > int(loc.CompressedPageSize) || fr.Values > fr.Rows {
			return badFrame("frame at %d of %d bytes outside row group %d column %d page %d of %d bytes",
				fr.Offset, fr.Size, rg, col, p, loc.CompressedPageSize)
		}
		if c.Bare && fr.Raw && (fr.Rows != 1 || fr.Values != 1) {
			return badFrame("bare frame of %d rows and %d values in row group %d column %d page %d", fr.Rows, fr.Values, rg, col, p)
		}
		rows += fr.Rows
	}
	if err := c.Err(); err != nil {
		return err
	}
	if int64(rows) != pageRows {
		return badFrame("frames of row group %d column %d page %d hold %d rows, the page %d", rg, col, p, rows, pageRows)
	}
	word.Or(mask)
	return nil
}

// pageEnd is the row after page p of a chunk.
func pageEnd(locs []format.PageLocation, p int, chunkRows int64) int64 {
	if p+1 < len(locs) {
		return locs[p+1].FirstRowIndex
	}
	return chunkRows
}

// pageAt returns the page of locs holding row, searching from page from
// on (row is at or past its first row): a binary search, as a chunk of a
// prepared file has hundreds of pages (a walk from the first page to a
// light key's was most of the plan's time).
func pageAt(locs []format.PageLocation, from int, row int64) int {
	return from + max(sort.Search(len(locs)-from, func(i int) bool { return locs[from+i].FirstRowIndex > row })-1, 0)
}

// eachFrame calls fn for every frame of a chunk holding a row of the runs
// (runs in row order), with its page's entry header and the frame's first
// row in the row group. Each page's frames are decoded from the table as
// the runs reach them, and not past the last run's rows.
func eachFrame(fm *fileMeta, rg, col int, runs []selRun, fn func(loc format.PageLocation, head *prepared.PageHead, fr prepared.Frame, first int64) error) error {
	locs := fm.offsetIndex(rg, col)
	chunkRows := fm.f.RowGroups()[rg].NumRows()
	var (
		c    prepared.PageCursor
		cur  = -1 // the page c walks
		fr   prepared.Frame
		fi   = -1    // fr's index in page cur
		have = false // fr is decoded and not yet passed by a run
		last = [2]int{-1, -1}
	)
	p := 0
	for _, r := range runs {
		p = pageAt(locs, p, r.row)
		end := r.row + r.n
		for j := p; j < len(locs) && locs[j].FirstRowIndex < end; j++ {
			if j != cur {
				if err := checkPageFrames(fm, rg, col, j, locs[j], pageEnd(locs, j, chunkRows)-locs[j].FirstRowIndex); err != nil {
					return err
				}
				if err := fm.frames.Cursor(&c, rg, col, j); err != nil {
					return err
				}
				cur, fi, have = j, -1, false
			}
			for {
				if !have {
					if !c.Next(&fr) {
						break
					}
					fi, have = fi+1, true
				}
				first := locs[j].FirstRowIndex + int64(fr.FirstRow)
				if first >= end {
					break // the frame may hold a later run's rows
				}
				if first+int64(fr.Rows) > r.row && last != [2]int{j, fi} {
					last = [2]int{j, fi} // a frame holding two runs is called once
					if err := fn(locs[j], &c.PageHead, fr, first); err != nil {
						return err
					}
				}
				if first+int64(fr.Rows) > end {
					break // it holds rows after the run too: kept for the next
				}
				have = false
			}
			if err := c.Err(); err != nil {
				return err
			}
		}
	}
	return nil
}

// plannedFrame is a frame holding a selected row of a chunk, as planFrames
// found it in the frame table: decodeFrames walks these instead of decoding
// each page's frame list a second time.
type plannedFrame struct {
	loc    format.PageLocation
	levels [2]int // the page's levels: offset and length in the page
	fr     prepared.Frame
	first  int64 // the frame's first row in the row group
	bare   bool  // the page's raw frames are one value each, without its length
}

// planFrames adds the byte ranges of the frames holding a chunk's selected
// rows: each frame once, and a page's levels where a frame mixes nulls. It
// returns those frames in row order.
func planFrames(w *fileWork, rg, col int, runs []selRun) ([]plannedFrame, error) {
	add := func(r brange) {
		if n := len(w.ranges); n > 0 && w.ranges[n-1] == r {
			return
		}
		w.ranges = append(w.ranges, r)
	}
	var frames []plannedFrame
	err := eachFrame(w.fm, rg, col, runs, func(loc format.PageLocation, pf *prepared.PageHead, fr prepared.Frame, first int64) error {
		if fr.Values > 0 && fr.Values < fr.Rows && pf.LevelsLength > 0 {
			add(brange{loc.Offset + int64(pf.LevelsOffset), loc.Offset + int64(pf.LevelsOffset+pf.LevelsLength)})
		}
		if fr.Size > 0 {
			add(brange{loc.Offset + int64(fr.Offset), loc.Offset + int64(fr.Offset+fr.Size)})
		}
		frames = append(frames, plannedFrame{loc: loc, levels: [2]int{pf.LevelsOffset, pf.LevelsLength}, fr: fr, first: first, bare: pf.Bare})
		return nil
	})
	return frames, err
}

// decodeFrames decodes a framed chunk's selected rows from the prefetched
// frames that planFrames found (c.frames): each frame holding a selected row
// is decompressed once and its PLAIN values cut at the selected rows.
func (c *chunkRead) decodeFrames(ri *RowIndex, ci colInfo) error {
	c.vals, c.starts, c.arena = ri.getVals(c.selected), nil, valueArena{}
	k := 0 // the run being filled
	for i := range c.frames {
		if err := c.decodeFrame(ri, ci, &c.frames[i], &k); err != nil {
			return err
		}
	}
	return nil
}

// decodeFrame decodes one planned frame's selected rows, from run *k on.
func (c *chunkRead) decodeFrame(ri *RowIndex, ci colInfo, pfr *plannedFrame, k *int) error {
	w := c.w
	loc, fr, first := pfr.loc, pfr.fr, pfr.first
	levelsOffset, levelsLength := pfr.levels[0], pfr.levels[1]
	var raw []byte
	if fr.Size > 0 {
		z, ok := w.sp.slice(loc.Offset+int64(fr.Offset), int64(fr.Size))
		if !ok {
			return fmt.Errorf("rowindex: frame at %d not prefetched", loc.Offset+int64(fr.Offset))
		}
		if fr.Raw {
			// A raw block's values (prepared.FrameOptions.RawBlocks):
			// stored as they are, nothing to decompress.
			raw = z
		} else {
			// Into a pooled buffer with the decoder's spare capacity
			// (zstdOverAlloc), given back once the frame's values are
			// out: a fresh buffer of exactly the content size per
			// frame was ≈40 % of a light lookup's allocation on framed
			// files, and took the decoder's bounds-checked loop.
			// Byte-array frames are sized by their header's content
			// size; a frame without one is decoded as before.
			size, known := fr.Values*ci.width, ci.width > 0
			if !known {
				if n, ok := pqrow.ZstdContentSize(z); ok && n <= int64(bufpool.MaxSize) {
					size, known = int(n), true
				}
			}
			var err error
			if known {
				if raw, err = decompressPooled(format.Zstd, z, size); err == nil {
					defer ri.putBuf(raw)
					if len(raw) != size {
						err = fmt.Errorf("%d bytes, its header gives %d", len(raw), size)
					}
				}
			} else {
				raw, err = decompress(format.Zstd, z, 0)
			}
			if err != nil {
				return badFrame("frame at %d of %d bytes: %v", loc.Offset+int64(fr.Offset), fr.Size, err)
			}
		}
		c.m.pages.Add(1)
		c.m.frames.Add(1)
	}
	if ci.width > 0 && len(raw) != fr.Values*ci.width {
		return badFrame("frame of %d values holds %d bytes", fr.Values, len(raw))
	}
	// Two cursors, each moving forward: one counts the defined rows
	// before a row, the other says whether the row is null.
	lc, nullLc := newLevelCursor(nil), newLevelCursor(nil)
	if fr.Values > 0 && fr.Values < fr.Rows {
		lv, ok := w.sp.slice(loc.Offset+int64(levelsOffset), int64(levelsLength))
		if !ok {
			return fmt.Errorf("rowindex: levels at %d not prefetched", loc.Offset+int64(levelsOffset))
		}
		lc, nullLc = newLevelCursor(lv), newLevelCursor(lv)
	}
	pr := plainReader{data: raw, ci: ci}
	base := fr.FirstRow // the frame's first row in its page
	before := 0
	if !lc.none {
		if before = lc.defined(base); before < 0 {
			return badFrame("levels end before row %d", base)
		}
	}
	// The frame's rows that the runs select, runs in row order.
	for ; *k < len(c.runs); *k++ {
		r := c.runs[*k]
		lo, hi := max(r.row, first), min(r.row+r.n, first+int64(fr.Rows))
		if lo >= hi {
			if r.row >= first+int64(fr.Rows) {
				break
			}
			continue
		}
		for row := lo; row < hi; row++ {
			pr0 := base + int(row-first)
			switch {
			case fr.Values == 0 || !lc.none && nullLc.null(pr0):
				c.keep(parquet.Value{}.Level(0, 0, ci.leaf), true, false, false)
			default:
				vi := int(row - first)
				if !lc.none {
					vi = lc.defined(pr0) - before
				}
				var v parquet.Value
				switch {
				case pfr.bare && fr.Raw:
					// One value without its length
					// (DELTA_LENGTH_BYTE_ARRAY): the frame.
					if ci.typ != format.ByteArray {
						return badFrame("bare frame of a %s column", ci.typ)
					}
					v = parquet.ByteArrayValue(raw)
				case ci.typ == format.Boolean:
					if vi/8 >= len(raw) {
						return badFrame("boolean %d past the frame's %d bytes", vi, len(raw))
					}
					v = parquet.BooleanValue(raw[vi/8]>>(vi%8)&1 == 1)
				default:
					var err error
					if v, err = pr.value(vi); err != nil {
						return badFrame("%v", err)
					}
				}
				// Fixed-length byte arrays point into raw (a pooled
				// buffer, or a fetched range given back after the
				// batch): copied out, as on the direct path, unless
				// raw is the fetched range and the values are used up
				// before it is given back (c.borrow).
				owned := ci.width > 0 && ci.typ != format.FixedLenByteArray || c.borrow && fr.Raw
				c.keep(v.Level(0, ci.maxDef, ci.leaf), owned, false, false)
			}
		}
		if r.row+r.n > first+int64(fr.Rows) {
			break // the run goes on in the next frame
		}
	}
	return nil
}
