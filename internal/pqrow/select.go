package pqrow

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/ariadne-go/ariadne/schema"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// This file is the selective side of the reader (late materialization): a
// key column is scanned first, skipping row groups by their statistics and
// bloom filters and pages by the column index, and the other columns are
// then decoded only for the matching rows, seeking to their pages through
// the offset index. Page indexes and bloom filters are read lazily, one
// ranged read per column chunk that needs them.

// KeySet is the set of values MatchRows looks for: integers (any width,
// compared as int64) or strings, never both.
type KeySet struct {
	ints map[int64]struct{}
	strs map[string]struct{}
	// sorted copies, for range tests against statistics
	sortedInts []int64
	sortedStrs []string
}

// NewKeySet returns the set of keys, which must all be integers (int8 to
// int64, int) or all strings; nil keys are ignored (a null never matches).
func NewKeySet(keys []any) (*KeySet, error) {
	ks := &KeySet{ints: map[int64]struct{}{}, strs: map[string]struct{}{}}
	for _, k := range keys {
		switch k := k.(type) {
		case nil:
		case string:
			ks.strs[k] = struct{}{}
		default:
			i, ok := AsInt64(k)
			if !ok {
				return nil, fmt.Errorf("pqrow: key %v (%T) is neither an integer nor a string", k, k)
			}
			ks.ints[i] = struct{}{}
		}
	}
	if len(ks.ints) > 0 && len(ks.strs) > 0 {
		return nil, errors.New("pqrow: a key set mixes integers and strings")
	}
	for k := range ks.ints {
		ks.sortedInts = append(ks.sortedInts, k)
	}
	for k := range ks.strs {
		ks.sortedStrs = append(ks.sortedStrs, k)
	}
	slices.Sort(ks.sortedInts)
	slices.Sort(ks.sortedStrs)
	return ks, nil
}

// Len returns the number of distinct keys.
func (ks *KeySet) Len() int { return len(ks.ints) + len(ks.strs) }

// ScanStats counts what MatchRows read and skipped. Pages are counted only
// where a column index lists them.
type ScanStats struct {
	RowGroups, RowGroupsSkipped int
	Pages, PagesSkipped         int
	RowsScanned, RowsMatched    int64
}

// Add adds o to s.
func (s *ScanStats) Add(o ScanStats) {
	s.RowGroups += o.RowGroups
	s.RowGroupsSkipped += o.RowGroupsSkipped
	s.Pages += o.Pages
	s.PagesSkipped += o.PagesSkipped
	s.RowsScanned += o.RowsScanned
	s.RowsMatched += o.RowsMatched
}

// Match is the rows of one row group whose key is in the set: row indexes
// within the row group, ascending.
type Match struct {
	RowGroup int
	Rows     []int64
	// Keys holds each matching row's key, converted as Rows converts it:
	// ReadMatch fills the key column from it instead of reading it again.
	Keys []any
}

// keyColumn is how one key column compares with a KeySet.
type keyColumn struct {
	field string
	col   int
	conv  leafConv
	// phys: values compare as physical INT32/INT64 (signed) or byte arrays
	// exactly as conv would convert them, so statistics, page indexes and
	// bloom filters can prune and rows match without converting.
	phys    format.Type
	usePhys bool
	maxDef  int
}

