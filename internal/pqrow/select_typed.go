package pqrow

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding"
	"github.com/parquet-go/parquet-go/format"
)

// This file is the typed form of a selective read (ReadRowsAt): the
// columns planned by PlanTyped are read at chosen rows of a row group into
// one typed vector each, straight from the pages' buffers. A row read
// decodes every value of the wanted rows into a parquet.Value, converts it
// through a function returning an interface value (an allocation each) and
// assembles rows; for a one-key join answered directly from the rows read
// (fileindex's direct answer) that was ≈40 % of its CPU besides ZSTD. The
// vectors hold what the rows would hold, and Box turns a vector into
// interface values a slab at a time.

// Vector is one column's values at the rows a ReadTypedAt call asked for,
// in order. Which Go value each stands for is the row reader's (Box).
type Vector struct {
	name string // the column's Spark type name (TypedColumn.name)
	unit int    // timestamps: the file's unit (unitMillis, ...)
	// ints: integers as the column's type reads them (unsigned INT32
	// widened), dates as days, timestamps as the file's raw INT64 value.
	ints []int64
	strs []string // strings, in a per-read arena
	null []bool   // nil: no value is null
}

// Len returns the number of rows.
func (v *Vector) Len() int {
	if v.strs != nil {
		return len(v.strs)
	}
	return len(v.ints)
}

// IsNull reports whether row k's value is null.
func (v *Vector) IsNull(k int) bool { return v.null != nil && v.null[k] }

// Int returns row k's value of an integer column (byte, short, integer,
// long), ok false for other columns or a null.
func (v *Vector) Int(k int) (int64, bool) {
	switch v.name {
	case "byte", "short", "integer", "long":
		return v.ints[k], !v.IsNull(k)
	}
	return 0, false
}

// Str returns row k's value of a string column, ok false for other
// columns or a null.
func (v *Vector) Str(k int) (string, bool) {
	if v.name != "string" {
		return "", false
	}
	return v.strs[k], !v.IsNull(k)
}

// Box stores each row's value, as the row reader returns it (int8, int16,
// int32, int64, string, time.Time in UTC; nil for a null), at
// dst[off+k*stride]: the rows' slab of a result whose rows are stride
// values wide, this column at position off.
func (v *Vector) Box(dst []any, stride, off int) {
	switch v.name {
	case "long":
		boxEach(dst, stride, off, v.ints, v.null)
	case "integer":
		boxEach(dst, stride, off, narrow[int32](v.ints), v.null)
	case "short":
		boxEach(dst, stride, off, narrow[int16](v.ints), v.null)
	case "byte":
		boxEach(dst, stride, off, narrow[int8](v.ints), v.null)
	case "string":
		boxEach(dst, stride, off, v.strs, v.null)
	case "date":
		ts := make([]time.Time, len(v.ints))
		for k, d := range v.ints {
			ts[k] = DateFromDays(int32(d))
		}
		boxEach(dst, stride, off, ts, v.null)
	default: // timestamps
		ts := make([]time.Time, len(v.ints))
		for k, x := range v.ints {
			ts[k] = unixTime(x, v.unit)
		}
		boxEach(dst, stride, off, ts, v.null)
	}
}

func narrow[T int8 | int16 | int32](ints []int64) []T {
	out := make([]T, len(ints))
	for k, x := range ints {
		out[k] = T(x)
	}
	return out
}

