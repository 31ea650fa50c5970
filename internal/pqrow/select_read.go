package pqrow

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/ariadne-go/ariadne/schema"
	"github.com/parquet-go/parquet-go"
)

// ReadRowsAt reads the rows at the given ascending indexes of row group rg
// as values of st, as Rows would return them. Each column seeks to the page
// holding the next wanted row (through the offset index when the file has
// one; otherwise it reads on from where it is), so only the pages holding
// those rows are fetched and decoded, and values are converted only for
// those rows.
func (f *File) ReadRowsAt(ctx context.Context, st *schema.Struct, opts ReadOptions, rg int, rows []int64) ([]Row, error) {
	return f.readRowsAt(ctx, st, opts, rg, rows, "", nil)
}

// ReadMatch reads m's rows as ReadRowsAt does, except that the field
// named keyField, the one MatchRows matched, is taken from m.Keys instead
// of being read and converted a second time.
func (f *File) ReadMatch(ctx context.Context, st *schema.Struct, opts ReadOptions, m Match, keyField string) ([]Row, error) {
	if len(m.Keys) != len(m.Rows) {
		keyField = ""
	}
	return f.readRowsAt(ctx, st, opts, m.RowGroup, m.Rows, keyField, m.Keys)
}

func (f *File) readRowsAt(ctx context.Context, st *schema.Struct, opts ReadOptions, rg int, rows []int64, keyField string, keys []any) (out []Row, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, recovered(p)
		}
	}()
	groups := f.pf.RowGroups()
	if rg < 0 || rg >= len(groups) {
		return nil, fmt.Errorf("pqrow: row group %d out of range [0,%d)", rg, len(groups))
	}
	g := groups[rg]
	pl := &planner{byID: opts.ByFieldID, strings: &stringArena{}}
	fields := make([]*rnode, len(st.Fields))
	fill := -1
	for i, fd := range st.Fields {
		if keyField != "" && fd.Name == keyField {
			fill = i
			continue
		}
		c := pl.findChild(f.root, fd)
		if c == nil {
			continue
		}
		r, err := pl.planField(fd.Type, c, []string{fd.Name})
		if err != nil {
			return nil, err
		}
		fields[i] = r
	}
	chunks := g.ColumnChunks()
	curs := make([]*seekCursor, len(pl.cols))
	var sr *spanReader // the prefetched pages, pooled
	defer func() {
		for _, c := range curs {
			if c != nil {
				c.close()
			}
		}
		if sr != nil {
			sr.release()
		}
	}()
	var want []byteSpan
	for i, c := range pl.cols {
		if c.node.col >= len(chunks) {
			return nil, fmt.Errorf("%w: missing column chunk %d", ErrCorrupt, c.node.col)
		}
		curs[i] = newSeekCursor(chunks[c.node.col], f.r, c.conv, c.node.def, c.node.rep, c.node.path)
		if len(rows) > 0 {
			curs[i].last = rows[len(rows)-1]
		}
		if oi := curs[i].oi; oi != nil {
			// Rows ascend: the first row's page by binary search, the
			// others by walking on from it.
			var pages []int
			p, np := -1, oi.NumPages()
			for _, r := range rows {
				if p < 0 {
					p = curs[i].pageOf(r)
				}
				for p+1 < np && oi.FirstRowIndex(p+1) <= r {
					p++
				}
				if len(pages) == 0 || pages[len(pages)-1] != p {
					pages = append(pages, p)
				}
			}
			want = append(want, pageSpans(oi, pages, f.chunkStart(rg, c.node.col))...)
		}
	}
	if len(want) > 0 && len(rows) > 0 {
		var err error
		if sr, err = prefetchPooled(f.r, want); err != nil {
			sr = nil
			return nil, corrupt(err)
		}
		for _, c := range curs {
			c.reader, c.sr = sr, true
		}
	}
	entries := make([][]entry, len(pl.cols))
	out = make([]Row, 0, len(rows))
	// One backing array for every row: one allocation instead of one a row.
	backing := make([]any, len(rows)*len(fields))
	for k, r := range rows {
		if r < 0 || r >= g.NumRows() || k > 0 && r <= rows[k-1] {
			return nil, fmt.Errorf("pqrow: row %d out of order or range [0,%d)", r, g.NumRows())
		}
		if k%rowsPerContextCheck == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		for i, c := range curs {
			if err := c.skipTo(r); err != nil {
				return nil, err
			}
			if entries[i], err = c.nextRow(entries[i][:0]); err != nil {
				return nil, err
			}
		}
		row := Row(backing[k*len(fields) : (k+1)*len(fields) : (k+1)*len(fields)])
		if fill >= 0 {
			row[fill] = keys[k]
		}
		for i, fr := range fields {
			if fr == nil {
				continue
			}
			if row[i], err = fr.decode(entries[fr.first:fr.last]); err != nil {
				return nil, err
			}
		}
		out = append(out, row)
	}
	return out, nil
}