// MatchRows scans the top-level primitive field f of every row group and
// returns, per row group that has any, the rows whose value is one of the
// keys (after the same conversion Rows applies). Row groups whose
// statistics or bloom filter exclude every key, and pages whose column
// index does, are not read. A field missing from the file matches nothing.
// Statistics are added to st.
func (f *File) MatchRows(ctx context.Context, fd schema.Field, opts ReadOptions, keys *KeySet, st *ScanStats) (out []Match, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, recovered(p)
		}
	}()
	pl := &planner{byID: opts.ByFieldID}
	n := pl.findChild(f.root, fd)
	groups := f.pf.RowGroups()
	st.RowGroups += len(groups)
	if n == nil || keys.Len() == 0 {
		st.RowGroupsSkipped += len(groups)
		return nil, nil
	}
	if !n.leaf() || n.repeated() {
		return nil, colErr([]string{fd.Name}, ErrSchemaMismatch, "a key column must be a primitive column, not %s", describe(n))
	}
	conv, err := leafConverter(fd.Type, n, []string{fd.Name})
	if err != nil {
		return nil, err
	}
	kc := &keyColumn{field: fd.Name, col: n.col, conv: conv, maxDef: n.def}
	pt, _ := n.el.Type.Get()
	switch {
	case len(keys.ints) > 0 && (pt == format.Int32 || pt == format.Int64) && !isUnsigned(n) && integral(fd.Type):
		kc.phys, kc.usePhys = pt, true
	case len(keys.strs) > 0 && pt == format.ByteArray && fd.Type == schema.String:
		kc.phys, kc.usePhys = pt, true
	}
	for gi, g := range groups {
		rows, vals, err := f.matchGroup(ctx, gi, g, kc, keys, len(groups), st)
		if err != nil {
			return nil, err
		}
		if len(rows) > 0 {
			out = append(out, Match{RowGroup: gi, Rows: rows, Keys: vals})
		}
	}
	return out, nil
}

// bloomProbeLimit is the most keys probed in a bloom filter per row group:
// past it the probes cost more than the read they may save.
const bloomProbeLimit = 64

func (f *File) matchGroup(ctx context.Context, gi int, g parquet.RowGroup, kc *keyColumn, keys *KeySet, groups int, st *ScanStats) (match []int64, vals []any, err error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	chunks := g.ColumnChunks()
	if kc.col >= len(chunks) {
		return nil, nil, fmt.Errorf("%w: missing column chunk %d", ErrCorrupt, kc.col)
	}
	cc := chunks[kc.col]
	numRows := g.NumRows()
	fcc, isFile := cc.(*parquet.FileColumnChunk)
	if kc.usePhys && isFile {
		if lo, hi, ok := fcc.Bounds(); ok && !keys.anyIn(kc.phys, lo, hi) {
			st.RowGroupsSkipped++
			return nil, nil, nil
		}
		// A located file holds some key, so its only row group does too:
		// the bloom filter is worth its read only among several groups.
		if groups > 1 && keys.Len() <= bloomProbeLimit {
			if bf := cc.BloomFilter(); bf != nil && !keys.anyInBloom(kc.phys, bf) {
				st.RowGroupsSkipped++
				return nil, nil, nil
			}
		}
	}
	type span struct{ first, end int64 }
	spans := []span{{0, numRows}}
	var pages parquet.Pages
	if isFile {
		var oi parquet.OffsetIndex
		var ci parquet.ColumnIndex
		var err1, err2 error
		oi, err2 = fcc.OffsetIndex()
		if kc.usePhys {
			ci, err1 = fcc.ColumnIndex()
		}
		var want []int
		if kc.usePhys && err1 == nil && err2 == nil && ci.NumPages() == oi.NumPages() {
			spans = spans[:0]
			st.Pages += ci.NumPages()
			for p := range ci.NumPages() {
				if ci.NullPage(p) || !keys.anyIn(kc.phys, ci.MinValue(p), ci.MaxValue(p)) {
					st.PagesSkipped++
					continue
				}
				want = append(want, p)
				first, end := oi.FirstRowIndex(p), numRows
				if p+1 < oi.NumPages() {
					end = oi.FirstRowIndex(p + 1)
				}
				if k := len(spans); k > 0 && spans[k-1].end == first {
					spans[k-1].end = end
				} else {
					spans = append(spans, span{first, end})
				}
			}
		} else if err2 == nil {
			for p := range oi.NumPages() {
				want = append(want, p)
			}
		}
		if err2 == nil && oi.NumPages() > 0 {
			if len(want) == 0 {
				return nil, nil, nil
			}
			sr, err := prefetch(f.pf, pageSpans(oi, want, f.chunkStart(gi, kc.col)))
			if err != nil {
				return nil, nil, colErr([]string{kc.name()}, ErrCorrupt, "%v", err)
			}
			pages = fcc.PagesFrom(sr)
		}
	}
	if pages == nil {
		pages = cc.Pages()
	}
	defer pages.Close()
	buf := make([]parquet.Value, valueBatch)
	for _, s := range spans {
		if err := pages.SeekToRow(s.first); err != nil {
			return nil, nil, colErr([]string{kc.name()}, ErrCorrupt, "%v", err)
		}
		row := s.first
		for row < s.end {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
			page, err := pages.ReadPage()
			if errors.Is(err, io.EOF) {
				return nil, nil, fmt.Errorf("%w: key column has %d rows, its row group %d", ErrCorrupt, row, numRows)
			}
			if err != nil {
				return nil, nil, colErr([]string{kc.name()}, ErrCorrupt, "%v", err)
			}
			vr := page.Values()
			for row < s.end {
				k, rerr := vr.ReadValues(buf)
				for _, v := range buf[:k] {
					if row >= s.end {
						break
					}
					if int(v.DefinitionLevel()) == kc.maxDef && !v.IsNull() {
						if x, ok := kc.match(v, keys); ok {
							match = append(match, row)
							vals = append(vals, x)
						}
					}
					row++
				}
				if errors.Is(rerr, io.EOF) || k == 0 && rerr == nil {
					break
				}
				if rerr != nil {
					parquet.Release(page)
					return nil, nil, colErr([]string{kc.name()}, ErrCorrupt, "%v", rerr)
				}
			}
			parquet.Release(page)
		}
		st.RowsScanned += s.end - s.first
	}
	st.RowsMatched += int64(len(match))
	return match, vals, nil
}