// ReadTypedAt reads the columns cols (from PlanTyped) at the given
// ascending rows of row group rg, as ReadRowsAt reads them: only the pages
// holding those rows, prefetched in coalesced ranges, and only those rows'
// values converted (a value that does not fit its column's type fails the
// read only where its row is wanted). It returns false, having read
// nothing, when a column chunk has no offset index (the caller reads rows
// instead).
func (f *File) ReadTypedAt(ctx context.Context, cols []TypedColumn, rg int, rows []int64) (out []Vector, ok bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, ok, err = nil, false, recovered(p)
		}
	}()
	groups := f.pf.RowGroups()
	if rg < 0 || rg >= len(groups) {
		return nil, false, fmt.Errorf("pqrow: row group %d out of range [0,%d)", rg, len(groups))
	}
	g := groups[rg]
	numRows := g.NumRows()
	for k, r := range rows {
		if r < 0 || r >= numRows || k > 0 && r <= rows[k-1] {
			return nil, false, fmt.Errorf("pqrow: row %d out of order or range [0,%d)", r, numRows)
		}
	}
	chunks := g.ColumnChunks()
	reads := make([]typedRead, len(cols))
	var want []byteSpan
	for i := range cols {
		c := &cols[i]
		if c.node == nil || len(rows) == 0 {
			continue
		}
		if c.node.col >= len(chunks) {
			return nil, false, fmt.Errorf("%w: missing column chunk %d", ErrCorrupt, c.node.col)
		}
		fcc, isFile := chunks[c.node.col].(*parquet.FileColumnChunk)
		if !isFile {
			return nil, false, nil
		}
		oi, err := offsetIndex(fcc, f.r)
		if err != nil || oi.NumPages() == 0 {
			return nil, false, nil
		}
		rd := typedRead{fcc: fcc, oi: oi, numRows: numRows}
		p, np := -1, oi.NumPages()
		for _, r := range rows {
			if p < 0 {
				p = pageOfRow(oi, r)
			}
			for p+1 < np && oi.FirstRowIndex(p+1) <= r {
				p++
			}
			if len(rd.pages) == 0 || rd.pages[len(rd.pages)-1] != p {
				rd.pages = append(rd.pages, p)
			}
		}
		if rd.pages[0] < 0 {
			return nil, false, colErr(c.path, ErrCorrupt, "offset index starts at row %d", oi.FirstRowIndex(0))
		}
		want = append(want, pageSpans(oi, rd.pages, f.chunkStart(rg, c.node.col))...)
		reads[i] = rd
	}
	var sr *spanReader
	if len(want) > 0 {
		if sr, err = prefetchPooled(f.r, want); err != nil {
			return nil, false, corrupt(err)
		}
		defer sr.release()
	}
	arena := &stringArena{}
	out = make([]Vector, len(cols))
	for i := range cols {
		if err := ctx.Err(); err != nil {
			return nil, false, err
		}
		c := &cols[i]
		v := &out[i]
		v.name, v.unit = c.name, c.conv.unit
		if c.Kind == TypedBytes {
			v.strs = make([]string, len(rows))
		} else {
			v.ints = make([]int64, len(rows))
		}
		if c.node == nil {
			v.null = make([]bool, len(rows))
			for k := range v.null {
				v.null[k] = true
			}
			continue
		}
		if len(rows) == 0 {
			continue
		}
		if err := reads[i].read(c, sr, rows, v, arena); err != nil {
			return nil, false, err
		}
	}
	return out, true, nil
}