// seekCursor reads one column chunk at chosen rows. It keeps the current
// page's values undecoded (byte arrays point into the page, which it
// retains) and converts only the rows it returns.
type seekCursor struct {
	chunk  parquet.ColumnChunk
	reader io.ReaderAt // the pages' reader: the File's r, or prefetched spans of it
	pages  parquet.Pages
	sr     bool                // reader is prefetched spans (guarded per chunk)
	oi     parquet.OffsetIndex // nil: no offset index, read forward only
	conv   leafConv
	maxDef int
	maxRep int
	path   []string

	page    parquet.Page
	vals    []parquet.Value
	pos     int
	row     int64 // rows started before vals[pos]
	pageIdx int   // offset-index position of the current page
	// last is the last row to be read (-1: unknown): a flat column's page
	// is decoded only up to it (see refill).
	last    int64
	started bool
	eof     bool
}

func newSeekCursor(cc parquet.ColumnChunk, r io.ReaderAt, conv leafConv, maxDef, maxRep int, path []string) *seekCursor {
	c := &seekCursor{chunk: cc, reader: r, conv: conv, maxDef: maxDef, maxRep: maxRep, path: path, pageIdx: -1, last: -1}
	if fcc, ok := cc.(*parquet.FileColumnChunk); ok {
		if oi, err := offsetIndex(fcc, r); err == nil && oi.NumPages() > 0 {
			c.oi = oi
		}
	}
	return c
}