// chunkStart is the offset of a column chunk's first page (its
// dictionary, when it has one).
func (f *File) chunkStart(rg, col int) int64 {
	m := f.pf.Metadata().RowGroups[rg].Columns[col].MetaData
	if m.DictionaryPageOffset > 0 && m.DictionaryPageOffset < m.DataPageOffset {
		return m.DictionaryPageOffset
	}
	return m.DataPageOffset
}

// integral reports whether t is one of Spark's integer types.
func integral(t schema.Type) bool {
	return t == schema.Byte || t == schema.Short || t == schema.Integer || t == schema.Long
}

func (kc *keyColumn) name() string { return kc.field }

// match reports whether the non-null value v is a key, and returns it
// converted as Rows would.
func (kc *keyColumn) match(v parquet.Value, keys *KeySet) (any, bool) {
	if kc.usePhys {
		var ok bool
		switch kc.phys {
		case format.Int32:
			_, ok = keys.ints[int64(v.Int32())]
		case format.Int64:
			_, ok = keys.ints[v.Int64()]
		default:
			_, ok = keys.strs[string(v.ByteArray())]
		}
		if !ok {
			return nil, false
		}
	}
	x, err := kc.conv(v)
	if err != nil {
		// Not a value of the column's type: it cannot equal a key.
		return nil, false
	}
	if kc.usePhys {
		return x, true
	}
	switch k := x.(type) {
	case string:
		_, ok := keys.strs[k]
		return x, ok
	default:
		if i, ok := AsInt64(x); ok {
			_, ok = keys.ints[i]
			return x, ok
		}
	}
	return nil, false
}

// anyIn reports whether some key lies in [lo, hi] (physical values of type
// t); true when the bounds are unusable.
func (ks *KeySet) anyIn(t format.Type, lo, hi parquet.Value) bool {
	if lo.IsNull() || hi.IsNull() {
		return true
	}
	switch t {
	case format.Int32, format.Int64:
		var l, h int64
		if t == format.Int32 {
			l, h = int64(lo.Int32()), int64(hi.Int32())
		} else {
			l, h = lo.Int64(), hi.Int64()
		}
		i, _ := slices.BinarySearch(ks.sortedInts, l)
		return i < len(ks.sortedInts) && ks.sortedInts[i] <= h
	case format.ByteArray:
		// Byte-wise order, as the Parquet spec orders UTF-8 strings;
		// truncated bounds still bound.
		l, h := string(lo.ByteArray()), string(hi.ByteArray())
		i, _ := slices.BinarySearch(ks.sortedStrs, l)
		return i < len(ks.sortedStrs) && strings.Compare(ks.sortedStrs[i], h) <= 0
	}
	return true
}