// pageOfRow returns the offset-index page holding row r (-1: before the
// first page).
func pageOfRow(oi parquet.OffsetIndex, r int64) int {
	lo, hi := 0, oi.NumPages()
	for lo < hi {
		m := (lo + hi) / 2
		if oi.FirstRowIndex(m) <= r {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo - 1
}

// typedRead is one column chunk's part of a ReadTypedAt: the pages
// holding the wanted rows.
type typedRead struct {
	fcc     *parquet.FileColumnChunk
	oi      parquet.OffsetIndex
	pages   []int
	numRows int64
}

// read fills v with the column's values at rows, page by page.
func (rd *typedRead) read(c *TypedColumn, sr *spanReader, rows []int64, v *Vector, arena *stringArena) error {
	pages := GuardPages(rd.fcc, sr)
	defer pages.Close()
	maxDef := byte(c.node.def)
	var ps pageStrings
	k, prev := 0, -2
	for _, p := range rd.pages {
		first, end := rd.oi.FirstRowIndex(p), rd.numRows
		if p+1 < rd.oi.NumPages() {
			end = rd.oi.FirstRowIndex(p + 1)
		}
		if p != prev+1 {
			if err := pages.SeekToRow(first); err != nil {
				return readErr(c.path, err)
			}
		}
		prev = p
		page, err := pages.ReadPage()
		if errors.Is(err, io.EOF) {
			return colErr(c.path, ErrCorrupt, "column chunk ends before page %d", p)
		}
		if err != nil {
			return readErr(c.path, err)
		}
		k, err = pick(c, page, maxDef, first, end, rows, k, v, arena, &ps)
		parquet.Release(page)
		if err != nil {
			return err
		}
	}
	if k != len(rows) {
		return colErr(c.path, ErrCorrupt, "pages end before row %d", rows[k])
	}
	return nil
}

// pick stores the values of rows[k:] that lie in page (rows [first, end)
// of the chunk) in v, and returns the index of the first row past it.
//
// String values are copied out of the page (whose buffers go back to
// parquet-go's pool) once every row of the page is known: see
// pageStrings.
func pick(c *TypedColumn, page parquet.Page, maxDef byte, first, end int64, rows []int64, k int, v *Vector, arena *stringArena, ps *pageStrings) (int, error) {
	nv := page.NumValues()
	if nv != end-first || page.NumRows() != nv {
		return k, colErr(c.path, ErrCorrupt, "page holds %d values in %d rows, its offset index %d rows", nv, page.NumRows(), end-first)
	}
	defs := page.DefinitionLevels()
	if len(defs) > 0 && int64(len(defs)) != nv {
		return k, colErr(c.path, ErrCorrupt, "page has %d definition levels for %d values", len(defs), nv)
	}
	if len(defs) == 0 && maxDef > 0 {
		return k, colErr(c.path, ErrCorrupt, "page of an optional column without definition levels")
	}
	vals := page.Data()
	var index []int32
	if dict := page.Dictionary(); dict != nil {
		index = vals.Int32()
		vals = dict.Page().Data()
	}
	var data []byte
	var offsets []uint32
	var i32 []int32
	var i64 []int64
	var n int // values present
	switch c.conv.phys {
	case format.ByteArray:
		if vals.Kind() != encoding.ByteArray {
			return k, colErr(c.path, ErrCorrupt, "byte-array column with %v values", vals.Kind())
		}
		data, offsets = vals.ByteArray()
		n = max(len(offsets)-1, 0)
	case format.Int32:
		if vals.Kind() != encoding.Int32 {
			return k, colErr(c.path, ErrCorrupt, "INT32 column with %v values", vals.Kind())
		}
		i32 = vals.Int32()
		n = len(i32)
	case format.Int64:
		if vals.Kind() != encoding.Int64 {
			return k, colErr(c.path, ErrCorrupt, "INT64 column with %v values", vals.Kind())
		}
		i64 = vals.Int64()
		n = len(i64)
	default:
		return k, colErr(c.path, ErrCorrupt, "unexpected physical type %v", c.conv.phys)
	}
	present := int(nv)
	if index != nil {
		present = len(index)
	}
	if index == nil && len(defs) == 0 && n != present {
		return k, colErr(c.path, ErrCorrupt, "page has %d values for %d rows", n, nv)
	}
	pos, vi := 0, 0 // defs[:pos] hold vi present values
	strs := c.conv.phys == format.ByteArray
	k0 := k
	for ; k < len(rows) && rows[k] < end; k++ {
		at := int(rows[k] - first)
		j := at
		if len(defs) > 0 {
			for ; pos < at; pos++ {
				if defs[pos] == maxDef {
					vi++
				}
			}
			if defs[at] != maxDef {
				if v.null == nil {
					v.null = make([]bool, len(rows))
				}
				v.null[k] = true
				if strs {
					ps.at = append(ps.at, -1)
				}
				continue
			}
			j = vi
		}
		if index != nil {
			if j >= len(index) {
				return k, colErr(c.path, ErrCorrupt, "page has %d values, fewer than its defined rows", len(index))
			}
			j = int(index[j])
		}
		if j < 0 || j >= n {
			return k, colErr(c.path, ErrCorrupt, "value %d out of range [0,%d)", j, n)
		}
		switch c.conv.phys {
		case format.ByteArray:
			ps.at = append(ps.at, int32(j))
		case format.Int32:
			x, err := c.conv.int32(i32[j])
			if err != nil {
				return k, colErr(c.path, ErrSchemaMismatch, "%v", err)
			}
			v.ints[k] = x
		default:
			v.ints[k] = i64[j]
		}
	}
	if strs {
		ps.copy(v.strs[k0:k], data, offsets, arena)
	}
	return k, nil
}

// pageStrings gathers the wanted string values of one page, then copies
// them out of it. A row index's rows of a key are mostly consecutive (a
// lake sorted or bucketed by the key), and so are their values in a plain
// or delta-length page: the span from the first wanted value's bytes to
// the last one's is then copied once, and each value is a slice of that
// copy, instead of a copy each. Where the wanted values are spread (less
// than half the span is theirs, e.g. dictionary pages), each is copied
// into the read's arena, so that a few values never keep a page's worth
// of bytes alive.
type pageStrings struct {
	// at lists, per wanted row of the page in order, its value's index in
	// the page's values (or dictionary), -1 for a null.
	at []int32
}

// copy sets dst[i] to value at[i] of the page (data, offsets), leaving
// nulls alone, and empties at.
func (ps *pageStrings) copy(dst []string, data []byte, offsets []uint32, arena *stringArena) {
	defer func() { ps.at = ps.at[:0] }()
	lo, hi, want := uint32(math.MaxUint32), uint32(0), 0
	for _, j := range ps.at {
		if j >= 0 {
			a, b := offsets[j], offsets[j+1]
			lo, hi = min(lo, a), max(hi, b)
			want += int(b - a)
		}
	}
	if want == 0 {
		return // nulls and empty strings only: dst holds them already
	}
	if span := int(hi - lo); span > 2*want {
		for i, j := range ps.at {
			if j >= 0 {
				dst[i] = arena.string(data[offsets[j]:offsets[j+1]])
			}
		}
		return
	}
	s := string(data[lo:hi])
	for i, j := range ps.at {
		if j >= 0 {
			dst[i] = s[offsets[j]-lo : offsets[j+1]-lo]
		}
	}
}

// int32 converts a physical INT32 value as the row reader does, or fails
// for one outside the column's type.
func (cv *intConv) int32(v int32) (int64, error) {
	x := int64(v)
	if cv.unsigned {
		x = int64(uint32(v))
	}
	if cv.lo != cv.hi && (x < cv.lo || x > cv.hi) {
		return 0, fmt.Errorf("value %d does not fit the column's type", x)
	}
	return x, nil
}