// pageOf returns the offset-index page holding row r.
func (c *seekCursor) pageOf(r int64) int {
	lo, hi := 0, c.oi.NumPages()
	for lo < hi {
		m := (lo + hi) / 2
		if c.oi.FirstRowIndex(m) <= r {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo - 1
}

// skipTo positions the cursor at the first value of row target (≥ the
// current row).
func (c *seekCursor) skipTo(target int64) error {
	if !c.started || c.oi != nil && c.pastPage(target) {
		if err := c.seek(target); err != nil {
			return err
		}
	}
	for {
		if c.pos == len(c.vals) {
			if c.eof {
				return colErr(c.path, ErrCorrupt, "column chunk has fewer rows than its row group")
			}
			if err := c.refill(); err != nil {
				return err
			}
			continue
		}
		if c.maxRep == 0 {
			// A flat column holds one value a row: jump to the target
			// or past this page's values.
			if d := target - c.row; d < int64(len(c.vals)-c.pos) {
				c.pos += int(d)
				c.row = target
				return nil
			}
			c.row += int64(len(c.vals) - c.pos)
			c.pos = len(c.vals)
			continue
		}
		if c.vals[c.pos].RepetitionLevel() == 0 {
			if c.row == target {
				return nil
			}
			c.row++
		}
		c.pos++
	}
}

// pastPage reports whether row target lies in a later page than the
// current one (pageOf(target) > c.pageIdx), looking at the next page's
// first row only.
func (c *seekCursor) pastPage(target int64) bool {
	next := c.pageIdx + 1
	if next <= 0 {
		return c.pageOf(target) > c.pageIdx
	}
	if next >= c.oi.NumPages() {
		return false
	}
	return c.oi.FirstRowIndex(next) <= target
}

func (c *seekCursor) seek(target int64) error {
	if c.pages == nil {
		if fcc, ok := c.chunk.(*parquet.FileColumnChunk); ok && c.sr {
			c.pages = GuardPages(fcc, c.reader)
		} else {
			c.pages = pagesOf(c.chunk, c.reader)
		}
	}
	if err := c.pages.SeekToRow(target); err != nil {
		return readErr(c.path, err)
	}
	c.release()
	c.vals, c.pos, c.row, c.eof, c.started = c.vals[:0], 0, target, false, true
	if c.oi != nil {
		c.pageIdx = c.pageOf(target) - 1 // refill moves to the target page
	}
	return nil
}

func (c *seekCursor) release() {
	if c.page != nil {
		parquet.Release(c.page)
		c.page = nil
	}
}

// refill replaces the current page by the next one.
func (c *seekCursor) refill() error {
	c.release()
	c.vals, c.pos = c.vals[:0], 0
	page, err := c.pages.ReadPage()
	if errors.Is(err, io.EOF) {
		c.eof = true
		return nil
	}
	if err != nil {
		return readErr(c.path, err)
	}
	c.page = page
	c.pageIdx++
	n := int(page.NumValues())
	if c.maxRep == 0 && c.oi != nil && c.last >= 0 && c.pageIdx >= 0 && c.pageIdx < c.oi.NumPages() && int64(n) == page.NumRows() {
		// A flat column holds one value a row: values past the last row
		// wanted are never looked at, so they are not decoded (a hot
		// key's run ends mid-page).
		if need := c.last - c.oi.FirstRowIndex(c.pageIdx) + 1; need > 0 && need < int64(n) {
			n = int(need)
		}
	}
	if cap(c.vals) < n {
		c.putVals()
		if p, _ := valuePool.Get().(*[]parquet.Value); p != nil && cap(*p) >= n {
			c.vals = *p
		} else {
			c.vals = make([]parquet.Value, n)
		}
	}
	c.vals = c.vals[:n]
	got := 0
	vr := page.Values()
	for got < n {
		k, err := vr.ReadValues(c.vals[got:])
		got += k
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return readErr(c.path, err)
		}
		if k == 0 {
			return colErr(c.path, ErrCorrupt, "page yields no values")
		}
	}
	c.vals = c.vals[:got]
	return nil
}

// nextRow appends the converted entries of the row at the cursor to dst.
func (c *seekCursor) nextRow(dst []entry) ([]entry, error) {
	for {
		if c.pos == len(c.vals) && len(dst) > 0 && (c.maxRep == 0 || c.oi != nil) {
			// The row is complete: a flat column has one value a row, and
			// with an offset index pages start at row boundaries. Not
			// looking at the next page keeps reads inside the prefetched
			// pages.
			return dst, nil
		}
		if c.pos == len(c.vals) {
			if c.eof {
				if len(dst) == 0 {
					return nil, colErr(c.path, ErrCorrupt, "column chunk has fewer rows than its row group")
				}
				return dst, nil
			}
			if err := c.refill(); err != nil {
				return nil, err
			}
			continue
		}
		v := c.vals[c.pos]
		if v.RepetitionLevel() == 0 {
			if len(dst) > 0 {
				return dst, nil
			}
			c.row++
		} else if len(dst) == 0 {
			return nil, colErr(c.path, ErrCorrupt, "row starts with repetition level %d", v.RepetitionLevel())
		}
		e := entry{rep: int32(v.RepetitionLevel()), def: int32(v.DefinitionLevel())}
		if int(e.def) > c.maxDef || e.def < 0 {
			return nil, colErr(c.path, ErrCorrupt, "definition level %d above maximum %d", e.def, c.maxDef)
		}
		if int(e.def) == c.maxDef && c.conv != nil && !v.IsNull() {
			var cerr error
			if e.v, cerr = c.conv(v); cerr != nil {
				e.v = convError{cerr}
			}
		}
		dst = append(dst, e)
		c.pos++
	}
}

// valuePool recycles the cursors' page-sized value buffers (a page of
// 64 KiB holds up to ~8 K values, 200 KB of parquet.Value): a join opens
// a cursor per column per matching row group.
var valuePool sync.Pool

func (c *seekCursor) putVals() {
	if cap(c.vals) > 0 {
		v := c.vals[:0]
		valuePool.Put(&v)
		c.vals = nil
	}
}

func (c *seekCursor) close() {
	c.release()
	c.putVals()
	if c.pages != nil {
		c.pages.Close()
	}
}