// anyInBloom reports whether the filter may hold some key; true on any
// error (the filter can only prune).
func (ks *KeySet) anyInBloom(t format.Type, bf parquet.BloomFilter) bool {
	check := func(v parquet.Value) bool {
		ok, err := bf.Check(v)
		return ok || err != nil
	}
	switch t {
	case format.Int32:
		for _, k := range ks.sortedInts {
			if k == int64(int32(k)) && check(parquet.Int32Value(int32(k))) {
				return true
			}
		}
		return false
	case format.Int64:
		for _, k := range ks.sortedInts {
			if check(parquet.Int64Value(k)) {
				return true
			}
		}
		return false
	case format.ByteArray:
		for _, k := range ks.sortedStrs {
			if check(parquet.ByteArrayValue([]byte(k))) {
				return true
			}
		}
		return false
	}
	return true
}

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
	pl := &planner{byID: opts.ByFieldID}
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
	defer func() {
		for _, c := range curs {
			if c != nil {
				c.close()
			}
		}
	}()
	var want []byteSpan
	for i, c := range pl.cols {
		if c.node.col >= len(chunks) {
			return nil, fmt.Errorf("%w: missing column chunk %d", ErrCorrupt, c.node.col)
		}
		curs[i] = newSeekCursor(chunks[c.node.col], c.conv, c.node.def, c.node.rep, c.node.path)
		if oi := curs[i].oi; oi != nil {
			var pages []int
			for _, r := range rows {
				if p := curs[i].pageOf(r); len(pages) == 0 || pages[len(pages)-1] != p {
					pages = append(pages, p)
				}
			}
			want = append(want, pageSpans(oi, pages, f.chunkStart(rg, c.node.col))...)
		}
	}
	if len(want) > 0 && len(rows) > 0 {
		sr, err := prefetch(f.pf, want)
		if err != nil {
			return nil, corrupt(err)
		}
		for _, c := range curs {
			c.reader = sr
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
	reader io.ReaderAt // nil: the file's own
	pages  parquet.Pages
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
	started bool
	eof     bool
}

func newSeekCursor(cc parquet.ColumnChunk, conv leafConv, maxDef, maxRep int, path []string) *seekCursor {
	c := &seekCursor{chunk: cc, conv: conv, maxDef: maxDef, maxRep: maxRep, path: path, pageIdx: -1}
	if fcc, ok := cc.(*parquet.FileColumnChunk); ok {
		if oi, err := fcc.OffsetIndex(); err == nil && oi.NumPages() > 0 {
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
	if !c.started || c.oi != nil && c.pageOf(target) > c.pageIdx {
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
		if c.vals[c.pos].RepetitionLevel() == 0 {
			if c.row == target {
				return nil
			}
			c.row++
		}
		c.pos++
	}
}

func (c *seekCursor) seek(target int64) error {
	if c.pages == nil {
		if fcc, ok := c.chunk.(*parquet.FileColumnChunk); ok && c.reader != nil {
			c.pages = fcc.PagesFrom(c.reader)
		} else {
			c.pages = c.chunk.Pages()
		}
	}
	if err := c.pages.SeekToRow(target); err != nil {
		return colErr(c.path, ErrCorrupt, "%v", err)
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
		return colErr(c.path, ErrCorrupt, "%v", err)
	}
	c.page = page
	c.pageIdx++
	n := int(page.NumValues())
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
			return colErr(c.path, ErrCorrupt, "%v", err)
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
